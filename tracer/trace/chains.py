"""Slices of the flow graph: the spine of a value (its main path, from its origin to where it
ends up) and the steps around it (other writes, reads, and what it is combined with)."""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracer.errors import NameNotFound
from tracer.graph.objects import TEST_CODE
from tracer.graph.steps import FLAG_EDGES, TRUSTED, Edge, Step
from tracer.store import step_ids
from tracer.trace.carriers import with_carriers
from tracer.trace.contexts import unmatched_return
from tracer.trace.depths import DEFAULT_BRANCH_DEPTH, DEFAULT_DEPTH, ONE_WAY_BRANCH_DEPTH
from tracer.trace.routes import (
    MAX_ROUTES,
    MIN_ROUTE_BUDGET,
    ROUTE_BUDGET,
    Budget,
    every_route,
    find_link,
)

if TYPE_CHECKING:  # the graph (and networkx) load when a source is indexed, not before
    from tracer.graph.flow import FlowGraph

ORIGIN_RANK = {"cli_flag": 3, "field": 2}
CHANGING_KINDS = frozenset({"formula", "return"})
OPAQUE_KINDS = frozenset({"local_via_call", "attr_via_call"})  # passed to a call, not returned
RETURN_CANDIDATES = 10  # returns asked whether their function is called, without a sink
SOURCE_DEPTH = 2  # steps searched from a sink's binding for the others that copy its value


@dataclass(frozen=True, slots=True)
class Chain:
    param: str
    direction: str
    steps: tuple[Step, ...]  # spine first, in order; then the rest by file and line
    edges: tuple[Edge, ...]
    spine: tuple[str, ...]  # step ids, origin first
    seeds: tuple[str, ...]
    # Every route found to a sink, the spine first: a value that reaches its end by more
    # than one way (a start-up computation and a later resize) has a spine for each.
    routes: tuple[tuple[str, ...], ...] = ()


def trace(
    graph: FlowGraph,
    name: str,
    direction: str = "both",
    max_depth: int = DEFAULT_DEPTH,
    sinks: Iterable[str] = (),
    branch_depth: int | None = None,
) -> Chain:
    """The chain of NAME: spine from origin (backward) through a seed to a sink (forward),
    then every step within BRANCH_DEPTH of the spine or of a seed (by default one step
    when both directions are traced, a wider slice when one direction is)."""
    # A query makes (and unpickles) facts by the hundred thousand, none in a cycle: the
    # cyclic collector would rescan them several times (measured: a fifth of a first trace).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return chain_of(graph, name, direction, max_depth, sinks, branch_depth)
    finally:
        if collecting:
            gc.enable()


