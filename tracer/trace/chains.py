"""Slices of the flow graph: the spine of a value (its main path, from its origin to where it
ends up) and the steps around it (other writes, reads, and what it is combined with)."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracer.errors import NameNotFound
from tracer.graph.objects import TEST_CODE
from tracer.graph.parsed import flag_route
from tracer.graph.steps import TRUSTED, Edge, Edges, Step, field_class
from tracer.store import step_ids
from tracer.trace.carriers import with_carriers
from tracer.trace.depths import DEFAULT_BRANCH_DEPTH, DEFAULT_DEPTH, ONE_WAY_BRANCH_DEPTH
from tracer.trace.ends import sink_goals, sink_paths, source_bindings, writes_setting
from tracer.trace.origins import is_setting, origin_path, reads_itself
from tracer.trace.routes import (
    MIN_ROUTE_BUDGET,
    ROUTE_BUDGET,
    Budget,
    Inside,
    every_route,
    find_link,
    keys_along,
    sure_by_keys,
)
from tracer.trace.walks import Contents, few_guesses, walk

if TYPE_CHECKING:  # the graph (and networkx) load when a source is indexed, not before
    from tracer.graph.flow import FlowGraph


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
    # The sinks asked for (`--to`), and whether the spine ends at a binding of one (None:
    # none was asked).
    sinks: tuple[str, ...] = ()
    sink_reached: bool | None = None


def trace(
    graph: FlowGraph,
    name: str,
    direction: str = "both",
    max_depth: int = DEFAULT_DEPTH,
    sinks: Iterable[str] = (),
    branch_depth: int | None = None,
    hints: Iterable[str] = (),
) -> Chain:
    """The chain of NAME: spine from origin (backward) through a seed to a sink (forward),
    then every step within BRANCH_DEPTH of the spine or of a seed (by default one step
    when both directions are traced, a wider slice when one direction is). Without SINKS
    the value ends where the engine's rule puts it (tracer/trace/ends.py); HINTS are names
    a value may be expected to end at: a route to one is listed among the others when the
    rule's main end is elsewhere, never made the spine for being named."""
    # A query makes (and unpickles) facts by the hundred thousand, none in a cycle: the
    # cyclic collector would rescan them several times (measured: a fifth of a first trace).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return chain_of(graph, name, direction, max_depth, sinks, branch_depth, hints)
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
    hints: Iterable[str] = (),
) -> Chain:
    sinks = tuple(sinks)
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
    edges: dict[tuple[str, str, str], Edge] = Edges()
    seed_names = {graph.step(s).name for s in seeds}
    seed_set = set(seeds)
    anchors = seeds
    link: list[str] = []
    goals: list[str] = []
    budget = MIN_ROUTE_BUDGET
    origins: dict[str, list[str]] = {}

    def before(path: list[str]) -> list[str]:
        # Where the link's first step comes from: a carrier's route is looked for from
        # the flag that fills the field the link starts at (what every route is checked
        # with), not from the field alone.
        if direction == "backward":
            return []
        if path[0] not in origins:
            origins[path[0]] = origin_path(graph, path[:1], seed_names, max_depth, edges)
        return origins[path[0]][:-1]

    def search(ends: set[str]) -> tuple[list[str], list[str], int]:
        """The link from a seed to a binding of ENDS, the bindings, the other routes'
        budget. Of all the places NAME is bound, the link starts from the one nearest such
        a binding; the parameter itself first: a flag of NAME (or a field a flag sets) whose
        value reaches one surely, before another binding nearer one (a script's
        `settings.x = ...` override, a result record's field of the same name)."""
        targets = sink_goals(graph, ends)
        spent = Budget()
        named = [s for s in seeds if is_setting(graph, s)]

        # A field starts the link where its value came from (the constructor's argument that
        # fills it: the object that call makes holds it, not every object of its class).
        def inside() -> dict[str, Inside]:
            return {
                s: ((), came, ())
                for s in seeds
                if graph.step(s).kind == "field" and (came := filled_from(graph, s, before([s])))
            }

        found: list[str] = []
        if named and len(named) < len(seeds):
            found = find_link(
                graph,
                named,
                targets,
                max_depth,
                edges,
                set(),
                (TRUSTED,),
                before,
                budget=spent,
                object_starts=inside,
            )
        if not found:
            found = find_link(
                graph,
                seeds,
                targets,
                max_depth,
                edges,
                set(),
                (TRUSTED, 0.0),
                before,
                budget=spent,
                object_starts=inside,
            )
        return found, targets, max(MIN_ROUTE_BUDGET, ROUTE_BUDGET * spent.used)

    asked = sinks
    hinted: list[str] = []  # a link to a hinted name that is not the value's main end
    if not sinks and hints:
        if seed_names & set(hints):
            sinks = tuple(hints)  # a hinted name's own chain: from where it is computed
        else:
            link, goals, budget = search(set(hints))
            if link and not sets_another_setting(graph, before(link) + link, seed_names):
                sinks = tuple(hints)  # the value's own way there: the hint is its main end
            else:
                hinted, link, goals = link, [], []
    if sinks and seed_names & set(sinks):
        # A sink's own name: from the binding the others are copied from (the model runner's
        # `self.pool_tokens = ...`, not a metrics record that keeps a copy).
        anchors = source_bindings(graph, seeds, set(sinks), edges)[:1] or seeds
    elif sinks:
        if not link:
            link, goals, budget = search(set(sinks))
        anchors = link[:1] or reaching_seed(graph, seeds, set(sinks), seed_names, max_depth)
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
    if hinted and direction != "backward":  # the way to a hinted name, after the others
        unwidened.append(before(hinted) + hinted)
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
    # Where the value is kept in each of them: a container's other keys hold other values.
    kept_at = dict(zip(unwidened[0], keys_along(graph, unwidened[0], edges), strict=True))
    if direction != "backward":
        # Forward, the value held only inside a container that no step takes it out of
        # again is no use of the value: those steps are not shown around the spine.
        around_forward = Contents()
        ahead = walk(
            graph,
            around,
            True,
            branch_depth,
            edges,
            through=few_guesses(graph),
            start_keys=kept_at,
            learnt=around_forward,
            calls=True,
        )
        dead = around_forward.dead_ends() - set(spine)
        reached.update(s for s in ahead if s not in dead)
    if direction != "forward":
        # Backward likewise: an object the value is read out of is shown only on the way
        # back to where the value was put in it.
        around_backward = Contents()
        behind = walk(
            graph,
            around,
            False,
            branch_depth,
            edges,
            through=few_guesses(graph, False),
            start_keys=kept_at,
            learnt=around_backward,
            calls=True,
        )
        dead = around_backward.dead_ends(forward=False) - set(spine)
        reached.update(s for s in behind if s not in dead)
    for route in routes[1:]:
        reached.update(route)
    graph.flush()
    for route in unwidened:  # a guess a route's key makes sure is shown sure
        sure_by_keys(graph, route, edges)
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
        sinks=asked,
        sink_reached=ends_at_sink(graph, spine, link, asked) if asked else None,
    )


