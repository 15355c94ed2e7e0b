"""The targets of a call the resolver names nothing for, found by value: the call graph's own
follower (tracer/index/calls/), asked by the dataflow graph one call at a time, when a search
reaches the call. A function, a bound method or a class is a value like any other: kept in a
dict (`HANDLERS[kind](x)`, a registry filled by a decorator), returned (`make()(x)`), passed
(`run(f)`), chosen by a constant name (`getattr(obj, "m")(x)`, the name given as an
argument), bound in branches (`Pool = A if c else B`): what the callee may hold runs, each
certain, or a guess (0.5) where it may also hold a value nothing names. So the chain and
`sgtrace callgraph` follow calls by one set of rules."""

from __future__ import annotations

import builtins
import re
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from tracer.extract.facts import MODULE_SCOPE, Arg, Call, FunctionDef
from tracer.graph.contents import value_row as value_row_of
from tracer.graph.reads import value_reads
from tracer.graph.steps import Edge, StepRow
from tracer.graph.unit_steps import UNREAD
from tracer.index.calls.answers import in_order
from tracer.index.calls.objects import Objects
from tracer.index.calls.rules import CallRules
from tracer.index.calls.statements import ValueStatements
from tracer.index.calls.values import FunctionValues
from tracer.index.library import KEEPING_NOTHING, PROPERTY_PARTS
from tracer.index.resolve import OPAQUE
from tracer.index.targets import CallTarget
from tracer.store import step_ids
from tracer.store.rows import VALUE_CALLS, value_row
from tracer.versions import HELD

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tracer.graph.file_steps import FileTables
    from tracer.graph.steps import Step
    from tracer.index.index import Index
    from tracer.index.resolve import Resolver
    from tracer.store.facts import Facts

# Edges into a step that reads a value by name (a local, an attribute, a flag's dest).
READS = frozenset({"local", "local_via_call", "attr", "attr_via_call", "read"})
SURE = 0.8  # a call found by name at least this sure passes its values to a parameter
HANDED_ON = 4  # parameters a function's name is followed through (`rpc("f")` -> `dispatch`)


BUILTINS = frozenset(dir(builtins))  # what a name the file never binds stands for