def chain_of(
    graph: FlowGraph,
    name: str,
    direction: str,
    max_depth: int,
    sinks: Iterable[str],
    branch_depth: int | None,
) -> Chain:
    if branch_depth is None:
        branch_depth = DEFAULT_BRANCH_DEPTH if direction == "both" else ONE_WAY_BRANCH_DEPTH
    found = graph.seeds(name)
    # Test code makes its own objects and values: its bindings of NAME start no chain where
    # the package itself binds NAME.
    seeds = [s for s in found if not TEST_CODE.search(step_ids.file_of(s))] or found
    if not seeds:
        from tracer.index.suggest import did_you_mean  # only a failed trace needs it

        raise NameNotFound(
            f"{name!r} is bound nowhere in the source",
            did_you_mean(graph.index, name)
            or "check the spelling; try the attribute or parameter name alone",
        )
    edges: dict[tuple[str, str, str], Edge] = {}
    seed_names = {graph.step(s).name for s in seeds}
    seed_set = set(seeds)
    anchors = seeds
    link: list[str] = []
    goals: list[str] = []
    budget = MIN_ROUTE_BUDGET
    if sinks and seed_names & set(sinks):
        # A sink's own name: from the binding the others are copied from (the model runner's
        # `self.max_total_num_tokens = ...`, not a metrics record that keeps a copy).
        anchors = source_bindings(graph, seeds, set(sinks), edges)[:1] or seeds
    elif sinks:
        # Of all the places NAME is bound, start from the one nearest a sink (backward: the
        # path there is cut at NAME's last binding).
        goals = sink_goals(graph, set(sinks))
        spent = Budget()
        # The parameter itself first: a flag of NAME (or a field a flag sets) whose value
        # reaches a sink surely, before another binding nearer one (a script's
        # `server_args.x = ...` override, a result record's field of the same name).
        named = [s for s in seeds if is_setting(graph, s)]
        if named and len(named) < len(seeds):
            link = find_link(graph, named, goals, max_depth, edges, set(), (TRUSTED,), budget=spent)
        if not link:
            link = find_link(
                graph, seeds, goals, max_depth, edges, set(), (TRUSTED, 0.0), budget=spent
            )
        budget = max(MIN_ROUTE_BUDGET, ROUTE_BUDGET * spent.used)
        anchors = link[:1] or seeds
        if direction == "backward":  # where the value comes from: up to its last binding
            bound = [i for i, step_id in enumerate(link) if step_id in seed_set]
            link = link[: bound[-1] + 1] if bound else []
    backward_part = [anchors[0]]
    if direction != "forward":
        backward_part = origin_path(graph, anchors, seed_names, max_depth, edges)
    ends: list[list[str]] = []
    if link:
        forward_part = link
    elif direction != "backward":
        ends = sink_paths(graph, backward_part[-1], set(sinks), seed_names, max_depth, edges)
        forward_part = ends[0]
    else:
        forward_part = [backward_part[-1]]
    unwidened = [backward_part + forward_part[1:]]
    for other in ends[1:]:  # the other places the value may be said to end up
        unwidened.append(backward_part + other[1:])
    if link and direction != "backward":
        # Other routes leave the spine where the traced name is first bound, or after.
        anchor = next(
            i for i, step in enumerate(unwidened[0]) if step in seed_set or step == link[0]
        )

        def rank(ends: list[str]) -> list[str]:
            # A sink that only adjusts the value already there (`x = min(x, cap)`) ends a
            # later route; among the others, the binding the rest are copied from first.
            ranked = source_bindings(graph, sorted(ends, key=goals.index), set(sinks), edges)
            order = {end: i for i, end in enumerate(ranked)}
            return sorted(ends, key=lambda e: (reads_itself(graph, e), order.get(e, len(order))))

        def origin_of(seed: str) -> list[str]:
            return origin_path(graph, [seed], seed_names, max_depth, edges)

        unwidened = every_route(
            graph,
            unwidened[0],
            anchor,
            seeds,
            goals,
            max_depth,
            edges,
            budget,
            rank,
            origin_of,
        )
    routes = [with_carriers(graph, route, edges) for route in unwidened]
    spine = routes[0]
    reached = set(spine) | set(seeds)
    # Around the steps that hold the value (not those an object carrying it takes: every
    # other use of a settings object is no input or output of this value).
    holding = set(unwidened[0]) | set(seeds)
    around = [step for step in spine if step in holding] + [s for s in seeds if s not in spine]
    if direction != "backward":
        reached.update(walk(graph, around, True, branch_depth, edges, through=few_guesses(graph)))
    if direction != "forward":
        reached.update(
            walk(graph, around, False, branch_depth, edges, through=few_guesses(graph, False))
        )
    for route in routes[1:]:
        reached.update(route)
    graph.flush()
    kept = [e for e in edges.values() if e.src in reached and e.dst in reached]
    order = {step_id: i for i, step_id in enumerate(spine)}
    steps = sorted(
        (graph.step(s) for s in reached),
        key=lambda s: (s.id not in order, order.get(s.id, 0), s.file, s.line, s.id),
    )
    return Chain(
        param=name,
        direction=direction,
        steps=tuple(steps),
        edges=tuple(sorted(kept, key=lambda e: (e.src, e.dst, e.kind))),
        spine=tuple(spine),
        seeds=tuple(seeds),
        routes=tuple(tuple(route) for route in routes),
    )


def spine_only(chain: Chain) -> Chain:
    """CHAIN cut down to its spine: its steps, and the edges from each to the next."""
    on_spine = set(chain.spine)
    order = {pair: i for i, pair in enumerate(zip(chain.spine, chain.spine[1:], strict=False))}
    edges = [e for e in chain.edges if (e.src, e.dst) in order]
    return Chain(
        param=chain.param,
        direction=chain.direction,
        steps=tuple(s for s in chain.steps if s.id in on_spine),
        edges=tuple(sorted(edges, key=lambda e: order[(e.src, e.dst)])),
        spine=chain.spine,
        seeds=tuple(s for s in chain.seeds if s in on_spine),
        routes=(chain.spine,),
    )


