"""The carrier route of a value kept inside an object: where a spine step stores a value in an
object's attribute (a record's field filled by a constructor, `self.f = v`) and a later step
reads it back (`config.f`, `self.settings.f`), the steps the object itself took in
between: where it was made, the locals, arguments, parameters, returns and attributes that
held it, up to the read.

The graph joins such a store to such a read by the attribute's name and the reader's type
(an `attr` edge). This module looks for the object's own route behind that edge: backward
from the object the reader reads the attribute of, along the edges that carry a whole value
(never through a formula), to a step that holds the stored object (the constructor call that
filled the field, or any object of the storing class, or `self` in one of its methods). The
search is bounded; where no route is found within the bound, the spine keeps the name-joined
step (its reason says so)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tracer.graph.bags import fillings, read_by_name, receiver_sources
from tracer.graph.objects import constructions, object_sources, route_back, self_class
from tracer.graph.parsed import FlagRoute, flag_route
from tracer.graph.steps import FLAG_EDGES, TRUSTED, Edge, field_class, pairs_of
from tracer.store import step_ids
from tracer.trace.processes import in_process

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph

JUMPS = frozenset({"attr", "attr_via_call"})  # a value joined to its read by name and type

Edges = dict[tuple[str, str, str], Edge]


def with_carriers(graph: FlowGraph, spine: list[str], edges: Edges) -> list[str]:
    """SPINE with each name-joined store -> read step widened into the object's route."""
    if len(spine) < 2:
        return spine
    # The spine's pairs as they are before the routes found below add their edges.
    kept = pairs_of(edges)
    links = {pair: list(kept.get(pair, ())) for pair in zip(spine, spine[1:], strict=False)}
    widened = [spine[0]]
    record: tuple[str, str] | None = None  # the last flag and the field it set, on the way
    for before, store, read in zip([None, *spine], spine, spine[1:], strict=False):
        joined = links.get((store, read), [])
        flags = [e.confidence for e in joined if e.kind in FLAG_EDGES]
        if flags:
            record = (store, read)
            widened.extend(namespace_steps(graph, store, read, max(flags), edges))
            widened.append(read)
            continue
        if not joined or not all(e.kind in JUMPS for e in joined):
            widened.append(read)
            continue
        into = links.get((before, store), []) if before is not None else []
        # A field filled by a constructor argument, or set by a flag: the object made there,
        # or from the parsed flags (see holder_test).
        filled = any(e.kind == "arg_to_field" or e.kind in FLAG_EDGES for e in into)
        route = carrier_route(graph, before if filled else None, store, read, edges, record)
        widened.extend(route)
        widened.append(read)
    return widened


def namespace_steps(
    graph: FlowGraph, flag: str, field: str, confidence: float, edges: Edges
) -> list[str]:
    """Between a flag and the field it sets (joined by name, with CONFIDENCE), the steps of
    the namespace its parser returns, up to the constructor's argument that copies it into
    the field (see `tracer.graph.parsed`); [] when that way is not found. Its edges join
    EDGES, the copy into the field as sure as the name join."""
    step = graph.step(field)
    if step.kind != "field":
        return []
    klass = field_class(graph.index, step)
    found = flag_route(graph, flag, field, klass)
    if found is None:
        return []
    *way, copied = found.edges
    for edge in (*way, replace(copied, confidence=confidence)):
        edges[(edge.src, edge.dst, edge.kind)] = edge
    return [edge.dst for edge in way]


def carrier_route(
    graph: FlowGraph,
    filled_by: str | None,
    store: str,
    read: str,
    edges: Edges,
    record: tuple[str, str] | None = None,
) -> list[str]:
    """The steps the object took from where STORE put the value in it to where READ takes
    it out (both excluded; the two are joined by name), or [] when no route is found.
    FILLED_BY is the constructor argument that filled STORE, a record's field, if one did;
    RECORD the flag and field the value came through before (see holder_test). The route's
    edges join EDGES."""
    found = carrier_edges(graph, filled_by, store, read, record)
    if not found:
        return []
    for edge in found:
        edges[(edge.src, edge.dst, edge.kind)] = edge
    return [edge.dst for edge in found[:-1]]


Record = tuple[str, str] | None  # a flag and the field it set, on the way to a store


def carrier_edges(
    graph: FlowGraph, filled_by: str | None, store: str, read: str, record: Record = None
) -> list[Edge]:
    """The edges of the object's route from STORE to READ, `store` edge first and `read`
    edge last, or [] when there is none (see carrier_route). A trace asks for one join many
    times (the spine's search, each route, the checks of matched returns): remembered."""
    return graph.remembered(
        "carrier route",
        (filled_by, store, read, record),
        lambda: find_route(graph, filled_by, store, read, record),
    )


def find_route(
    graph: FlowGraph, filled_by: str | None, store: str, read: str, record: Record
) -> list[Edge]:
    attr = graph.step(store).name
    holds = holder_test(graph, filled_by, store, record)
    if holds is None:
        return []
    sources = [e for e in object_sources(graph, read, attr) if e.confidence >= TRUSTED]
    route = route_back(graph, [e.src for e in sources], holds) if sources else []
    if not route:
        classes = record_classes(graph, filled_by, store)
        return bag_route(graph, holds, classes, filled_by, store, read, attr)
    if len(route) == 1 and self_class(graph, route[0].dst) is not None:
        return []  # `self.f` read in a method of the storing class: the same object
    first, last = route[0].dst, route[-1].dst
    return [
        *into_holder(graph, filled_by, store, first, attr),
        *route[1:],
        Edge(last, read, "read", 1.0, attr),
    ]