class FlowGraph(Protocol):
    """What this module asks of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    index: Index
    facts: Facts
    resolver: Resolver
    rules: CallRules

    def callers(
        self, function: str, within: set[str] | None = None
    ) -> Iterator[tuple[FileTables, int, CallTarget]]: ...

    def calling_files(
        self, function: str, within: set[str] | None = None
    ) -> tuple[list[str], set[str]]: ...

    def file(self, path: str) -> FileTables: ...

    def step(self, step_id: str) -> Step: ...

    def bound_edges(
        self, tables: FileTables, step_id: str, arg: Arg, targets: Iterable[CallTarget]
    ) -> Iterator[Edge]: ...


class CallValues:
    """Targets of calls found by value, asked per call and remembered (`targets`)."""

    def __init__(self, graph: FlowGraph) -> None:
        self.graph = graph
        self.subclasses: dict[tuple[str, int], tuple[CallTarget, ...]] = {}  # see subclasses_made
        self.made: dict[str, tuple[int, int]] = {}  # argument step -> (call, position)
        # Edges found here going forward, with no twin going backward: (source, destination).
        self.one_way: set[tuple[str, str]] = set()
        self.methods_of: dict[str, list[FunctionDef]] = {}  # class -> its classmethods
        self.holding: dict[str, list[tuple[FileTables, int, CallTarget]]] = {}  # held_callers
        self.new_holding = False  # found any this run (kept by `flush`)
        self.taking: dict[tuple[str, int], list[str]] = {}  # see readers_of
        self.by_scope: dict[str, dict[str, list[int]]] = {}  # see scope_calls
        self.declaring_base: dict[str, list[tuple[str, str]]] = {}  # see declarers

    @cached_property
    def kept_holding(self) -> dict[str, list[tuple[str, int, CallTarget]]]:
        """What `held_callers` found in earlier runs on this snapshot (HELD)."""
        facts = self.graph.facts
        found = facts.cached(HELD, facts.snapshot_key)
        return found if isinstance(found, dict) else {}

    def flush(self) -> None:
        """Keep what `held_callers` found, with what earlier runs found, for the next run."""
        if not self.new_holding:
            return
        kept = dict(self.kept_holding)
        for function, calls in self.holding.items():
            kept[function] = [(tables.path, call_id, target) for tables, call_id, target in calls]
        self.graph.facts.keep(HELD, self.graph.facts.snapshot_key, kept)
        self.new_holding = False

    @cached_property
    def follower(self) -> tuple[ValueStatements, Objects]:
        graph = self.graph
        rules = graph.rules
        values = FunctionValues(rules, whole=False)
        # The call graph's bound on chained questions: a lower one made an answer depend on
        # how deep its sub-questions were first met (a call asked first stayed cut).
        objects = Objects(rules, values, self.sites)
        return ValueStatements(rules, values, objects), objects

    def sites(self, function: str) -> list[tuple[str, Call]]:
        """The calls that run FUNCTION as the dataflow graph finds them by name (surely), and
        the calls of a method on an expression found by value (`get_model(m).create(...)`)."""
        found = [
            (tables.path, tables.calls[call_id])
            for tables, call_id, target in self.graph.callers(function)
            if target.confidence >= SURE
        ]
        found += [
            (tables.path, tables.calls[call_id]) for tables, call_id, _ in self.callers(function)
        ]
        return found

    def callers(self, function: str) -> list[tuple[FileTables, int, CallTarget]]:
        """The calls of FUNCTION, a method, on an expression the resolver does not type
        (`get_model(m).create(...)`), in the files that may call it by name, where the
        follower finds FUNCTION among what the call runs: a question of the follower (what
        a call runs may depend on what calls a function, and so on round)."""
        _, objects = self.follower
        found = objects.answers.ask(
            ("value callers", function), lambda: enumerate(self.find_callers(function))
        )
        graph = self.graph
        return [(graph.file(path), call_id, target) for path, call_id, target in in_order(found)]

    def find_callers(self, function: str) -> Iterator[tuple[str, int, CallTarget]]:
        name = function.rpartition(".")[2]
        if function not in self.graph.index.functions:
            return
        # Only files where the method is called on a call's result or a subscript (`f().m(`,
        # `d[k].m(`): the others' calls of it are found by name.
        pattern = rb"[)\]]\s*\.\s*" + re.escape(name.encode()) + rb"\s*\("
        called = set(self.graph.facts.matching(name, pattern))
        for path in self.graph.calling_files(function)[0]:
            if path not in called:
                continue
            for call_id in self.graph.facts.rows(path).method_calls.get(name, ()):
                for target in self.targets(path, call_id):
                    if target.function == function:
                        yield path, call_id, target

    def targets(self, path: str, call_id: int) -> tuple[CallTarget, ...]:
        """What call CALL_ID of PATH runs, found by value, when the rules name nothing sure
        for it (else nothing: the resolver's targets stand); a question of the follower."""
        _, objects = self.follower
        found = objects.answers.ask(
            ("value targets", path, call_id),
            lambda: enumerate(self.find(path, self.graph.facts.flows(path).calls[call_id])),
        )
        return tuple(in_order(found))

    def find(self, path: str, call: Call) -> tuple[CallTarget, ...]:
        """What the call graph finds CALL runs (`ValueStatements.targets`), in the tree."""
        statements, _ = self.follower
        functions = self.graph.index.functions
        found = statements.targets(path, call)
        if not any(target.function in functions for target in found) and statements.follows(
            path, call, statements.named(path, call)
        ):
            # What the call graph draws as guesses (a method chosen by a name that may be
            # several, ...): each a guess.
            found += statements.guessed_targets(path, call)
        return tuple(
            target for target in found if target.function in functions or target.klass is not None
        )

    def subclasses_made(self, tables: FileTables, call_id: int) -> list[CallTarget]:
        """For `cls(...)` in a classmethod (the resolver: its own class's constructor), the
        constructors of the other classes the follower finds `cls` holds, the subclasses it
        is called on (`get_model(name).create(...)` of a registry's classes)."""
        scope, callee = tables.rows.call_head(call_id)
        if self.graph.resolver.types.class_parameter(tables.path, scope, callee) is None:
            return []
        key = (tables.path, call_id)
        found = self.subclasses.get(key)
        if found is None:
            _, objects = self.follower
            held = objects.callee_objects(tables.path, tables.calls[call_id])
            named = {target.function for target in tables.targets[call_id]}
            found = self.subclasses[key] = tuple(
                target
                for target in objects.value_targets(held)
                if target.function not in named and target.klass is not None
            )
        return list(found)

    def class_callers(self, function: str) -> list[tuple[FileTables, int, CallTarget]]:
        """The `cls(...)` calls in classmethods of a base class that make FUNCTION's class
        (FUNCTION an `__init__`), as `subclasses_made` finds them: the callers going
        backward that `subclasses_made` gives going forward."""
        klass, _, method = function.rpartition(".")
        index = self.graph.index
        if method != "__init__" or klass not in index.classes:
            return []
        found = []
        for owner in index.mro(klass)[1:]:
            if owner not in index.classes:
                continue
            path = index.classes[owner][0]
            for definition in self.classmethods(owner):
                if not definition.params:
                    continue
                tables = self.graph.file(path)
                first = definition.params[0].name
                for call_id in tables.rows.callees.get(first, ()):
                    if tables.rows.call_head(call_id) != (definition.qualname, first):
                        continue
                    for target in self.subclasses_made(tables, call_id):
                        if target.function == function:
                            found.append((tables, call_id, target))
        return found

    def classmethods(self, klass: str) -> list[FunctionDef]:
        """The classmethods KLASS (a class of the tree) defines, remembered."""
        found = self.methods_of.get(klass)
        if found is None:
            path, definition = self.graph.index.classes[klass]
            prefix = definition.qualname + "."
            found = self.methods_of[klass] = [
                function
                for function in self.graph.facts.summaries[path].functions
                if function.is_classmethod
                and function.qualname.startswith(prefix)
                and "." not in function.qualname[len(prefix) :]
            ]
        return found

    # -- the arguments of such calls, as steps ------------------------------------------------

    def into_arguments(self, edges: list[Edge]) -> list[Edge]:
        """For each of EDGES (out of one step) into a step that reads the value only through
        calls the resolver names nothing for: an edge as sure into each argument of those
        calls that reads it, where the follower finds what the call runs."""
        found = []
        gone: list[int] = []  # edges into a call thrown away whose arguments take the value
        for position, edge in enumerate(edges):
            if edge.kind not in READS:
                continue
            tables = self.graph.file(step_ids.file_of(edge.dst))
            discarded = discarded_reads(tables, edge.dst)
            opaque = tables.opaque.get(edge.dst) or discarded
            if not opaque:
                continue
            if edge.kind in ("local", "local_via_call"):
                source = self.graph.file(step_ids.file_of(edge.src))
                name = source.bound.get(edge.src) or source.steps[edge.src].name
                refs = [name] if name in opaque else []
            else:
                attr = "." + (edge.label or self.graph.step(edge.src).name)
                refs = [ref for ref in opaque if ref.endswith(attr)]
            passed = False
            for ref in refs:
                for argument in self.arguments(tables, edge.dst, ref):
                    kind = {"local_via_call": "local", "attr_via_call": "attr"}.get(edge.kind)
                    confidence = edge.confidence / OPAQUE if kind else edge.confidence
                    found.append(
                        replace(edge, dst=argument, kind=kind or edge.kind, confidence=confidence)
                    )
                    self.one_way.add((edge.src, argument))
                    passed = True
            if passed and discarded:
                gone.append(position)
            elif passed and edge.kind in ("local", "attr"):
                # What the call returns is made from its arguments: as sure as a read through a
                # call outside the tree (the value goes on into the call's arguments).
                kind = {"local": "local_via_call", "attr": "attr_via_call"}[edge.kind]
                edges[position] = replace(edge, kind=kind, confidence=edge.confidence * OPAQUE)
        for position in reversed(gone):
            del edges[position]
        return found

    def results_read(self, tables: FileTables, reader: str) -> list[tuple[int, CallTarget]]:
        """The calls the resolver names nothing for whose results READER takes as they are
        (not through another call), each with what the follower finds it runs. Only calls of
        a plain name or an expression (`handler(x)`, `HANDLERS[k](x)`, `make()(x)`): a method
        called by name (`d.get(k)`) is a builtin's or one the resolver types."""
        found = value_row_of(tables, reader)
        if found is None:
            return []
        pairs = []
        for call_id in found[0][VALUE_CALLS]:
            if tables.targets.get(call_id):
                continue
            if "." in tables.rows.call_head(call_id)[1]:
                continue  # `d.get(k)`, `self.method(x)`: a method's, typed by the resolver
            pairs += [(call_id, target) for target in self.targets(tables.path, call_id)]
        return pairs

    def reads_result(self, path: str, call_id: int, reader: str) -> bool:
        """Does READER take the result of call CALL_ID of PATH, a call found by value?"""
        tables = self.graph.file(path)
        return any(call == call_id for call, _ in self.results_read(tables, reader))

    def result_call(self, path: str, reader: str, function: str) -> tuple[str, int] | None:
        """The call found by value that runs FUNCTION whose result READER takes, if any."""
        for call_id, target in self.results_read(self.graph.file(path), reader):
            if target.function == function:
                return path, call_id
        return None

    def held_callers(self, function: str) -> list[tuple[FileTables, int, CallTarget]]:
        """The calls of a plain name or an expression that run FUNCTION found by value
        (`g = scale; g(x)`, `for step in steps: step(x)`, `REGISTRY[k](x)`), in the files
        where FUNCTION's name (its class's, for a constructor), defined or imported there, is
        taken as a value (`value_scopes`; not `module.NAME`) and the file that defines it (where
        a decorator may keep it); a call of a parameter only in a function a call there gives
        the name to (`run(scale)`, one call deep).
        Remembered; the same whatever was asked before (a function kept in one file and
        called in another, where its name is not written, or handed on through two
        parameters, is found going forward only)."""
        found = self.holding.get(function)
        if found is not None:
            return found
        kept = self.kept_holding.get(function)
        if kept is not None:  # found by an earlier run on this snapshot
            found = self.holding[function] = [
                (self.graph.file(path), call_id, target) for path, call_id, target in kept
            ]
            return found
        found = self.holding[function] = []
        self.new_holding = True
        index = self.graph.index
        if function not in index.functions:
            return found
        home, definition = index.functions[function]
        owner, _, name = function.rpartition(".")
        meant = function  # what the name written as a value stands for
        if name == "__init__" and owner in index.classes:
            name, meant = owner.rpartition(".")[2], owner
        method = meant == function and owner in index.classes
        places: dict[str, set[str]] = {}  # file -> scopes where the value is written
        if definition.is_lambda:  # written where it is defined, and nowhere by name
            outer = definition.qualname.rpartition(".")[0]
            places[home] = {outer or ANYWHERE}
        # A method's name is a value of its own in other files only spelled in a string
        # (`getattr(obj, "NAME")`, the name handed to a dispatcher).
        quoting = set(self.graph.facts.matching(name, quoted(name))) if method else set()
        for path in () if definition.is_lambda else self.graph.facts.mentioning(name):
            if path == home or (not method and binds(index, path, name, meant)):
                places[path] = self.value_scopes(path, name, body_only=method)
            elif path in quoting:
                places[path] = self.value_scopes(path, name, body_only=True, quoted_only=True)
        given = self.given_to(places, name)
        decorators = list(definition.decorators)
        if owner in index.classes:
            decorators += index.classes[owner][1].decorators
        module = index.module_of[home]
        if any(not keeps_nothing(index, module, d) for d in decorators):
            # The decorator may keep it in a global of its file.
            places.setdefault(home, set()).add(ANYWHERE)
        for given_function in given:
            given_path, given_definition = index.functions[given_function]
            places.setdefault(given_path, set()).add(given_definition.qualname)
        if meant != function:  # a constructor: where an object of its class is declared
            for path, klass in self.declaring(meant):
                places.setdefault(path, set()).add(klass)
        resolver = self.graph.resolver
        for path in sorted(places):
            scopes = places[path]
            if not scopes:
                continue
            rows = self.graph.facts.rows(path)
            tables = self.graph.file(path)
            anywhere = ANYWHERE in scopes
            for call_id in range(len(self.graph.facts.flows(path).calls)):
                scope, callee = rows.call_head(call_id)
                if "." in callee:
                    continue  # a method by name: the resolver's, or `callers`
                if not anywhere and not within(scope, scopes):
                    continue
                caller = resolver.function(path, scope)
                if (
                    callee
                    and caller is not None
                    and caller[0] not in given
                    and any(p.name == callee for p in caller[1].params)
                ):
                    continue  # `f(x)` of a parameter f no call gives the name to
                if callee and self.outside(path, scope, callee):
                    continue
                if tables.targets.get(call_id):
                    continue
                for target in self.targets(path, call_id):
                    if target.function == function:
                        found.append((tables, call_id, target))
        return found

    def declaring(self, klass: str) -> list[tuple[str, str]]:
        """The classes (file, qualname) that declare an attribute to hold an object of KLASS
        or of a class it derives from (`self.pool: PoolBase`): their methods may make one
        by a call of a value nothing names (see `Objects.declared_result`)."""
        index = self.graph.index
        return [
            place
            for base in index.mro(klass)
            if base in index.classes
            for place in self.declarers(base)
        ]

    def declarers(self, klass: str) -> list[tuple[str, str]]:
        """`declaring` of KLASS alone, not its bases; remembered (the subclasses of one base
        ask it each)."""
        found = self.declaring_base.get(klass)
        if found is not None:
            return found
        found = self.declaring_base[klass] = []
        index = self.graph.index
        short = klass.rpartition(".")[2]
        for path in self.graph.facts.mentioning(short):
            module = index.module_of[path]
            for definition in self.graph.facts.summaries[path].classes:
                if any(
                    short in (f.annotation or "")
                    and index.annotation_class(module, f.annotation) == klass
                    for f in (*definition.declared, *definition.fields)
                ):
                    found.append((path, definition.qualname))
        return found

    def outside(self, path: str, scope: str, callee: str) -> bool:
        """Does the plain name CALLEE, called in SCOPE, name code outside the tree (an
        imported library function; a builtin, `ValueError`, `len`, that the file binds
        nowhere), no local of SCOPE rebinding it?"""
        if self.graph.rules.imported(path, callee) is None:
            return callee in BUILTINS and not self.binds_anywhere(path, callee)
        return callee not in self.graph.resolver.assigns(path, scope)

    def binds_anywhere(self, path: str, name: str) -> bool:
        """Does the file PATH bind NAME: a parameter, an assignment, a field, a `def`, a
        `class`?"""
        summary = self.graph.facts.summaries[path]
        return (
            name in self.graph.facts.names(path).binders
            or any(f.name == name for f in summary.functions)
            or any(c.name == name for c in summary.classes)
        )

    def given_to(self, places: dict[str, set[str]], name: str) -> set[str]:
        """The functions of the tree the calls in PLACES (file -> scopes) give NAME to as an
        argument (`run(scale)`, `rpc("scale")`): a parameter of theirs may hold it; and the
        functions those hand that parameter on to (`dispatch(obj, name)`), up to
        `HANDED_ON` calls deep."""
        found: set[str] = set()
        handed: list[tuple[str, str]] = []  # (function, the parameter given the name)
        for path, scopes in sorted(places.items()):
            if not scopes:
                continue
            rows = self.graph.facts.rows(path)
            calls = self.graph.facts.flows(path).calls
            everywhere = ANYWHERE in scopes
            for call_id in range(len(calls)):
                if not everywhere and not within(rows.call_head(call_id)[0], scopes):
                    continue
                for arg in calls[call_id].args:
                    if name in arg.value.refs or arg.value.literal == name:
                        handed += self.parameters_given(path, call_id, arg)
        for _ in range(HANDED_ON):
            given = [(f, p) for f, p in dict.fromkeys(handed) if f not in found]
            found.update(function for function, _ in given)
            handed = []
            for function, param in given:
                path, definition = self.graph.index.functions[function]
                calls = self.graph.facts.flows(path).calls
                for call_id in self.scope_calls(path).get(definition.qualname, ()):
                    for arg in calls[call_id].args:
                        if arg.value.refs == (param,) and not arg.value.calls:
                            handed += self.parameters_given(path, call_id, arg)
        return found

    def scope_calls(self, path: str) -> dict[str, list[int]]:
        """The calls of PATH by the scope they are written in; remembered."""
        found = self.by_scope.get(path)
        if found is None:
            rows = self.graph.facts.rows(path)
            found = self.by_scope[path] = {}
            for call_id in range(len(self.graph.facts.flows(path).calls)):
                found.setdefault(rows.call_head(call_id)[0], []).append(call_id)
        return found

    def parameters_given(self, path: str, call_id: int, arg: Arg) -> list[tuple[str, str]]:
        """The parameters of the functions call CALL_ID of PATH runs that ARG is bound to."""
        found = []
        for target in self.graph.file(path).targets.get(call_id) or ():
            if target.function is None or target.function not in self.graph.index.functions:
                continue
            params = self.graph.index.functions[target.function][1].params
            position = None if arg.position is None else arg.position + int(target.bound)
            bound = [
                param.name
                for i, param in enumerate(params)
                if not arg.star
                and param.kind in ("positional", "keyword_only")
                and (param.name == arg.keyword or (arg.keyword is None and i == position))
            ]
            # (Spread, or gathered by `*args`/`**kwargs`: the function holds it, no parameter
            # of its own name hands it on.)
            found += [(target.function, name) for name in bound or [""]]
        return found

    def value_scopes(
        self, path: str, name: str, body_only: bool = False, quoted_only: bool = False
    ) -> set[str]:
        """The scopes of PATH where NAME is written as a value, not called, defined, imported,
        typed, a base class or an attribute's last name (`g = NAME`, `run(NAME)`, `[NAME,
        other]`, `{"k": NAME}`, `return NAME`, `A if c else NAME`, or spelled in a string in a
        function: `getattr(obj, "NAME")`): the innermost function around each place
        (MODULE_SCOPE outside every function; the functions that read the global it is
        assigned to, or ANYWHERE). BODY_ONLY: the bare name counts outside every function
        only (a method's name is a value of its own only in its class's body: in a function
        the bare name is another binding; spelled in a string it names the method there too).
        QUOTED_ONLY: only the name spelled in a string (a file where the bare name is another
        binding's)."""
        source = self.graph.facts.snapshot.read(path)
        summary = self.graph.facts.summaries[path]
        imported = [i.line for i in summary.imports if i.alias == name]
        lines = source.split(b"\n") if imported else []
        found: set[str] = set()
        line, counted = 1, 0
        word = re.compile(rb"(?<![\w.])" + re.escape(name.encode()) + rb"(?!\w)")
        prose: list[tuple[int, int]] | None = None  # docstrings and other triple-quoted text
        for match in word.finditer(source):
            at, end = match.span()
            start = source.rfind(b"\n", 0, at) + 1
            hash_at = source.find(b"#", start, at)
            if hash_at >= 0 and not QUOTES.search(source, start, hash_at):
                continue  # in a comment (a `#` after a quote may be in a string: kept)
            quoted = (
                source[at - 1 : at] in (b"'", b'"') and source[end : end + 1] == source[at - 1 : at]
            )
            if quoted_only and not quoted:
                continue
            if not quoted and (
                not VALUE_END.match(source, end)
                or IMPORT_LINE.match(source, start)
                or CLASS_HEADER.match(source, start)
            ):
                continue  # called, imported, or a base class (`class Mock(NAME):`)
            if prose is None:
                prose = [m.span() for m in TRIPLE_QUOTED.finditer(source)]
            if any(first < at < last for first, last in prose):
                continue  # a word of a docstring
            line += source.count(b"\n", counted, at)
            counted = at
            if any(
                first <= line and not any(b")" in text for text in lines[first - 1 : line - 1])
                for first in imported
            ):
                continue  # `from m import (\n    NAME,\n)`
            if not quoted and ANNOTATION.search(source, start, at):
                continue  # `x: NAME,`, `Optional[NAME]`, `-> NAME`: a type, not a value
            inner = summary.function_at(line)
            if inner is not None and body_only and not quoted:
                continue
            if inner is not None:
                found.add(inner.qualname)
            elif not quoted:  # (a name listed at module level, `__all__`, is not fetched)
                found |= self.global_readers(path, line, source) or {ANYWHERE}
        return found

    def global_readers(self, path: str, line: int, source: bytes) -> set[str]:
        """The functions of PATH that mention a global assigned by the statement at LINE
        (`HANDLERS = {"a": scale}`), and the module itself; nothing when none is."""
        flows = self.graph.facts.flows(path)
        names = [
            name
            for name, indexes in self.graph.resolver.assigns(path, MODULE_SCOPE).items()
            if any(flows.assigns[i].line <= line <= flows.assigns[i].end_line for i in indexes)
        ]
        if not names:
            return set()
        mention = re.compile(
            rb"(?<![\w.])(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")(?!\w)"
        )
        functions = self.graph.facts.summaries[path].functions
        return {MODULE_SCOPE} | {
            f.qualname for f in functions if mention.search(source, f.start_byte, f.end_byte)
        }

    def readers_of(self, tables: FileTables, call_id: int) -> list[str]:
        """The steps that take the result of call CALL_ID (found by value) as it is."""
        key = (tables.path, call_id)
        found = self.taking.get(key)
        if found is None:
            scope = tables.rows.call_head(call_id)[0]
            tables.ensure(tables.unit_of(scope))
            found = self.taking[key] = [
                step_id
                for step_id in list(tables.steps)
                if tables.scope_of.get(step_id) == scope
                and any(call == call_id for call, _ in self.results_read(tables, step_id))
            ]
        return found

    def returned_to(self, function: str) -> Iterator[tuple[FileTables, str, CallTarget]]:
        """The steps that take the result of a call found by value that runs FUNCTION
        (`held_callers`), each with the call's target."""
        for tables, call_id, target in self.held_callers(function):
            for reader in self.readers_of(tables, call_id):
                yield tables, reader, target

    def arguments(self, tables: FileTables, reader: str, name: str) -> list[str]:
        """The arguments that read NAME of the calls found by value whose results READER
        reads (READER reads NAME only through them: the calls the resolver names nothing
        for), each a step made the first time it is asked for."""
        found = []
        for call_id in calls_read(tables, reader):
            if tables.targets.get(call_id):
                continue  # the resolver's: its arguments are steps already
            args = tables.calls[call_id].args
            reading = [i for i, arg in enumerate(args) if name in arg.value.refs]
            if reading and self.targets(tables.path, call_id):
                found += [self.argument(tables, call_id, i) for i in reading]
        return found

    def argument_pairs(self, tables: FileTables, call_id: int) -> list[tuple[Arg, str]]:
        """The arguments of call CALL_ID, found by value, each with its step (made now);
        none when the follower finds nothing it runs."""
        if not self.targets(tables.path, call_id):
            return []
        args = tables.calls[call_id].args
        return [(arg, self.argument(tables, call_id, i)) for i, arg in enumerate(args)]

    def argument(self, tables: FileTables, call_id: int, position: int) -> str:
        """The step of argument POSITION of call CALL_ID (found by value), made once: an
        argument's step as the unit's build makes one for a call it resolves."""
        step_id = step_ids.argument_id(tables.path, call_id, position)
        if step_id in self.made:
            return step_id
        call = tables.calls[call_id]
        arg = call.args[position]
        name = arg.keyword or ""
        step = StepRow(
            step_id, "call_arg", tables.path, arg.line, arg.end_line, call.scope, UNREAD, name
        )
        refs, opaque, results = value_reads(
            value_row(arg.value), (), tables.targets.get, tables.calls
        )
        tables.add(step, call.scope)
        tables.refs[step_id] = refs
        tables.opaque[step_id] = opaque
        tables.results[step_id] = results
        self.made[step_id] = (call_id, position)
        return step_id

    def bind(self, tables: FileTables, step_id: str) -> Iterator[Edge]:
        """The edges from an argument made here to what it is bound to in each target."""
        call_id, position = self.made[step_id]
        arg = tables.calls[call_id].args[position]
        for edge in self.graph.bound_edges(
            tables, step_id, arg, self.targets(tables.path, call_id)
        ):
            self.one_way.add((edge.src, edge.dst))
            yield edge


