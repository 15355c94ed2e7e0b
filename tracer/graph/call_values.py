"""The targets of a call the resolver names nothing for, found by value: the call graph's own
follower (tracer/index/calls/), asked by the dataflow graph one call at a time, when a search
reaches the call. A function, a bound method or a class is a value like any other: kept in a
dict (`HANDLERS[kind](x)`, a registry filled by a decorator), returned (`make()(x)`), passed
(`run(f)`), chosen by a constant name (`getattr(obj, "m")(x)`, the name given as an
argument), bound in branches (`Pool = A if c else B`): what the callee may hold runs, each
certain, or a guess (0.5) where it may also hold a value nothing names. So the chain and
`sgtrace callgraph` follow calls by one set of rules."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from tracer.extract.facts import Arg, Call, FunctionDef
from tracer.graph.contents import value_row as value_row_of
from tracer.graph.reads import value_reads
from tracer.graph.steps import Edge, StepRow
from tracer.graph.unit_steps import UNREAD
from tracer.index.calls.objects import Objects
from tracer.index.calls.rules import CallRules
from tracer.index.calls.statements import ValueStatements
from tracer.index.calls.values import FunctionValues
from tracer.index.resolve import OPAQUE
from tracer.index.targets import CallTarget
from tracer.store import step_ids
from tracer.store.rows import VALUE_CALLS, value_row

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tracer.graph.file_steps import FileTables
    from tracer.graph.steps import Step
    from tracer.index.index import Index
    from tracer.index.resolve import Resolver
    from tracer.store.facts import Facts

# Edges into a step that reads a value by name (a local, an attribute, a flag's dest).
READS = frozenset({"local", "local_via_call", "attr", "attr_via_call", "flag_read"})
SURE = 0.8  # a call found by name at least this sure passes its values to a parameter
DEPTH = 8  # questions the follower chains for one call, at most (the call graph's: 24)


class FlowGraph(Protocol):
    """What this module asks of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    index: Index
    facts: Facts
    resolver: Resolver

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
        self.known: dict[tuple[str, int], tuple[CallTarget, ...]] = {}
        self.subclasses: dict[tuple[str, int], tuple[CallTarget, ...]] = {}  # see subclasses_made
        self.made: dict[str, tuple[int, int]] = {}  # argument step -> (call, position)
        # Edges found here going forward, with no twin going backward: (source, destination).
        self.one_way: set[tuple[str, str]] = set()
        self.methods_of: dict[str, list[FunctionDef]] = {}  # class -> its classmethods
        self.calling: dict[str, list[tuple[FileTables, int, CallTarget]]] = {}  # see callers
        # Calls found by value whose results a step takes, met so far: (path, call) -> steps.
        self.readers: dict[tuple[str, int], list[str]] = {}

    @cached_property
    def follower(self) -> tuple[ValueStatements, Objects]:
        graph = self.graph
        rules = CallRules(graph.index, graph.facts, graph.resolver)
        values = FunctionValues(rules, whole=False)
        objects = Objects(rules, values, self.sites, DEPTH)
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
        follower finds FUNCTION among what the call runs; remembered."""
        found = self.calling.get(function)
        if found is not None:
            return found
        found = self.calling[function] = []
        name = function.rpartition(".")[2]
        if function not in self.graph.index.functions:
            return found
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
                        found.append((self.graph.file(path), call_id, target))
        return found

    def targets(self, path: str, call_id: int) -> tuple[CallTarget, ...]:
        """What call CALL_ID of PATH runs, found by value, when the rules name nothing sure
        for it (else nothing: the resolver's targets stand)."""
        key = (path, call_id)
        found = self.known.get(key)
        if found is None:
            self.known[key] = ()  # asked again while answered: nothing yet
            found = self.known[key] = self.find(path, self.graph.facts.flows(path).calls[call_id])
        return found

    def find(self, path: str, call: Call) -> tuple[CallTarget, ...]:
        """What the call graph finds CALL runs (`ValueStatements.targets`), in the tree."""
        statements, _ = self.follower
        functions = self.graph.index.functions
        return tuple(
            target
            for target in statements.targets(path, call)
            if target.function in functions or target.klass is not None
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
        (not through another call), each with what the follower finds it runs; each such
        call is remembered with READER (see `returned_to`). Only calls of a plain name or an
        expression (`handler(x)`, `HANDLERS[k](x)`, `make()(x)`): a method called by name
        (`d.get(k)`) is a builtin's or one the resolver types."""
        found = value_row_of(tables, reader)
        if found is None:
            return []
        pairs = []
        for call_id in found[0][VALUE_CALLS]:
            if tables.targets.held(call_id):
                continue
            if "." in tables.rows.call_head(call_id)[1]:
                continue  # `d.get(k)`, `self.method(x)`: a method's, typed by the resolver
            targets = self.targets(tables.path, call_id)
            if targets:
                self.note_reader(tables.path, call_id, reader)
                pairs += [(call_id, target) for target in targets]
        return pairs

    def note_reader(self, path: str, call_id: int, reader: str) -> None:
        readers = self.readers.setdefault((path, call_id), [])
        if reader not in readers:
            readers.append(reader)

    def reads_result(self, path: str, call_id: int, reader: str) -> bool:
        """Does READER take the result of call CALL_ID of PATH, a call found by value?"""
        return reader in self.readers.get((path, call_id), ())

    def result_call(self, path: str, reader: str, function: str) -> tuple[str, int] | None:
        """The call found by value that runs FUNCTION whose result READER takes, if met."""
        for (where, call_id), readers in self.readers.items():
            held = self.known.get((where, call_id), ())
            if where == path and reader in readers and any(t.function == function for t in held):
                return where, call_id
        return None

    def met_callers(self, function: str) -> list[tuple[FileTables, int, CallTarget]]:
        """The calls found by value met so far that run FUNCTION (`HANDLERS[mode](x)` once a
        search has asked what it runs), each with its target."""
        return [
            (self.graph.file(path), call_id, target)
            for (path, call_id), targets in self.known.items()
            for target in targets
            if target.function == function
        ]

    def returned_to(self, function: str) -> Iterator[tuple[FileTables, str, CallTarget]]:
        """The steps that take the result of a call found by value that runs FUNCTION, among
        the calls met so far (a value that goes into such a call's argument comes back out
        of its result), each with the call's target."""
        for (path, call_id), readers in self.readers.items():
            for target in self.known.get((path, call_id), ()):
                if target.function == function:
                    tables = self.graph.file(path)
                    for reader in readers:
                        yield tables, reader, target

    def arguments(self, tables: FileTables, reader: str, name: str) -> list[str]:
        """The arguments that read NAME of the calls found by value whose results READER
        reads (READER reads NAME only through them: the calls the resolver names nothing
        for), each a step made the first time it is asked for."""
        found = []
        row = value_row_of(tables, reader)
        direct = set(row[0][VALUE_CALLS]) if row is not None else set()
        for call_id in calls_read(tables, reader):
            if tables.targets.get(call_id):
                continue  # the resolver's: its arguments are steps already
            args = tables.calls[call_id].args
            reading = [i for i, arg in enumerate(args) if name in arg.value.refs]
            if reading and self.targets(tables.path, call_id):
                found += [self.argument(tables, call_id, i) for i in reading]
                if call_id in direct:
                    self.note_reader(tables.path, call_id, reader)
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
            value_row(arg.value), (), tables.targets.held, tables.calls
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


def discarded_reads(tables: FileTables, step_id: str) -> tuple[str, ...]:
    """The names STEP_ID reads when it is a call whose result is thrown away and the
    resolver names nothing for it (`handler(x)`: x goes into what the call runs, not past it)."""
    where = step_ids.address(step_id)
    if where.kind != "c" or "." in step_id.rpartition("#")[2]:
        return ()
    if tables.targets.held(where.number):
        return ()
    return tuple(tables.refs.get(step_id, ()))


def calls_read(tables: FileTables, reader: str) -> list[int]:
    """The calls whose results READER takes, and the calls inside their arguments (a call
    of the tree stops there: what it passes on is bound by its arguments' steps)."""
    where = step_ids.address(reader)
    if where.kind == "c" and "." not in reader.rpartition("#")[2]:
        pending = [where.number]  # a call whose result is thrown away
    else:
        found = value_row_of(tables, reader)
        pending = list(found[0][VALUE_CALLS]) if found is not None else []
    calls: list[int] = []
    while pending:
        call_id = pending.pop()
        calls.append(call_id)
        if not tables.targets.held(call_id):
            for arg in tables.calls[call_id].args:
                pending.extend(arg.value.calls)
            pending.extend(tables.calls[call_id].receiver.calls)
    return sorted(set(calls))
