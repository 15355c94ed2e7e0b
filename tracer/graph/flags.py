"""Edges of command-line flags: an argparse flag to the field of its dest, flags generated from
a class's fields, and the sources of a field (flags, constructor arguments). A collaborator of
FlowGraph: it asks the graph only what `FlowQueries` declares, and keeps the generated flags
it has found."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from tracer.extract.facts import MODULE_SCOPE, Arg, Assign, FileFlows, Value
from tracer.graph.file_steps import UNREAD, FileTables
from tracer.graph.steps import Edge, Step, field_class
from tracer.index.index import Index
from tracer.index.resolve import GUESS, MAX_GUESSES, CallTarget, Resolver
from tracer.store.facts import Facts
from tracer.store.step_ids import StepId, field_id, generated_flag_id

FLAG_CALL = "add_argument"
# A generator's add_argument takes a computed name: an f-string, a variable, *names.
GENERATED_FLAG = rb"add_argument\(\s*(?:[fF][\"']|[A-Za-z_*])"


class FlowQueries(Protocol):
    """What the flag edges ask of the flow graph."""

    index: Index
    facts: Facts
    resolver: Resolver
    field_index: dict[str, list[str]]  # field name -> the classes declaring it

    def file(self, path: str) -> FileTables: ...

    def mentioning(self, word: str) -> list[str]: ...

    def edges(self, step_id: StepId, forward: bool) -> list[Edge]: ...

    def field_step(self, klass: str, attr: str) -> StepId: ...

    def calls_to(
        self, path: str, words: set[str], wanted: Callable[[CallTarget], bool]
    ) -> list[int]: ...

    def bindings(
        self,
        target: CallTarget,
        arg: Arg,
        siblings: tuple[Arg, ...] = (),
        keys: frozenset[str] | None = None,
    ) -> list[tuple[StepId, str, float]]: ...

    def splat_keys(self, tables: FileTables, call_id: int, arg: Arg) -> frozenset[str] | None: ...

    def callers(
        self, function: str, within: set[str] | None = None
    ) -> Iterator[tuple[FileTables, int, CallTarget]]: ...


def written_flags(graph: FlowQueries, dest: str) -> Iterator[StepId]:
    """The flags written for DEST (`--learning-rate`, `dest="learning_rate"`),
    found in the files that call `add_argument` and spell it either way."""
    mentioning = graph.mentioning
    spelled = set(mentioning(dest)) | set(mentioning(dest.replace("_", "-")))
    for flag_path in mentioning(FLAG_CALL):
        if flag_path in spelled and dest in graph.facts.names(flag_path).flag_dests:
            for flag_id, _ in graph.file(flag_path).flags.get(dest, []):
                yield flag_id


class FlagEdges:
    """The edges into and out of flags, for one flow graph."""

    def __init__(self, graph: FlowQueries) -> None:
        self.graph = graph
        self.index = graph.index
        # Flags generated from the fields of a set of classes, by field name: (flag, class).
        self.generated: dict[frozenset[str], dict[str, list[tuple[StepId, str]]]] = {}
        self.generated_owner: dict[StepId, str] = {}  # generated flag step -> the field's class
        # The flags each generator call makes, by field name: (flag, class).
        self.by_call: dict[tuple[str, int], dict[str, list[tuple[StepId, str]]]] = {}
        self.filling = 0  # generated_flags at work: what it has found so far may be partial

    def forward(self, tables: FileTables, step: Step) -> Iterator[Edge]:
        """Where the value of the flag STEP goes: the field it sets."""
        owner = self.generated_owner.get(step.id)
        if owner is not None:
            yield Edge(step.id, self.graph.field_step(owner, step.name), "generated_flag", 0.9)
        else:
            yield from self.flag_fields(tables, step)

    def flag_fields(self, tables: FileTables, step: Step) -> Iterator[Edge]:
        """A flag's value lands in the field of the same name; the `default=Class.field`
        of the flag names the class when there is a choice."""
        module = self.index.module_of[tables.path]
        defaults = next((d for sid, d in tables.flags.get(step.name, []) if sid == step.id), ())
        named = set()
        for ref in defaults:
            symbol = self.index.resolve(module, ref.rpartition(".")[0]) if "." in ref else None
            if symbol is not None and symbol.kind == "class":
                named.add(symbol.name)
        candidates = self.graph.field_index.get(step.name, [])
        chosen = [(c, 1.0) for c in candidates if any(c in self.index.mro(n) for n in named)]
        if not chosen:
            local = [c for c in candidates if c.startswith(module + ".")]
            chosen = [(c, 0.9) for c in local]
        if not chosen and 0 < len(candidates) <= MAX_GUESSES:
            chosen = [(c, GUESS) for c in candidates]
        for klass, confidence in chosen:
            path, definition = self.index.classes[klass]
            yield Edge(
                step.id, field_id(path, definition.qualname, step.name), "flag_to_field", confidence
            )

    # -- backward ----------------------------------------------------------------------------

    def field_sources(self, tables: FileTables, step: Step) -> Iterator[Edge]:
        """Flags that set the field, and constructor arguments bound to it."""
        yield from self.flag_sources(step)
        yield from self.construction_sources(step)

    def flag_sources(self, step: Step) -> Iterator[Edge]:
        """Flags that set the field STEP: written for it, or generated from its class."""
        klass = field_class(self.index, step)
        heirs = {klass, *self.index.descendants(klass)}
        names = {h.rpartition(".")[2] for h in heirs}
        for flag_id in written_flags(self.graph, step.name):
            if any(e.dst == step.id for e in self.graph.edges(flag_id, True)):
                yield Edge(flag_id, step.id, "flag_to_field", 1.0)
        for flag_id, owner in self.generated_flags(names).get(step.name, []):
            if owner in heirs:
                yield Edge(flag_id, step.id, "generated_flag", 0.9)

    def construction_sources(self, step: Step) -> Iterator[Edge]:
        """Arguments of constructions of the field STEP's record class (or a subclass) that
        are bound to it."""
        klass = field_class(self.index, step)
        heirs = {klass, *self.index.descendants(klass)}
        names = {h.rpartition(".")[2] for h in heirs}
        mentioning = self.graph.mentioning
        if not any(self.index.is_record(h) for h in heirs):
            return
        # Keyword arguments name the field; only files that spell both are read.
        naming = set().union(*(mentioning(name) for name in names))
        for path in mentioning(step.name):
            if path not in naming:
                continue
            words = names | {"__init__"}
            found = self.graph.calls_to(
                path, words, lambda t: t.function is None and t.klass in heirs
            )
            caller = self.graph.file(path) if found else None
            for call_id in found:
                assert caller is not None
                for target in caller.targets[call_id]:
                    if target.function is not None or target.klass not in heirs:
                        continue
                    siblings = caller.calls[call_id].args
                    for arg, arg_step in caller.arguments(call_id):
                        keys = self.graph.splat_keys(caller, call_id, arg)
                        for dst, kind, confidence in self.graph.bindings(
                            target, arg, siblings, keys
                        ):
                            if dst == step.id:
                                yield Edge(arg_step, step.id, kind, confidence)

    def generated_flags(self, class_names: set[str]) -> dict[str, list[tuple[StepId, str]]]:
        """Flags made from a class's fields by a generator function (one whose
        `add_argument` takes a computed name) called with one of CLASS_NAMES, keyed by field
        name: (flag step, class)."""
        key = frozenset(class_names)
        found = self.generated.get(key)
        if found is not None:
            return found
        generated: dict[str, list[tuple[str, str]]] = {}
        self.generated[key] = generated
        self.filling += 1
        try:
            self.fill_generated(class_names, generated)
        finally:
            self.filling -= 1
        return generated

    def fill_generated(
        self, class_names: set[str], generated: dict[str, list[tuple[StepId, str]]]
    ) -> None:
        naming = set().union(*(self.graph.mentioning(name) for name in class_names))
        # A generator's add_argument takes a computed name: an f-string, a variable, *names.
        for path in self.graph.facts.matching(FLAG_CALL, GENERATED_FLAG):
            module = self.index.module_of[path]
            for scope in sorted(self.graph.facts.names(path).flag_generators):
                if f"{module}.{scope}" not in self.index.functions:
                    continue
                for caller, call_id, _ in self.graph.callers(f"{module}.{scope}", within=naming):
                    for name, flags in self.flags_of_call(caller, call_id).items():
                        generated.setdefault(name, []).extend(flags)

    def flags_of_call(
        self, caller: FileTables, call_id: int
    ) -> dict[str, list[tuple[StepId, str]]]:
        """The flags one generator call makes, by field name (made once per call)."""
        key = (caller.path, call_id)
        found = self.by_call.get(key)
        if found is None:
            found = self.by_call[key] = {}
            self.add_generated(caller, call_id, found)
        return found

    def add_generated(
        self, caller: FileTables, call_id: int, generated: dict[str, list[tuple[StepId, str]]]
    ) -> None:
        call = caller.calls[call_id]
        for arg in call.args:
            for ref in arg.value.refs:
                klass = self.graph.resolver.ref_type(caller.path, call.scope, ref)
                if (
                    klass is None
                    or self.index.resolve(self.index.module_of[caller.path], ref) is None
                ):
                    continue
                fields = list(self.index.fields(klass))
                for merged in self.merged_classes(klass):
                    fields.extend(self.index.fields(merged))
                for owner, definition in fields:
                    step_id = generated_flag_id(caller.path, call_id, definition.name)
                    if step_id not in caller.steps:
                        caller.add(
                            Step(
                                id=step_id,
                                kind="cli_flag",
                                file=caller.path,
                                line=call.line,
                                end_line=call.end_line,
                                symbol=call.scope,
                                code=UNREAD,
                                name=definition.name,
                            ),
                            call.scope,
                        )
                    self.generated_owner[step_id] = owner
                    generated.setdefault(definition.name, []).append((step_id, owner))

    def merged_classes(self, klass: str) -> list[str]:
        """The classes whose fields KLASS's module merges into KLASS's own at import time
        (`K.__annotations__ = {**collect(NAMESPACES), **K.__annotations__}`, then a record
        made again from them): the classes the merged value is read from, through the
        module-level names it reads (`NAMESPACES = [A, B]`), a few assignments back."""
        path, _ = self.index.classes[klass]
        module = self.index.module_of[path]
        short = klass.rpartition(".")[2]
        flows = self.graph.facts.flows(path)
        module_assigns: dict[str, list[Assign]] = {}
        merges = []
        for assign in flows.assigns:
            if assign.scope != MODULE_SCOPE:
                continue
            for target in assign.targets:
                module_assigns.setdefault(target.path, []).append(assign)
                if target.path == f"{short}.__annotations__":
                    merges.append(assign)
        found: dict[str, None] = {}
        seen: set[str] = set()
        pending = [
            (value, MERGE_DEPTH) for assign in merges for value in values_read(flows, assign)
        ]
        while pending:
            value, depth = pending.pop()
            for ref in value.refs:
                symbol = self.index.resolve(module, ref)
                if symbol is not None and symbol.kind == "class" and symbol.name != klass:
                    found[symbol.name] = None
                elif ref not in seen and depth > 0:
                    seen.add(ref)
                    for assign in module_assigns.get(ref, ()):
                        pending.extend((v, depth - 1) for v in values_read(flows, assign))
        return list(found)


MERGE_DEPTH = 3  # module-level assignments followed back from a merge of annotations


def values_read(flows: FileFlows, assign: Assign) -> list[Value]:
    """What ASSIGN reads: its value, its items, and the arguments of the calls in them."""
    found = [assign.value, *assign.items]
    for value in list(found):
        for call_id in value.calls:
            found.extend(arg.value for arg in flows.calls[call_id].args)
    return found