ANYWHERE = "*"  # a value scope: the whole file (written at module level, in no global known)
# What follows a name written as a value, and a line that imports names (see `value_scopes`).
VALUE_END = re.compile(rb"[ \t]*(?:[,)\]};]|\r?\n|$| if\b| else\b)")
IMPORT_LINE = re.compile(rb"[ \t]*(?:from|import)\b")
TRIPLE_QUOTED = re.compile(rb"(?s)(\"\"\"|\'\'\').*?\1")
QUOTES = re.compile(rb"[\"']")
CLASS_HEADER = re.compile(rb"[ \t]*class\s+\w+\s*\(")  # a base class is no value called
# What comes before a name written in a type annotation: `x: `, `-> `, `Optional[`, `A | `.
ANNOTATION = re.compile(rb"(?:\w\s*:|->|\w\[|\|)\s*$")


def binds(index: Index, path: str, name: str, meant: str) -> bool:
    """Does PATH import NAME as MEANT (a function or class of the tree)?"""
    module = index.module_of[path]
    for imported in index.summaries[path].imports:
        if imported.alias == name:
            symbol = index.resolve(module, name)
            return symbol is not None and symbol.name == meant
    return False


def keeps_nothing(index: Index, module: str, decorator: str) -> bool:
    """Is DECORATOR (as written in MODULE, arguments dropped) one that keeps the function it
    decorates nowhere but in the name it binds (`@property`, `@functools.cache`)?"""
    if decorator.rpartition(".")[2] in PROPERTY_PARTS and "." in decorator:
        return True
    symbol = index.resolve(module, decorator)
    if symbol is None and decorator in BUILTINS:  # bound nowhere in the module: the builtin
        return f"<builtin>.{decorator}" in KEEPING_NOTHING
    return symbol is not None and symbol.kind == "external" and symbol.name in KEEPING_NOTHING


