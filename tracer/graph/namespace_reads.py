"""Flags read out of the namespace their parser returns. A flag whose dest no class of the
tree declares as a field stays in the namespace: `args = parser.parse_args()`, then
`args.port` in that function, or wherever the namespace is handed on (an argument, a return,
`self.args = args`, then `self.args.port`). This module follows the namespace forward from
each parse that returns it, as a whole object, to the reads of the flag's dest out of it:
the namespace is the carrier, and its route from the parse to the read is part of the
chain."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from weakref import WeakKeyDictionary

from tracer.graph import parsed
from tracer.graph.flags import written_flags
from tracer.graph.parsed import entries_first, parse_starts, way_to, whole
from tracer.graph.step_tables import Read
from tracer.graph.steps import PLAIN, TRUSTED, Edge
from tracer.store import step_ids

if TYPE_CHECKING:
    from tracer.graph.file_steps import FileTables
    from tracer.graph.slots import Slots


class FlowGraph(parsed.FlowGraph, Protocol):
    """What namespace reads ask of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    slots: Slots

    def mentioning(self, word: str) -> list[str]: ...

    def mentioning_with(self, word: str, classes: list[str]) -> list[str]: ...


MAX_STEPS = 200  # steps of the namespace's way expanded from one parse
FLAG_READ = "flag_read"  # the edge joining a flag to a read of its dest, by name


@dataclass(frozen=True)
class NamespaceRead:
    """A read of a flag's dest out of the namespace its parser returns (READER), with the
    namespace's route to it: `parsed` first (the flag into the namespace), `read` last."""

    reader: str
    edges: tuple[Edge, ...]


READS: WeakKeyDictionary[FlowGraph, dict[str, tuple[NamespaceRead, ...]]] = WeakKeyDictionary()


def namespace_reads(graph: FlowGraph, flag_id: str) -> tuple[NamespaceRead, ...]:
    """The reads of the flag FLAG_ID's dest out of the namespaces its parser returns, nearest
    first, those of the parse in the module most modules import first (worked out once per
    flag and graph)."""
    cache = READS.setdefault(graph, {})
    found = cache.get(flag_id)
    if found is None:
        found = cache[flag_id] = find_reads(graph, flag_id)
    return found


def find_reads(graph: FlowGraph, flag_id: str) -> tuple[NamespaceRead, ...]:
    dest = graph.step(flag_id).name
    found: dict[str, NamespaceRead] = {}
    for start in entries_first(graph, parse_starts(graph, flag_id)):
        parsed = Edge(flag_id, start, "parsed", 1.0)
        parent: dict[str, Edge | None] = {start: None}
        queue = deque([start])
        expanded = 0
        while queue and expanded < MAX_STEPS:
            current = queue.popleft()
            expanded += 1
            step = graph.step(current)
            if step.kind == "formula":
                continue  # a new value: the namespace ends here
            tables = graph.file(step.file)
            bound = tables.bound.get(current, step.name)
            holder = bound.rpartition(".")[2]
            if "." in bound:
                readers = attribute_reads(graph, tables, current, bound, dest)
            else:
                readers = local_reads(tables, current, bound, dest)
            edges = graph.edges(current, True)
            ways = [[Edge(current, reader, "read", 1.0, dest)] for reader in readers]
            for edge in edges:  # an attribute's readers (`self.args.dest`) are its edges
                named = edge.confidence >= TRUSTED and reads_dest(graph, edge.dst, holder, dest)
                if named or (  # `getattr(args, "dest")`
                    edge.kind in PLAIN and gets(graph, edge.dst, holder, dest)
                ):
                    ways.append([Edge(current, edge.dst, "read", 1.0, dest)])
                elif edge.kind == "local" and spreads(graph, edge.dst, holder):
                    # `f(**vars(args))`: the dest is the keyword of the parameter it fills
                    ways.extend(
                        [edge, Edge(edge.dst, into.dst, "read", 1.0, dest)]
                        for into in graph.edges(edge.dst, True)
                        if into.kind == "arg_to_param" and graph.step(into.dst).name == dest
                    )
            for way in ways:
                reader = way[-1].dst
                if reader not in found:
                    route = (parsed, *way_to(parent, current), *way)
                    found[reader] = NamespaceRead(reader, route)
            for edge in edges:
                if edge.confidence < TRUSTED or edge.dst in parent or not whole(graph, step, edge):
                    continue
                parent[edge.dst] = edge
                queue.append(edge.dst)
    return tuple(found.values())