def walk(
    graph: FlowGraph,
    starts: list[str],
    forward: bool,
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
    follow: Callable[[str], bool] = lambda _: True,
    stop: Callable[[str], bool] = lambda _: False,
    min_confidence: float = 0.0,
    through: Callable[[str, Edge], bool] = lambda _step, _edge: True,
) -> dict[str, str | None]:
    """Breadth-first in one direction, at most MAX_DEPTH steps from STARTS; only steps for
    which FOLLOW holds are expanded, along the edges THROUGH lets by; ends early at the
    first step for which STOP holds. Returns each reached step with the step it was
    reached from."""
    parent: dict[str, str | None] = dict.fromkeys(starts)
    depth = dict.fromkeys(starts, 0)
    queue = deque(starts)
    while queue:
        current = queue.popleft()
        if depth[current] >= max_depth or not follow(current):
            continue
        found = graph.edges(current, forward)
        # Among equals, the step in the more central module is reached first.
        found = sorted(found, key=lambda e: -graph.centrality(e.dst if forward else e.src))
        for edge in found:
            edges[(edge.src, edge.dst, edge.kind)] = edge
            if edge.confidence < min_confidence or not through(current, edge):
                continue
            nxt = edge.dst if forward else edge.src
            if nxt in depth:
                continue
            depth[nxt] = depth[current] + 1
            parent[nxt] = current
            if stop(nxt):
                return parent
            queue.append(nxt)
    return parent


MAX_GUESS_FANOUT = 8  # guesses out of one step shown around the spine, at most


def few_guesses(graph: FlowGraph, forward: bool = True) -> Callable[[str, Edge], bool]:
    """Around the spine, a guess is followed only from a step with few of them: a step that
    may go to every field of a class (`cls(**{k: getattr(args, k) ...})`, keys unknown) says
    nothing of where its value goes."""

    guesses: dict[str, int] = {}  # step -> how many guesses leave it this way

    def through(step: str, edge: Edge) -> bool:
        if edge.confidence >= TRUSTED:
            return True
        if step not in guesses:
            guesses[step] = sum(e.confidence < TRUSTED for e in graph.edges(step, forward))
        return guesses[step] <= MAX_GUESS_FANOUT

    return through


def path_to(parent: dict[str, str | None], end: str) -> list[str]:
    path = [end]
    while parent[path[-1]] is not None:
        path.append(parent[path[-1]])  # type: ignore[arg-type]
    return path


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

    def back(min_confidence: float) -> dict[str, str | None]:
        return walk(
            graph,
            seeds,
            False,
            max_depth,
            edges,
            follow=lambda s: carried(s) or updates_itself(graph, s),
            min_confidence=min_confidence,
            through=lambda s, e: carried(s) or graph.step(e.src).name == graph.step(s).name,
        )

    def named_origins(parent: dict[str, str | None]) -> list[str]:
        return [
            s
            for s in parent
            if graph.step(s).name in names
            and graph.step(s).kind in ORIGIN_RANK
            and not carrier(graph, s, parent)
        ]

    parent = back(TRUSTED)
    named = named_origins(parent)
    if not named:  # a flag or field reached only through guesses still beats no origin
        guessed = back(0.0)
        if named_origins(guessed):
            parent, named = guessed, named_origins(guessed)
    if named:
        origin = max(named, key=lambda s: ORIGIN_RANK[graph.step(s).kind])
    else:
        # The furthest step where the value starts: nothing flows into it but what it
        # passes to calls outside the tree from elsewhere (`mem_get_info(gpu_id)` measures,
        # it does not return gpu_id; `torch.tensor(free)` of a value reached here does not
        # start one). Among equals, one that measures from an input (`mem_get_info(gpu_id)`)
        # before one that takes none (`psutil.virtual_memory()`), then the first written
        # (breadth-first order puts the furthest last and, among equals, in file order).
        depth = {s: len(path_to(parent, s)) for s in parent}
        leaves = [s for s in parent if starts_value(graph, s, parent)] or list(parent)
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
    constructor call, reached here, fills it (`Result(pre_model_load_memory=measured)`)?
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