def quoted(name: str) -> bytes:
    """A pattern of NAME spelled alone in a string (`"NAME"`, `'NAME'`)."""
    word = re.escape(name.encode())
    return rb"(?:\"" + word + rb"\"|'" + word + rb"')"


def within(scope: str, scopes: set[str]) -> bool:
    """Is SCOPE one of SCOPES or nested in one (a closure sees its function's locals)?"""
    return any(scope == s or scope.startswith(s + ".") for s in scopes)


def discarded_reads(tables: FileTables, step_id: str) -> tuple[str, ...]:
    """The names STEP_ID reads when it is a call whose result is thrown away and the
    resolver names nothing for it (`handler(x)`: x goes into what the call runs, not past it)."""
    if not step_ids.is_discarded_call(step_id) or tables.targets.get(step_ids.call_of(step_id)):
        return ()
    return tuple(tables.refs.get(step_id, ()))


def calls_read(tables: FileTables, reader: str) -> list[int]:
    """The calls whose results READER takes, and the calls inside their arguments (a call
    of the tree stops there: what it passes on is bound by its arguments' steps)."""
    if step_ids.is_discarded_call(reader):
        pending = [step_ids.call_of(reader)]  # a call whose result is thrown away
    else:
        found = value_row_of(tables, reader)
        pending = list(found[0][VALUE_CALLS]) if found is not None else []
    calls: list[int] = []
    while pending:
        call_id = pending.pop()
        calls.append(call_id)
        if not tables.targets.get(call_id):
            for arg in tables.calls[call_id].args:
                pending.extend(arg.value.calls)
            pending.extend(tables.calls[call_id].receiver.calls)
    return sorted(set(calls))