def filled_from(graph: FlowGraph, field: str, origin: list[str]) -> str | None:
    """The step a field's value comes from, on the way ORIGIN found to it: the constructor's
    argument that copies a flag's value out of the namespace its parser returns, where the
    flag sets the field (the object made there holds it), else the step before the field."""
    if not origin:
        return None
    came = origin[-1]
    if graph.step(came).kind == "cli_flag":
        route = flag_route(graph, came, field, field_class(graph.index, graph.step(field)))
        if route is not None:
            return route.edges[-1].src
    return came


MAX_SEEDS_TRIED = 8  # bindings of the name asked whether their value reaches a local sink


def reaching_seed(
    graph: FlowGraph, seeds: list[str], sinks: set[str], names: set[str], max_depth: int
) -> list[str]:
    """The first of SEEDS (flags and the fields they set first) whose value reaches a binding
    of a name in SINKS that no search for an object's attribute finds (a local or a record's
    field of that name), alone; SEEDS as they are when none of the first MAX_SEEDS_TRIED
    does."""
    settings_first = sorted(seeds, key=lambda s: not is_setting(graph, s))  # stable
    for seed in settings_first[:MAX_SEEDS_TRIED]:
        path = sink_paths(graph, seed, sinks, names, max_depth, Edges())[0]
        if graph.step(path[-1]).name in sinks:
            return [seed]
    return seeds


def sets_another_setting(graph: FlowGraph, route: list[str], names: set[str]) -> bool:
    """Does ROUTE go through a write of another setting than NAMES (`self.other = f(x)`, where
    `other` is a field a flag sets)? Then it is that setting's route: the value is an input
    of the other setting's default, and where that one ends up is not where this one does."""
    return any(
        graph.step(s).name not in names and writes_setting(graph, s)
        for s in route
        if graph.step(s).kind != "field"
    )


def ends_at_sink(
    graph: FlowGraph, spine: list[str], link: list[str], sinks: tuple[str, ...]
) -> bool:
    """Did the search reach a binding of a name in SINKS (the link to one, or a spine that
    ends at one)?"""
    return bool(link) or graph.step(spine[-1]).name in sinks


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
        sinks=chain.sinks,
        sink_reached=chain.sink_reached,
    )
