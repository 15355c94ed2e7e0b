"""Slices of the flow graph: the spine of a value (its main path, from its origin to where it
ends up) and the steps around it (other writes, reads, and what it is combined with)."""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracer.errors import NameNotFound
from tracer.graph.steps import Edge, Step
from tracer.trace.carriers import JUMPS, carrier_edges, with_carriers
from tracer.trace.contexts import (
    Context,
    after,
    agree,
    before,
    contexts_along,
    through,
    unmatched_return,
)
from tracer.trace.depths import DEFAULT_BRANCH_DEPTH, DEFAULT_DEPTH, ONE_WAY_BRANCH_DEPTH

if TYPE_CHECKING:  # the graph (and networkx) load when a source is indexed, not before
    from tracer.graph.flow import FlowGraph

ORIGIN_RANK = {"cli_flag": 3, "field": 2}
CHANGING_KINDS = frozenset({"formula", "return"})
FLAG_KINDS = frozenset({"flag_to_field", "generated_flag"})
OPAQUE_KINDS = frozenset({"local_via_call", "attr_via_call"})  # passed to a call, not returned
TRUSTED = 0.8  # the spine follows guessed (name-only) steps only when nothing else leads on
SOURCE_DEPTH = 2  # steps searched from a sink's binding for the others that copy its value
MAX_ROUTES = 3  # routes to distinct sink bindings shown, the spine first
MAX_ROUTE_SEARCHES = 6  # searches for them (a path through another sink is no new route)
ROUTE_SLACK = 8  # steps another route may be longer than the first found
MIN_ROUTE_BUDGET = 50  # steps a search for another route may look at, at least
ROUTE_BUDGET = 2  # ... and at most this many times as many as the spine's search did


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
    seeds = graph.seeds(name)
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
        link = find_link(graph, seeds, goals, max_depth, edges, set(), (TRUSTED, 0.0), budget=spent)
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
        unwidened = every_route(
            graph, unwidened[0], anchor, seeds, goals, set(sinks), max_depth, edges, budget
        )
    routes = [with_carriers(graph, route, edges) for route in unwidened]
    spine = routes[0]
    reached = set(spine) | set(seeds)
    around = list(reached)
    if direction != "backward":
        reached.update(walk(graph, around, True, branch_depth, edges))
    if direction != "forward":
        reached.update(walk(graph, around, False, branch_depth, edges))
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


def path_to(parent: dict[str, str | None], end: str) -> list[str]:
    path = [end]
    while parent[path[-1]] is not None:
        path.append(parent[path[-1]])  # type: ignore[arg-type]
    return path


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
    flagged = any(e.kind in FLAG_KINDS and e.confidence >= TRUSTED for e in into)
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
    return len(values) + len(tables.results.get(step_id, ())) <= 1


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
    return found or [[start]]


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


class Budget:
    """How many steps a search may expand (None: as many as it likes), and how many the
    searches given it have expanded. Counted in steps, not time, so that a search gives the
    same answer on a graph that other queries have grown."""

    def __init__(self, left: int | None = None) -> None:
        self.left = left
        self.used = 0

    def spend(self) -> bool:
        """Count one step expanded; False when none was left."""
        self.used += 1
        if self.left is None:
            return True
        self.left -= 1
        return self.left >= 0


