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
from tracer.trace.carriers import with_carriers
from tracer.trace.contexts import Context, after, agree, before, unmatched_return
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
    links: list[list[str]] = []
    if sinks and seed_names & set(sinks):
        # A sink's own name: from the binding the others are copied from (the model runner's
        # `self.max_total_num_tokens = ...`, not a metrics record that keeps a copy).
        anchors = source_bindings(graph, seeds, set(sinks), edges)[:1] or seeds
    elif sinks:
        # Of all the places NAME is bound, start from the one nearest a sink (backward: the
        # path there is cut at NAME's last binding).
        links = sink_links(graph, seeds, set(sinks), max_depth, edges)
        link = links[0] if links else []
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
    spine = with_carriers(graph, backward_part + forward_part[1:], edges)
    routes = [spine]
    for other in ends[1:]:  # the other places the value may be said to end up
        routes.append(with_carriers(graph, backward_part + other[1:], edges))
    if direction != "backward":
        for other in links[1:]:
            start = backward_part
            if other[0] != anchors[0] and direction != "forward":
                start = origin_path(graph, other[:1], seed_names, max_depth, edges)
            elif other[0] != anchors[0]:
                start = other[:1]
            routes.append(with_carriers(graph, start + other[1:], edges))
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


def sink_links(
    graph: FlowGraph,
    seeds: list[str],
    sinks: set[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
) -> list[list[str]]:
    """A path from a seed to each sink binding the value reaches, the main one first.
    Each is the shortest to its sink (trusted steps first, then any), searched from both
    ends at once so that neither search has to cover the whole tree. A path that runs
    through another sink binding (a copy of it kept elsewhere) is no route of its own.
    The main route is the one to the sink binding the others are copied from
    (`source_bindings`), unless that binding only adjusts the value already there."""
    is_sink = sink_test(graph, sinks)
    goals = [
        s
        for name in sinks
        for s in (
            graph.attribute_writes(name)  # the sinks, without building the other bindings
            if "." not in name
            else [s for s in graph.seeds(name) if is_sink(s)]
        )
    ]
    found: list[list[str]] = []
    remaining = list(goals)
    banned: set[tuple[str, str]] = set()
    for _ in range(MAX_ROUTE_SEARCHES):
        if not remaining or len(found) == MAX_ROUTES:
            break
        path: list[str] = []
        # The main route may take guesses when nothing trusted leads on; the others may not.
        for min_confidence in (TRUSTED, 0.0) if not found else (TRUSTED,):
            path = meet(graph, seeds, remaining, max_depth, edges, min_confidence, banned)
            if path:
                break
        if not path:
            break
        jump = unrealizable_jump(graph, path, edges)
        if jump is not None:
            banned.add(jump)  # search again without it
            continue
        if not found:
            # The other routes end on the same attribute of the same kind of object: the
            # bindings of other classes are copies kept elsewhere, reached through this one.
            family = owner_family(graph, path[-1])
            remaining = [g for g in remaining if family & owner_family(graph, g)]
        if path[-1] in remaining:
            remaining.remove(path[-1])
        # A copy of another sink (a path through it), or a second binding fed by the same
        # step as another route's (`x = r.n` then `self.n = x` and `self.m.n = x`): no
        # route of its own.
        if not any(step in goals for step in path[:-1]) and not any(
            p[-2:-1] == path[-2:-1] for p in found
        ):
            found.append(path)
    if len(found) > 1:
        # A sink that only adjusts the value already there (`x = min(x, cap)`) ends a
        # later route; among the others, the binding the rest are copied from first.
        ends = sorted((p[-1] for p in found), key=goals.index)
        ranked = source_bindings(graph, ends, sinks, edges)
        found.sort(
            key=lambda p: (
                reads_itself(graph, p[-1]),
                ranked.index(p[-1]) if p[-1] in ranked else len(ranked),
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
    graph: FlowGraph, path: list[str], edges: dict[tuple[str, str, str], Edge]
) -> tuple[str, str] | None:
    """When PATH, with its stores and reads widened into the objects' routes, returns a
    value to another call than the one it entered by: the step joined by name (a store
    and its read) that led it there, to search again without."""
    widened = with_carriers(graph, path, edges)
    wrong = unmatched_return(graph, widened, edges)
    if wrong is None:
        return None
    links = links_of(edges)
    jumps = [
        (a, b)
        for a, b in zip(path, path[1:], strict=False)
        if widened.index(b) <= wrong and is_jump(links, a, b)
    ]
    return jumps[-1] if jumps else (widened[wrong - 1], widened[wrong])


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
) -> list[str]:
    """Bidirectional breadth-first search: grow the smaller frontier one layer at a time
    (forward from STARTS, backward from GOALS) until they touch. Each side carries the call
    it is inside of (`contexts`), so that a value entering a function by one call leaves it
    by the same call's result."""
    State = tuple[str, Context]
    ahead: dict[State, State | None] = {(s, None): None for s in starts}
    behind: dict[State, State | None] = {(s, None): None for s in goals}
    seen_ahead: dict[str, list[Context]] = {s: [None] for s in starts}
    seen_behind: dict[str, list[Context]] = {s: [None] for s in goals}
    front, back = list(ahead), list(behind)

    def states_path(parents: dict[State, State | None], end: State) -> list[str]:
        path = [end]
        while parents[path[-1]] is not None:
            path.append(parents[path[-1]])  # type: ignore[arg-type]
        return [step for step, _ in path]

    def touching() -> tuple[State, State] | None:
        for step, context in ahead:
            for other in seen_behind.get(step, ()):
                if agree(context, other):
                    return (step, context), (step, other)
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
            found = graph.edges(step, forward)
            found = sorted(found, key=lambda e: -graph.centrality(e.dst if forward else e.src))
            for edge in found:
                edges[(edge.src, edge.dst, edge.kind)] = edge
                if edge.confidence < min_confidence or (banned and (edge.src, edge.dst) in banned):
                    continue
                allowed, nxt_context = (after if forward else before)(graph, edge, context)
                nxt = (edge.dst if forward else edge.src, nxt_context)
                if not allowed or nxt in parents:
                    continue
                parents[nxt] = current
                seen.setdefault(nxt[0], []).append(nxt_context)
                layer.append(nxt)
                met = met or any(
                    agree(nxt_context, c) if forward else agree(c, nxt_context)
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
