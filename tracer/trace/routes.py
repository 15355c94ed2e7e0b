"""The routes of a value to its sink: the spine's own search (`meet`, a two-way breadth-first
search that matches calls to their returns), and the search for the value's other routes to
other bindings of the sink (`every_route`), each bounded by a `Budget` of steps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tracer.graph.contents import Keys, compatible, in_object, sure_by_key
from tracer.graph.contents import step as step_keys
from tracer.graph.steps import TRUSTED, Edge, by_condition, field_class, pairs_of
from tracer.store import step_ids
from tracer.trace.carriers import JUMPS, carrier_edges, with_carriers
from tracer.trace.contexts import (
    FILLING,
    Context,
    after,
    agree,
    before,
    contexts_along,
    scope_of,
    takes_result,
    through,
    unmatched_return,
)
from tracer.trace.walks import MAX_INSIDE

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph

MAX_ROUTES = 3  # routes to distinct sink bindings shown, the spine first
MAX_ROUTE_SEARCHES = 6  # searches for them (a path through another sink is no new route)
ROUTE_SLACK = 8  # steps another route may be longer than the first found
MIN_ROUTE_BUDGET = 50  # steps a search for another route may look at, at least
ROUTE_BUDGET = 2  # ... and at most this many times as many as the spine's search did
CONDITION_DELAY = 2  # layers a step into a factory's non-default class waits, in `meet`
# Where a route's step is: the calls it is inside of, the step before it, the keys its value
# is kept at (see tracer.graph.contents).
Inside = tuple[Context, str | None, Keys]
NOWHERE: Inside = ((), None, ())


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
    start_states: dict[str, Inside] | None = None,
    avoid: frozenset[str] = frozenset(),
    budget: Budget | None = None,
    objects: bool = True,
    object_starts: Callable[[], dict[str, Inside]] | None = None,
) -> list[str]:
    """The shortest path from one of STARTS to one of GOALS, trusted steps first (LEVELS:
    the least confidence tried in turn; where no trusted step leads and OBJECTS, through
    the objects the value is stored in), searched from both ends at once so that neither
    search has to cover the whole tree; one whose calls, once BEFORE it and the objects'
    routes are added, return elsewhere than they came from is searched again without the
    name join that led there (BANNED keeps them). OBJECT_STARTS gives the start states of a
    search through objects (asked only if one is made: a field's filling argument)."""
    found_starts: dict[str, Inside] | None = None  # OBJECT_STARTS, once asked
    for _ in range(MAX_ROUTE_SEARCHES):
        path: list[str] = []
        # Trusted steps first; where none leads, the objects the value is kept in, before
        # any guess (a join by name where no object is followed).
        tries = [(level, inside) for level in levels for inside in (False, level >= TRUSTED)]
        for min_confidence, inside in dict.fromkeys(tries):
            if inside and not objects:
                continue
            starting = start_states
            if inside and object_starts is not None:
                found_starts = found_starts if found_starts is not None else object_starts()
                starting = {**(start_states or {}), **found_starts}
            path = meet(
                graph,
                starts,
                goals,
                max_depth,
                edges,
                min_confidence,
                banned,
                starting,
                avoid,
                budget,
                inside,
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
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
    budget: int,
    rank: Callable[[list[str]], list[str]],
    origin_of: Callable[[str], list[str]],
) -> list[list[str]]:
    """SPINE and the value's other routes to the sink, the main one first. Each other route
    leaves SPINE at one of its steps from ANCHOR on (the traced name's binding: the steps
    before it say where that value came from), or starts at another of the name's SEEDS
    (from where that one comes from), for another binding of the sink on the same kind of
    object (the bindings of other classes are copies kept elsewhere), and is a whole
    route from the spine's origin. A path through another sink binding, or one whose last
    step is fed by the same step as another route's (`self.n = x` and `self.m = x`), is no
    route of its own. RANK orders the routes' ends, the main one first (it may be another
    than the spine found first); ORIGIN_OF says where the value of another binding of the
    name comes from. Each search for another route expands at most BUDGET steps (twice as
    many as the spine's own search): other routes never cost much more than the spine."""
    family = owner_family(graph, spine[-1])
    remaining = [g for g in goals if g != spine[-1] and family & owner_family(graph, g)]
    found = [spine]
    banned: set[tuple[str, str]] = set()
    depth = min(max_depth, len(spine) + ROUTE_SLACK)
    on_spine = set(spine)
    starts = spine[anchor:-1] + [seed for seed in seeds if seed not in on_spine]
    position = {step: i for i, step in enumerate(spine[:-1])}
    origins: dict[str, list[str]] = {}
    other_sinks = frozenset(goals)  # a route ends on one, never passes through one
    inside = {
        step: (context, spine[i - 1] if i else None, keys)
        for i, (step, context, keys) in enumerate(
            zip(
                spine,
                contexts_along(graph, spine, edges),
                keys_along(graph, spine, edges),
                strict=True,
            )
        )
    }

    def before(path: list[str]) -> list[str]:
        if path[0] in position:
            return spine[: position[path[0]]]
        if path[0] not in origins:  # another binding of the name: where its value comes from
            origins[path[0]] = origin_of(path[0])[:-1]
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
            objects=False,  # (the spine's own search follows them: another route joins)
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
        # The routes from the spine's origin first (another binding of the name may start
        # where nothing flows into it): among them, the main end first.
        ranked = rank([route[-1] for route in found])
        found.sort(
            key=lambda r: (
                r[0] != spine[0],
                ranked.index(r[-1]) if r[-1] in ranked else len(ranked),
            )
        )
    return found


def keys_along(
    graph: FlowGraph, route: list[str], edges: dict[tuple[str, str, str], Edge]
) -> list[Keys]:
    """The keys each step of ROUTE keeps the value at, as a search going along it carries
    them (see tracer.graph.contents)."""
    by_pair = pairs_of(edges)
    found: list[Keys] = [()]
    for src, dst in zip(route, route[1:], strict=False):
        joined = sorted(by_pair.get((src, dst), []), key=lambda e: e.kind in JUMPS)
        keys: Keys = ()
        if joined:
            allowed, keys = step_keys(found[-1], graph.contents.ops(joined[0]), True)
            keys = keys if allowed else ()
        found.append(keys)
    return found


def sure_by_keys(
    graph: FlowGraph, route: list[str], edges: dict[tuple[str, str, str], Edge]
) -> None:
    """Make sure, in EDGES, each guessed edge ROUTE goes along that takes out exactly the
    key its value is kept at (`f(**d)` into the parameter k: see `contents.sure_by_key`)."""
    by_pair = pairs_of(edges)
    kept = keys_along(graph, route, edges)
    for i, (src, dst) in enumerate(zip(route, route[1:], strict=False)):
        for edge in by_pair.get((src, dst), []):
            if edge.confidence < TRUSTED and sure_by_key(kept[i], graph.contents.ops(edge)):
                edges[(edge.src, edge.dst, edge.kind)] = replace(edge, confidence=1.0)


def owner_family(graph: FlowGraph, step_id: str) -> set[str]:
    """The classes of the object a binding step keeps its value on (`self.x = ...` in a
    method of C: C's family), or the step's id alone when no class is known."""
    tables = graph.file(step_ids.file_of(step_id))
    step = tables.steps[step_id]  # its code is not needed
    if step.kind == "field":
        klass: str | None = field_class(graph.index, step)
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
    links = pairs_of(edges)
    pairs = list(zip(path, path[1:], strict=False))
    jumps = [(a, b) for a, b in pairs if widened.index(b) <= wrong and is_jump(links, a, b)]
    if jumps:
        return jumps[-1]
    return next(((a, b) for a, b in pairs if widened.index(b) >= wrong), None)


def is_jump(links: dict[tuple[str, str], list[Edge]], src: str, dst: str) -> bool:
    """Are SRC and DST joined only by name (an attribute written there, read here)?"""
    joined = links.get((src, dst), ())
    return bool(joined) and all(e.kind in JUMPS for e in joined)


def made_there(
    graph: FlowGraph,
    edge: Edge,
    previous: str | None,
    forward: bool,
    edges: dict[tuple[str, str, str], Edge],
) -> bool:
    """A field filled by a constructor's argument is in the object that call makes, not in
    every object of its class: going forward from the argument (PREVIOUS) through the field
    into an object (a `store` EDGE), or backward from an object through the field (PREVIOUS)
    to an argument, the object must be that call's result."""
    if previous is None:
        return True
    if forward and edge.kind == "store" and step_ids.is_field(edge.src):
        if not any(e.dst == edge.src and e.kind in FILLING for e in graph.edges(previous, True)):
            return True
        site = (step_ids.file_of(previous), step_ids.call_of(previous))
        return takes_result(graph, edge.dst, site)
    if not forward and edge.kind in FILLING and (edge.dst, previous, "store") in edges:
        site = (step_ids.file_of(edge.src), step_ids.call_of(edge.src))
        return takes_result(graph, previous, site)
    return True


def meet(
    graph: FlowGraph,
    starts: list[str],
    goals: list[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
    min_confidence: float,
    banned: set[tuple[str, str]] | None = None,
    start_states: dict[str, Inside] | None = None,
    avoid: frozenset[str] = frozenset(),
    budget: Budget | None = None,
    objects: bool = False,
) -> list[str]:
    """Bidirectional breadth-first search: grow the smaller frontier one layer at a time
    (forward from STARTS, backward from GOALS) until they touch. Each side carries the call
    it is inside of (`contexts`), so that a value entering a function by one call leaves it
    by the same call's result. A start may be given the calls it is inside of and the step
    before it (START_STATES); no path passes through a step of AVOID. With a BUDGET, the
    search counts the steps it expands in it, and gives up (no path) when it has none left.
    With OBJECTS, a value is followed into the objects it is stored in and out of them where
    it is read (tracer/graph/held.py), at most MAX_INSIDE states each way."""
    State = tuple[str, Context, Keys]
    known = start_states or {}
    ahead: dict[State, State | None] = {}
    seen_ahead: dict[str, list[tuple[Context, Keys]]] = {}
    for s in starts:
        context, _, keys = known.get(s, NOWHERE)
        ahead[(s, context, keys)] = None
        seen_ahead[s] = [(context, keys)]
    behind: dict[State, State | None] = {(s, (), ()): None for s in goals}
    seen_behind: dict[str, list[tuple[Context, Keys]]] = {s: [((), ())] for s in goals}
    front, back = list(ahead), list(behind)
    # States reached by an edge into a class a factory makes only under a condition (not its
    # default): they join their side's frontier CONDITION_DELAY layers later, so the default
    # way is taken where it is no more than that many steps longer.
    later: dict[bool, list[list[tuple[State, State]]]] = {
        side: [[] for _ in range(CONDITION_DELAY)] for side in (True, False)
    }

    def states_path(parents: dict[State, State | None], end: State) -> list[str]:
        path = [end]
        while parents[path[-1]] is not None:
            path.append(parents[path[-1]])  # type: ignore[arg-type]
        return [state[0] for state in path]

    pairs: dict[tuple[str, str], list[Edge]] = {}
    contents = graph.contents
    inside = {True: 0, False: 0}  # states expanded with the value inside another, each way
    one_way = graph.values.one_way  # edges found by value, with no twin going backward
    crossed = False  # has the forward half gone along one?
    unbound = False  # has the backward half ended at a parameter with no edge into it?

    def transition(
        previous: str | None, edge: Edge, context: Context, keys: Keys, forward: bool
    ) -> tuple[bool, Context, Keys]:
        """May the value go along EDGE from a step reached in CONTEXT with KEYS (after
        PREVIOUS, going FORWARD), and in which context and with which keys does it arrive?"""
        allowed, keys = step_keys(keys, contents.ops(edge), forward)
        if not allowed:
            return False, (), ()
        if context and edge.kind in JUMPS:
            # A value read back from an object a constructor call filled with it: the
            # object's own route says where the calls it entered return. (Any other join
            # by name leaves what the value was inside of unknown.)
            filled_by = previous if forward else None
            if filled_by is None or (filled_by, edge.src, "arg_to_field") not in edges:
                return True, (), keys
            route = carrier_edges(graph, filled_by, edge.src, edge.dst)
            if not route:
                return True, (), keys
            allowed, context = through(graph, route, context, forward, filled_by)
            return allowed, context, keys
        if not made_there(graph, edge, previous, forward, edges):
            return False, (), ()
        if edge.kind == "store" and forward and step_ids.is_field(edge.src):
            # Kept in the object made where the value came from (a field filled by a
            # constructor's argument: the object that call makes).
            same = previous is not None and scope_of(graph, previous) == scope_of(graph, edge.dst)
            return True, context if same else (), keys
        allowed, context = (after if forward else before)(graph, edge, context)
        return allowed, context, keys

    def joins(front_state: State, back_state: State) -> bool:
        """Do the two halves meeting at one step make a path whose calls return where they
        came from, and whose takes out of containers match their puts? The half found
        backward is walked forward in the context of the other."""
        _, context, keys = front_state
        if not (agree(context, back_state[1]) and compatible(keys, back_state[2])):
            return False
        parent = ahead[front_state]
        previous = parent[0] if parent else known.get(front_state[0], NOWHERE)[1]
        rest = states_path(behind, back_state)
        for a, b in zip(rest, rest[1:], strict=False):
            joined = sorted(pairs.get((a, b), []), key=lambda e: e.kind in JUMPS)
            if not joined:
                return True
            # (Two edges between the same steps may differ by what they take: a read of
            # `.f` and one of `.g` out of one object.)
            for edge in joined:
                allowed, after_edge, kept = transition(previous, edge, context, keys, True)
                if allowed:
                    break
            if not allowed:
                return False
            context, keys = after_edge, kept
            previous = a
        return True

    def touching() -> tuple[State, State] | None:
        for state in ahead:
            for context, keys in seen_behind.get(state[0], ()):
                if joins(state, (state[0], context, keys)):
                    return state, (state[0], context, keys)
        return None

    for _ in range(max_depth):
        met_at = touching()
        if met_at is not None:
            forward_end, backward_end = met_at
            return (
                list(reversed(states_path(ahead, forward_end)))
                + states_path(behind, backward_end)[1:]
            )
        waiting = {side: sum(len(bucket) for bucket in later[side]) for side in later}
        if not (front or waiting[True]):
            return []
        if not (back or waiting[False]):
            # Edges of calls found by value have no twin going backward (see
            # tracer.graph.call_values): past one, the forward half goes on alone, and so
            # it does while it may still reach one (the backward half ended at a parameter
            # no call is known to bind: one found by value may).
            if not (crossed or unbound):
                return []
            forward = True
        else:
            forward = len(front) + waiting[True] <= len(back) + waiting[False]
        parents = ahead if forward else behind
        seen = seen_ahead if forward else seen_behind
        other_side = seen_behind if forward else seen_ahead
        layer: list[State] = []
        met = False
        delayed = later[forward].pop(0)
        later[forward].append([])
        for nxt, current in delayed:
            if nxt not in parents:
                parents[nxt] = current
                seen.setdefault(nxt[0], []).append(nxt[1:])
                layer.append(nxt)
        for current in front if forward else back:
            step, context, keys = current
            if budget is not None and not budget.spend():
                return []
            if objects and in_object(keys):
                inside[forward] += 1
                if inside[forward] > MAX_INSIDE:
                    continue
            found = graph.edges(step, forward)
            if objects:  # into and out of the objects the value is kept in
                found = found + graph.held.edges(step, forward, keys)
            found = sorted(found, key=lambda e: -graph.centrality(e.dst if forward else e.src))
            if not forward and not found and step_ids.is_param(step):
                unbound = True
            parent = parents[current]
            previous = parent[0] if parent else known.get(step, NOWHERE)[1]
            for edge in found:
                if (edge.src, edge.dst, edge.kind) not in edges:
                    edges[(edge.src, edge.dst, edge.kind)] = edge
                pairs.setdefault((edge.src, edge.dst), []).append(edge)
                if banned and (edge.src, edge.dst) in banned:
                    continue
                if edge.confidence < min_confidence and not (
                    forward and sure_by_key(keys, contents.ops(edge))
                ):
                    continue
                allowed, nxt_context, nxt_keys = transition(previous, edge, context, keys, forward)
                nxt = (edge.dst if forward else edge.src, nxt_context, nxt_keys)
                if not allowed or nxt in parents or (nxt[0] in avoid and nxt[0] not in goals):
                    continue
                if by_condition(edge):
                    later[forward][-1].append((nxt, current))
                    continue
                parents[nxt] = current
                seen.setdefault(nxt[0], []).append(nxt[1:])
                layer.append(nxt)
                crossed = crossed or (forward and (edge.src, edge.dst) in one_way)
                met = met or any(
                    joins(nxt, (nxt[0], *c)) if forward else joins((nxt[0], *c), nxt)
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