def local_reads(tables: FileTables, step_id: str, name: str, dest: str) -> list[str]:
    """The steps of STEP_ID's function that read `NAME.DEST` (NAME a local STEP_ID binds or
    a parameter), after it when it is an assignment."""
    step = tables.steps[step_id]
    scope = tables.scope_of[step_id]
    after = step.kind != "param"
    return [
        read.step
        for read in tables.attr_reads.get(dest, [])
        if read.base == name and read.scope == scope and (not after or read.line >= step.line)
    ]


def attribute_reads(
    graph: FlowGraph, tables: FileTables, step_id: str, bound: str, dest: str
) -> list[str]:
    """The steps that read `x.ATTR.DEST` where x is an object of the class whose attribute
    STEP_ID writes (BOUND: `self.ATTR`): `self.args.dest` in its methods."""
    base, _, attr = bound.rpartition(".")
    klass = graph.resolver.ref_type(tables.path, tables.scope_of[step_id], base)
    if klass is None:
        return []
    found = []
    for path in graph.mentioning_with(dest, graph.index.family(klass)):
        there = graph.file(path)
        for read in there.attr_reads.get(dest, []):
            owner, _, name = read.base.rpartition(".")
            if name != attr or not owner:
                continue
            access = Read(read.step, read.scope, owner, read.line)
            if graph.slots.slot_match(path, access, klass, attr, False) >= TRUSTED:
                found.append(read.step)
    return found


def gets(graph: FlowGraph, step_id: str, holder: str, dest: str) -> bool:
    """Does STEP_ID read DEST out of HOLDER by a constant name (`getattr(args, "dest")`)?"""
    tables = graph.file(step_ids.file_of(step_id))
    step = tables.steps[step_id]
    scope = tables.scope_of[step_id]
    rows = graph.facts.rows(tables.path)
    for call_id in rows.callees.get("getattr", ()):
        if rows.call_head(call_id)[0] != scope:
            continue
        call = tables.calls[call_id]
        if not step.line <= call.line <= step.end_line or len(call.args) < 2:
            continue
        first, name = call.args[0].value, call.args[1].value
        if first.refs == (holder,) and not first.calls and name.literal == dest:
            return True
    return False


def spreads(graph: FlowGraph, step_id: str, holder: str) -> bool:
    """Is STEP_ID a call's `**vars(HOLDER)` (or `**HOLDER.__dict__`) argument?"""
    tables = graph.file(step_ids.file_of(step_id))
    if graph.step(step_id).kind != "call_arg" or tables.elements.get(step_id) is not None:
        return False
    for arg, arg_step in tables.arguments(step_ids.call_of(step_id)):
        if arg_step != step_id or arg.star != 2:
            continue
        if arg.value.refs == (f"{holder}.__dict__",) and not arg.value.calls:
            return True
        if len(arg.value.calls) == 1 and not arg.value.refs:
            spread = tables.calls[arg.value.calls[0]]
            return spread.callee == "vars" and [a.value.refs for a in spread.args] == [(holder,)]
    return False


def reads_dest(graph: FlowGraph, step_id: str, holder: str, dest: str) -> bool:
    """Does STEP_ID read DEST out of the object HOLDER names (`args.dest`, `self.args.dest`)?"""
    refs = graph.file(step_ids.file_of(step_id)).refs.get(step_id, ())
    read = f"{holder}.{dest}"
    return any(ref == read or ref.endswith("." + read) for ref in refs)


def flag_read_edges(graph: FlowGraph, flag_id: str) -> list[Edge]:
    """The edges from the flag FLAG_ID to the reads of its dest out of the namespace (each
    joins the two by name: the chain widens it into the namespace's route)."""
    dest = graph.step(flag_id).name
    return [Edge(flag_id, r.reader, FLAG_READ, 1.0, dest) for r in namespace_reads(graph, flag_id)]


def flag_read_sources(graph: FlowGraph, step_id: str, attr: str) -> list[Edge]:
    """The edges into STEP_ID, a read of ATTR out of an object of no known class, from the
    flags of that dest whose namespace it reads."""
    return [
        edge
        for flag_id in written_flags(graph, attr)
        for edge in graph.edges(flag_id, True)
        if edge.kind == FLAG_READ and edge.dst == step_id
    ]


def read_route(graph: FlowGraph, flag_id: str, reader: str) -> tuple[Edge, ...]:
    """The namespace's route from the flag FLAG_ID to READER: () when READER reads none."""
    return next((r.edges for r in namespace_reads(graph, flag_id) if r.reader == reader), ())