def sink_paths(
    graph: FlowGraph,
    start: str,
    sinks: set[str],
    names: set[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
) -> list[list[str]]:
    """START ... sink: the first step binding a name in SINKS. Without one, where the value
    ends up: the nearest attributes that keep a value computed from the traced one (kept
    on a long-lived object), the nearest first, up to MAX_ROUTES, none on the way to
    another; [START] when there is none."""

    is_sink = sink_test(graph, sinks)

    def realizable(path: list[str]) -> bool:  # every return goes back where it came from
        return unmatched_return(graph, path, edges) is None

    def reached(parent: dict[str, str | None]) -> list[str] | None:
        named = [s for s in parent if graph.step(s).name in sinks and graph.step(s).kind != "use"]
        # An object's attribute, else a record's field, else a local of that name.
        for found in (
            [s for s in named if is_sink(s)],
            [s for s in named if graph.step(s).kind == "field"],
            named,
        ):
            paths = [list(reversed(path_to(parent, s))) for s in found]
            good = [path for path in paths if realizable(path)]
            if good:
                return good[0]
        return None

    parent = walk(graph, [start], True, max_depth, edges, stop=is_sink, min_confidence=TRUSTED)
    if not any(is_sink(s) for s in parent):  # then guesses too
        parent = walk(graph, [start], True, max_depth, edges, stop=is_sink)
    path = reached(parent)
    if path is None and any(is_sink(s) for s in parent):
        # The sink met first is met only by returning to another call: look further.
        parent = walk(graph, [start], True, max_depth, edges, min_confidence=TRUSTED)
        path = reached(parent)
    if path is not None:
        return [path]
    found: list[list[str]] = []
    for end in parent:  # breadth-first: nearest first
        step = graph.step(end)
        if kept_in_attribute(graph, end) and step.name not in names:
            path = list(reversed(path_to(parent, end)))
            if any(graph.step(s).kind in CHANGING_KINDS for s in path) and realizable(path):
                if not any(other[-1] in path for other in found):
                    found.append(path)
                if len(found) == MAX_ROUTES:
                    break
    return found or returned_out(graph, parent, realizable) or furthest(graph, parent, realizable)


def furthest(
    graph: FlowGraph, parent: dict[str, str | None], realizable: Callable[[list[str]], bool]
) -> list[list[str]]:
    """Where a value neither kept nor returned out of the tree ends up: the furthest value
    derived from it along trusted steps (not a bare use: a condition, a print), as a path;
    the start alone when nothing is derived."""
    ends = [s for s in parent if graph.step(s).kind != "use"]
    for end in reversed(ends):  # breadth-first: the furthest last
        path = list(reversed(path_to(parent, end)))
        if realizable(path):
            return [path]
    return [list(parent)[:1]]


def returned_out(
    graph: FlowGraph, parent: dict[str, str | None], realizable: Callable[[list[str]], bool]
) -> list[list[str]]:
    """Where a value no attribute keeps ends up otherwise: returned out of the tree, by a
    function no code of the tree calls (an entry point, an API), on a way that computes a
    new value; the nearest such return (of the first RETURN_CANDIDATES met), as a path."""
    looked = 0
    for end in parent:  # breadth-first: nearest first
        if graph.step(end).kind != "return" or looked == RETURN_CANDIDATES:
            continue
        path = list(reversed(path_to(parent, end)))
        if not any(graph.step(s).kind in CHANGING_KINDS for s in path[1:-1]):
            continue
        looked += 1
        tables = graph.file(graph.step(end).file)
        function = graph.resolver.function(tables.path, tables.scope_of[end])
        if function is None or next(iter(graph.callers(function[0])), None) is not None:
            continue
        if realizable(path):
            return [path]
    return []


def sink_test(graph: FlowGraph, sinks: set[str]) -> Callable[[str], bool]:
    """Is a step a sink: an attribute (not a record's field) bound to a name in SINKS?"""

    def is_sink(step_id: str) -> bool:
        step = graph.step(step_id)
        return step.name in sinks and step.kind != "field" and kept_in_attribute(graph, step_id)

    return is_sink


def source_bindings(
    graph: FlowGraph,
    seeds: list[str],
    sinks: set[str],
    edges: dict[tuple[str, str, str], Edge],
) -> list[str]:
    """The sink bindings among SEEDS, the source first: the one that reaches the most
    others in a few trusted steps (its value is copied on), in the most central module,
    that computes its value rather than copy another attribute's; among equals, the first
    bound."""
    is_sink = sink_test(graph, sinks)
    bindings = [s for s in seeds if is_sink(s)]

    def copies(binding: str) -> int:
        reached = walk(graph, [binding], True, SOURCE_DEPTH, edges, min_confidence=TRUSTED)
        return sum(1 for other in bindings if other != binding and other in reached)

    def copied(binding: str) -> bool:
        """Does the binding only copy another name's value (`self.x = result.x`)?"""
        tables = graph.file(graph.step(binding).file)
        return len(tables.refs.get(binding, ())) == 1 and not tables.results.get(binding)

    key = {
        b: (-copies(b), -graph.centrality(b), copied(b) or updates_itself(graph, b))
        for b in bindings
    }
    return sorted(bindings, key=key.__getitem__)


def sink_goals(graph: FlowGraph, sinks: set[str]) -> list[str]:
    """The steps that bind a name in SINKS on an object: the ends a spine may reach."""
    is_sink = sink_test(graph, sinks)
    return [
        s
        for name in sinks
        for s in (
            graph.attribute_writes(name)  # the sinks, without building the other bindings
            if "." not in name
            else [s for s in graph.seeds(name) if is_sink(s)]
        )
    ]


def kept_in_attribute(graph: FlowGraph, step_id: str) -> bool:
    """A field, or an assignment to an attribute (`self.x = ...`, also when it is a formula)."""
    step = graph.step(step_id)
    if step.kind == "field":
        return True
    return "." in graph.file(step.file).bound.get(step_id, "")
