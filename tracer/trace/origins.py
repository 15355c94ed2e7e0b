"""Where a value comes from: backward from the traced name along steps that carry one value to
a flag or field of that name, else to where the value starts (a measurement, a constant)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tracer.graph.steps import FLAG_EDGES, TRUSTED, Edge
from tracer.trace.walks import Contents, path_to, walk

if TYPE_CHECKING:  # the graph (and networkx) load when a source is indexed, not before
    from tracer.graph.flow import FlowGraph

OPAQUE_KINDS = frozenset({"local_via_call", "attr_via_call"})  # passed to a call, not returned
ORIGIN_RANK = {"cli_flag": 3, "field": 2}


def is_setting(graph: FlowGraph, step_id: str) -> bool:
    """Is STEP_ID a flag, or a field a flag sets?"""
    kind = graph.step(step_id).kind
    return kind == "cli_flag" or (kind == "field" and bool(graph.flag_edges(step_id)))


def origin_path(
    graph: FlowGraph,
    seeds: list[str],
    names: set[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
) -> list[str]:
    """Origin ... seed. The origin is a flag or field of the traced name, else the furthest
    step where the value starts, reached by following single-input steps back (a value
    carried, not combined), and through updates of a value by its own name (`x += y`
    carries x)."""
    carries: dict[str, bool] = {}  # step -> does it carry one value on, not combine several?

    def carried(step_id: str) -> bool:
        if step_id not in carries:
            carries[step_id] = single_input(graph, step_id)
        return carries[step_id]

    dead: dict[float, set[str]] = {}  # (see back)

    def back(min_confidence: float) -> dict[str, str | None]:
        # Into the objects the value was read out of, to where it was put in them; an object
        # no step of the walk puts it in leads nowhere (its steps are no origin).
        learnt = Contents()
        found = walk(
            graph,
            seeds,
            False,
            max_depth,
            edges,
            follow=lambda s: carried(s) or updates_itself(graph, s),
            min_confidence=min_confidence,
            through=lambda s, e: carried(s) or graph.step(e.src).name == graph.step(s).name,
            learnt=learnt,
        )
        dead[min_confidence] = learnt.dead_ends(forward=False)
        return found

    def named_origins(parent: dict[str, str | None]) -> list[str]:
        return [
            s
            for s in parent
            if graph.step(s).name in names
            and graph.step(s).kind in ORIGIN_RANK
            and not carrier(graph, s, parent)
        ]

    parent = back(TRUSTED)
    level = TRUSTED
    named = named_origins(parent)
    if not named:  # a flag or field reached only through guesses still beats no origin
        guessed = back(0.0)
        if named_origins(guessed):
            parent, named, level = guessed, named_origins(guessed), 0.0
    if named:
        origin = max(named, key=lambda s: ORIGIN_RANK[graph.step(s).kind])
    else:
        # The furthest step where the value starts: nothing flows into it but what it
        # passes to calls outside the tree from elsewhere (`mem_get_info(gpu_id)` measures,
        # it does not return gpu_id; `torch.tensor(free)` of a value reached here does not
        # start one). Among equals, one that measures from an input (`mem_get_info(gpu_id)`)
        # before one that takes none (`psutil.virtual_memory()`), then the first written
        # (breadth-first order puts the furthest last and, among equals, in file order).
        live = [s for s in parent if s not in dead[level]]
        depth = {s: len(path_to(parent, s)) for s in live}
        leaves = [s for s in live if starts_value(graph, s, parent)] or live
        furthest = max(depth[s] for s in leaves)
        candidates = [s for s in leaves if depth[s] == furthest]
        origin = next((s for s in candidates if graph.edges(s, False)), candidates[0])
    return path_to(parent, origin)  # origin first


def starts_value(graph: FlowGraph, step_id: str, reached: Mapping[str, object]) -> bool:
    """Does no value flow into the step, but as an argument of a call outside the tree
    that comes from none of the REACHED steps?"""
    return all(e.kind in OPAQUE_KINDS and e.src not in reached for e in graph.edges(step_id, False))


def carrier(graph: FlowGraph, step_id: str, reached: Mapping[str, object]) -> bool:
    """Is the step a record's field that only carries a value on: no flag sets it and one
    constructor call, reached here, fills it (`Result(free_before_load=measured)`)?
    Its origin is that value's."""
    if graph.step(step_id).kind != "field":
        return False
    into = graph.edges(step_id, False)
    flagged = any(e.kind in FLAG_EDGES and e.confidence >= TRUSTED for e in into)
    filled = [e.src for e in into if e.kind == "arg_to_field"]
    return not flagged and len(filled) == 1 and filled[0] in reached


def updates_itself(graph: FlowGraph, step_id: str) -> bool:
    """Is the step an assignment that reads its own target (`x += y`, `x = x * k`)?"""
    step = graph.step(step_id)
    if step.kind != "formula":
        return False
    tables = graph.file(step.file)
    target = tables.bound.get(step_id)
    return target is not None and target in tables.refs.get(step_id, ())


def reads_itself(graph: FlowGraph, step_id: str) -> bool:
    """Does the step's value read its own target (`x = min(x, cap)`, `x += y`)?"""
    tables = graph.file(graph.step(step_id).file)
    target = tables.bound.get(step_id)
    return target is not None and target in tables.refs.get(step_id, ())


def single_input(graph: FlowGraph, step_id: str) -> bool:
    """Does the step carry one value (a copy, a conversion), rather than combine several?
    Names of modules and things outside the tree (`torch.float32`) are not values here."""
    step = graph.step(step_id)
    if step.kind in ("param", "field", "cli_flag"):
        return True
    tables = graph.file(step.file)
    module = graph.index.module_of[step.file]
    values = [
        ref
        for ref in tables.refs.get(step_id, ())
        if (symbol := graph.index.resolve(module, ref.partition(".")[0])) is None
        or symbol.kind not in ("module", "external")
    ]
    calls = tables.results.get(step_id, ())
    if step.kind != "formula" and not calls and len({v.rpartition(".")[2] for v in values}) == 1:
        return True  # `x if x is not None else cfg.x`: one value, from either place
    return len(values) + len(calls) <= 1