def find_link(
    graph: FlowGraph,
    starts: list[str],
    goals: list[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
    banned: set[tuple[str, str]],
    levels: tuple[float, ...],
    before: Callable[[list[str]], list[str]] = lambda path: [],
    start_states: dict[str, tuple[Context, str | None]] | None = None,
    avoid: frozenset[str] = frozenset(),
    budget: Budget | None = None,
) -> list[str]:
    """The shortest path from one of STARTS to one of GOALS, trusted steps first (LEVELS:
    the least confidence tried in turn), searched from both ends at once so that neither
    search has to cover the whole tree; one whose calls, once BEFORE it and the objects'
    routes are added, return elsewhere than they came from is searched again without the
    name join that led there (BANNED keeps them)."""
    for _ in range(MAX_ROUTE_SEARCHES):
        path: list[str] = []
        for min_confidence in levels:
            path = meet(
                graph,
                starts,
                goals,
                max_depth,
                edges,
                min_confidence,
                banned,
                start_states,
                avoid,
                budget,
            )
            if path:
                break
        if not path:
            return []
        if unmatched_return(graph, with_carriers(graph, before(path) + path, edges), edges) is None:
            return path
        jump = unrealizable_jump(graph, path, edges, before(path))
        if jump is None or jump in banned:
            return []  # the wrong return is not on this path: nothing to search without
        banned.add(jump)
    return []


def every_route(
    graph: FlowGraph,
    spine: list[str],
    anchor: int,
    seeds: list[str],
    goals: list[str],
    sinks: set[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
    budget: int,
) -> list[list[str]]:
    """SPINE and the value's other routes to the sink, the main one first. Each other route
    leaves SPINE at one of its steps from ANCHOR on (the traced name's binding: the steps
    before it say where that value came from), or starts at another of the name's SEEDS
    (from where that one comes from), for another binding of the sink on the same kind of
    object (the bindings of other classes are copies kept elsewhere), and is a whole
    route from the spine's origin. A path through another sink binding, or one whose last
    step is fed by the same step as another route's (`self.n = x` and `self.m = x`), is no
    route of its own. The main route ends on the binding the others are copied from
    (`source_bindings`), unless that binding only adjusts the value already there
    (`x = min(x, cap)`): it may be another than the spine found first. Each search for
    another route expands at most BUDGET steps (twice as many as the spine's own search):
    other routes never cost much more than the spine."""
    family = owner_family(graph, spine[-1])
    remaining = [g for g in goals if g != spine[-1] and family & owner_family(graph, g)]
    found = [spine]
    banned: set[tuple[str, str]] = set()
    depth = min(max_depth, len(spine) + ROUTE_SLACK)
    on_spine = set(spine)
    starts = spine[anchor:-1] + [seed for seed in seeds if seed not in on_spine]
    position = {step: i for i, step in enumerate(spine[:-1])}
    names = {graph.step(seed).name for seed in seeds}
    origins: dict[str, list[str]] = {}
    other_sinks = frozenset(goals)  # a route ends on one, never passes through one
    inside = {
        step: (context, spine[i - 1] if i else None)
        for i, (step, context) in enumerate(
            zip(spine, contexts_along(graph, spine, edges), strict=True)
        )
    }

    def before(path: list[str]) -> list[str]:
        if path[0] in position:
            return spine[: position[path[0]]]
        if path[0] not in origins:  # another binding of the name: where its value comes from
            origins[path[0]] = origin_path(graph, [path[0]], names, max_depth, edges)[:-1]
        return origins[path[0]]

    def search(starts: list[str], levels: tuple[float, ...]) -> list[str]:
        return find_link(
            graph,
            starts,
            remaining,
            depth,
            edges,
            banned,
            levels,
            before,
            inside,
            other_sinks,
            Budget(budget),
        )

    while remaining and len(found) < MAX_ROUTES:
        path = search(starts, (TRUSTED,))
        if not path and len(found) < 2:
            # Guesses only for a second route, where nothing trusted leads there, and only
            # from the spine's own steps (not from another binding of the name).
            path = search(starts[: len(spine) - 1 - anchor], (0.0,))
        if not path:
            break
        remaining.remove(path[-1])
        route = before(path) + path
        if any(step in goals for step in path[:-1]) or any(r[-2:-1] == route[-2:-1] for r in found):
            continue
        found.append(route)
    if len(found) > 1:
        ends = sorted((r[-1] for r in found), key=goals.index)
        ranked = source_bindings(graph, ends, sinks, edges)
        found.sort(
            key=lambda r: (
                reads_itself(graph, r[-1]),
                ranked.index(r[-1]) if r[-1] in ranked else len(ranked),
            )
        )
    return found


def owner_family(graph: FlowGraph, step_id: str) -> set[str]:
    """The classes of the object a binding step keeps its value on (`self.x = ...` in a
    method of C: C's family), or the step's id alone when no class is known."""
    step = graph.step(step_id)
    tables = graph.file(step.file)
    if step.kind == "field":
        klass: str | None = f"{graph.index.module_of[step.file]}.{step.symbol}"
    else:
        base = tables.bound.get(step_id, "").rpartition(".")[0]
        klass = (
            graph.resolver.ref_type(tables.path, tables.scope_of[step_id], base) if base else None
        )
    return set(graph.index.family(klass)) if klass else {step_id}


def unrealizable_jump(
    graph: FlowGraph,
    path: list[str],
    edges: dict[tuple[str, str, str], Edge],
    prefix: list[str] | None = None,
) -> tuple[str, str] | None:
    """When PATH (after PREFIX, a route's steps before it), with its stores and reads
    widened into the objects' routes, returns a value to another call than the one it
    entered by: the pair of PATH's steps to search again without. That is the last step
    joined by name (a store and its read) before the wrong return, which led it there; else
    the pair whose step takes the wrong return. None when every return is right."""
    whole = (prefix or []) + path
    widened = with_carriers(graph, whole, edges)
    wrong = unmatched_return(graph, widened, edges)
    if wrong is None:
        return None
    links = links_of(edges)
    pairs = list(zip(path, path[1:], strict=False))
    jumps = [(a, b) for a, b in pairs if widened.index(b) <= wrong and is_jump(links, a, b)]
    if jumps:
        return jumps[-1]
    return next(((a, b) for a, b in pairs if widened.index(b) >= wrong), None)


def is_jump(links: dict[tuple[str, str], list[str]], src: str, dst: str) -> bool:
    """Are SRC and DST joined only by name (an attribute written there, read here)?"""
    kinds = links.get((src, dst), ())
    return bool(kinds) and all(kind in ("attr", "attr_via_call") for kind in kinds)


def links_of(edges: dict[tuple[str, str, str], Edge]) -> dict[tuple[str, str], list[str]]:
    """The kinds of the edges between each two steps."""
    links: dict[tuple[str, str], list[str]] = {}
    for src, dst, kind in edges:
        links.setdefault((src, dst), []).append(kind)
    return links


def meet(
    graph: FlowGraph,
    starts: list[str],
    goals: list[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
    min_confidence: float,
    banned: set[tuple[str, str]] | None = None,
    start_states: dict[str, tuple[Context, str | None]] | None = None,
    avoid: frozenset[str] = frozenset(),
    budget: Budget | None = None,
) -> list[str]:
    """Bidirectional breadth-first search: grow the smaller frontier one layer at a time
    (forward from STARTS, backward from GOALS) until they touch. Each side carries the call
    it is inside of (`contexts`), so that a value entering a function by one call leaves it
    by the same call's result. A start may be given the calls it is inside of and the step
    before it (START_STATES); no path passes through a step of AVOID. With a BUDGET, the
    search counts the steps it expands in it, and gives up (no path) when it has none left."""
    State = tuple[str, Context]
    known = start_states or {}
    ahead: dict[State, State | None] = {(s, known.get(s, ((), None))[0]): None for s in starts}
    behind: dict[State, State | None] = {(s, ()): None for s in goals}
    seen_ahead: dict[str, list[Context]] = {s: [known.get(s, ((), None))[0]] for s in starts}
    seen_behind: dict[str, list[Context]] = {s: [()] for s in goals}
    front, back = list(ahead), list(behind)

    def states_path(parents: dict[State, State | None], end: State) -> list[str]:
        path = [end]
        while parents[path[-1]] is not None:
            path.append(parents[path[-1]])  # type: ignore[arg-type]
        return [step for step, _ in path]

    pairs: dict[tuple[str, str], list[Edge]] = {}

    def transition(
        previous: str | None, edge: Edge, context: Context, forward: bool
    ) -> tuple[bool, Context]:
        """May the value go along EDGE from a step reached in CONTEXT (after PREVIOUS,
        going FORWARD), and in which context does it arrive?"""
        if context and edge.kind in JUMPS:
            # A value read back from an object a constructor call filled with it: the
            # object's own route says where the calls it entered return. (Any other join
            # by name leaves what the value was inside of unknown.)
            filled_by = previous if forward else None
            if filled_by is None or (filled_by, edge.src, "arg_to_field") not in edges:
                return True, ()
            route = carrier_edges(graph, filled_by, edge.src, edge.dst)
            return through(graph, route, context, forward, filled_by) if route else (True, ())
        return (after if forward else before)(graph, edge, context)

    def joins(front_state: State, back_state: State) -> bool:
        """Do the two halves meeting at one step make a path whose calls return where they
        came from? The half found backward is walked forward in the context of the other."""
        context = front_state[1]
        if not agree(context, back_state[1]):
            return False
        parent = ahead[front_state]
        previous = parent[0] if parent else known.get(front_state[0], ((), None))[1]
        rest = states_path(behind, back_state)
        for a, b in zip(rest, rest[1:], strict=False):
            joined = sorted(pairs.get((a, b), []), key=lambda e: e.kind in JUMPS)
            if not joined:
                return True
            allowed, context = transition(previous, joined[0], context, True)
            if not allowed:
                return False
            previous = a
        return True

    def touching() -> tuple[State, State] | None:
        for state in ahead:
            for other in seen_behind.get(state[0], ()):
                if joins(state, (state[0], other)):
                    return state, (state[0], other)
        return None

    for _ in range(max_depth):
        met_at = touching()
        if met_at is not None:
            forward_end, backward_end = met_at
            return (
                list(reversed(states_path(ahead, forward_end)))
                + states_path(behind, backward_end)[1:]
            )
        if not front or not back:
            return []
        forward = len(front) <= len(back)
        parents = ahead if forward else behind
        seen = seen_ahead if forward else seen_behind
        other_side = seen_behind if forward else seen_ahead
        layer: list[State] = []
        met = False
        for current in front if forward else back:
            step, context = current
            if budget is not None and not budget.spend():
                return []
            found = graph.edges(step, forward)
            found = sorted(found, key=lambda e: -graph.centrality(e.dst if forward else e.src))
            parent = parents[current]
            previous = parent[0] if parent else known.get(step, ((), None))[1]
            for edge in found:
                if (edge.src, edge.dst, edge.kind) not in edges:
                    edges[(edge.src, edge.dst, edge.kind)] = edge
                pairs.setdefault((edge.src, edge.dst), []).append(edge)
                if edge.confidence < min_confidence or (banned and (edge.src, edge.dst) in banned):
                    continue
                allowed, nxt_context = transition(previous, edge, context, forward)
                nxt = (edge.dst if forward else edge.src, nxt_context)
                if not allowed or nxt in parents or (nxt[0] in avoid and nxt[0] not in goals):
                    continue
                parents[nxt] = current
                seen.setdefault(nxt[0], []).append(nxt_context)
                layer.append(nxt)
                met = met or any(
                    joins(nxt, (nxt[0], c)) if forward else joins((nxt[0], c), nxt)
                    for c in other_side.get(nxt[0], ())
                )
            # Going forward, the first step reached that the other side holds is the one the
            # whole layer would give first: the rest of the layer is not needed. (Going
            # backward, a later step of `ahead` may be met first: the layer is finished.)
            if forward and met:
                break
        if forward:
            front = layer
        else:
            back = layer
    return []


def kept_in_attribute(graph: FlowGraph, step_id: str) -> bool:
    """A field, or an assignment to an attribute (`self.x = ...`, also when it is a formula)."""
    step = graph.step(step_id)
    if step.kind == "field":
        return True
    return "." in graph.file(step.file).bound.get(step_id, "")