def into_holder(
    graph: FlowGraph, filled_by: str | None, store: str, holder: str, attr: str
) -> list[Edge]:
    """From STORE into the object HOLDER holds: the `store` edge, into the step taking the
    object's construction where a flag (FILLED_BY) filled the field STORE and the object was
    made from the parsed flags in a function the namespace is handed to (`return cls(...)`),
    then that object's way to HOLDER; else straight into HOLDER."""
    found = flagged_record(graph, filled_by, store)
    made = found.made.get(holder, ()) if found is not None else ()
    return [Edge(store, made[0].src if made else holder, "store", 1.0, attr), *made]


def flagged_record(graph: FlowGraph, filled_by: str | None, store: str) -> FlagRoute | None:
    """Where a flag (FILLED_BY) set the field STORE: its value's way into the object made
    from the parsed flags (see `flag_route`); None otherwise or when none is found."""
    step = graph.step(store)
    if filled_by is None or step.kind != "field" or graph.step(filled_by).kind != "cli_flag":
        return None
    return flag_route(graph, filled_by, store, field_class(graph.index, step))


def holder_test(
    graph: FlowGraph, filled_by: str | None, store: str, record: Record = None
) -> Callable[[str], bool] | None:
    """Does a step hold the object STORE put its value in? For a field filled by a
    constructor argument (FILLED_BY), the object that call made; for a field or `self.f = v`
    of a class otherwise, any object of that class (made there, or `self` in its methods).
    A `self.f = v` in a method of the class of RECORD's field, where the value came from
    that flag's field, is kept in the same object: the one made from the parsed flags."""
    step = graph.step(store)
    tables = graph.file(step.file)
    if step.kind == "field":
        klass = field_class(graph.index, step)
        if filled_by is not None and graph.step(filled_by).kind == "cli_flag":
            # A flag's value is in the objects made from the parsed flags, not in every
            # object of the class (one a test or another entry point makes).
            found = flag_route(graph, filled_by, store, klass)
            return found.holders.__contains__ if found is not None else None
        if filled_by is not None:
            made_at = (step_ids.file_of(filled_by), step_ids.call_of(filled_by))

            def made_there(step_id: str) -> bool:
                return step_ids.file_of(step_id) == made_at[0] and any(
                    call_id == made_at[1] for call_id, _ in constructions(graph, step_id, TRUSTED)
                )

            return made_there
    else:
        target = tables.bound.get(store, "")
        base = target.rpartition(".")[0]
        if base != "self":
            return None
        found = graph.resolver.self_class(tables.path, tables.scope_of[store])
        if found is None:
            return None
        klass = found
        if record is not None:
            flag, field = record
            owner = field_class(graph.index, graph.step(field))
            if owner in graph.index.family(klass):
                parsed = flag_route(graph, flag, field, owner)
                if parsed is not None:
                    return parsed.holders.__contains__
    family = set(graph.index.family(klass))

    def of_class(step_id: str) -> bool:
        if self_class(graph, step_id) in family:
            return True
        return any(made in family for _, made in constructions(graph, step_id, TRUSTED))

    return of_class


def record_classes(graph: FlowGraph, filled_by: str | None, store: str) -> frozenset[str]:
    """The classes of the object STORE's value is in: those a flag's parsed namespace is
    made into (FILLED_BY a flag), else the family of STORE's class."""
    step = graph.step(store)
    if step.kind != "field":
        return frozenset()
    found = flagged_record(graph, filled_by, store)
    if found is not None:
        return found.classes
    return frozenset(graph.index.family(field_class(graph.index, step)))


def bag_route(
    graph: FlowGraph,
    holds: Callable[[str], bool],
    classes: frozenset[str],
    filled_by: str | None,
    store: str,
    read: str,
    attr: str,
) -> list[Edge]:
    """The route of a value read out of an object filled by name (see tracer/graph/bags.py):
    the object the store is in (a step HOLDS it, an object of CLASSES), to where the value
    given to the bag's setter is read out of it by the name the setter is given, then the
    bag from where it is made (in the same function) to READ, through an accessor that
    returns it perhaps. Where the object reaches READ's own object through a process launch,
    the way taken is the one in that process (see `in_process`). [] when not found."""
    sources = [e.src for e in receiver_sources(graph, read, attr) if e.confidence >= TRUSTED]
    bag = route_back(graph, sources, lambda s: bool(fillings(graph, s))) if sources else []
    if not bag:
        return []
    made = bag[0].dst
    process = in_process(graph, holds, classes, read)
    for filling in fillings(graph, made):
        for obj, value in read_by_name(graph, filling.value, filling.key):
            kept = []
            if process:
                meet = route_back(graph, [obj], lambda s: s in process)
                if meet:  # the launch's way up to where this way joins it, then this way
                    way = process[meet[0].dst]
                    kept = [*way, *meet[1:]]
            kept = kept or route_back(graph, [obj], holds)
            if not kept:
                continue
            given = [] if value == filling.value else [Edge(value, filling.value, "local", 1.0)]
            return [
                *into_holder(graph, filled_by, store, kept[0].dst, attr),
                *kept[1:],
                Edge(obj, value, "read_by_name", 1.0, attr),
                *given,
                Edge(filling.value, filling.param, "arg_to_param", 1.0),
                Edge(filling.param, made, "filled_by_name", 1.0, attr),
                *bag[1:],
                Edge(bag[-1].dst, read, "read", 1.0, attr),
            ]
    return []
