"""Breadth-first walks over the flow graph in one direction, the paths they find, and which
guesses a walk around the spine follows."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from tracer.graph.contents import NEW, PUT, TAKE, Keys, Op, in_object, sure_by_key
from tracer.graph.contents import step as step_keys
from tracer.graph.steps import TRUSTED, Edge
from tracer.store import step_ids
from tracer.trace.contexts import Context, after, before

if TYPE_CHECKING:  # the graph (and networkx) load when a source is indexed, not before
    from tracer.graph.flow import FlowGraph


# States a search expands with the value inside another (an object, a container), at most:
# an object many parts of a program hand on (a settings record) would take the search over
# all of them. Past the bound, the search goes on with the value itself only (the joins by
# name stand for the objects).
MAX_INSIDE = 300
# A step, the keys the value is kept at in its value, and (in a walk that matches calls to
# returns) the calls it entered and has not left.
State = tuple[str, Keys, Context]


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
    start_keys: dict[str, Keys] | None = None,
    learnt: Contents | None = None,
    calls: bool = False,
    objects: bool = True,
    stores: bool = True,
) -> dict[str, str | None]:
    """Breadth-first in one direction over (step, access path) states, at most MAX_DEPTH
    steps from STARTS; only steps for which FOLLOW holds are expanded, along the edges
    THROUGH lets by; ends early at the first step for which STOP holds. A value kept in a
    container is taken out only at its own key (START_KEYS: where it is kept at a start,
    else nowhere; see tracer.graph.contents), and an edge that takes out exactly that key is
    as sure as the key (`f(**d)` into the parameter k). A step reached with other keys than
    before is a new state, expanded again: a value put into a list at two places is taken
    out at both. With CALLS, a state also holds the calls the value entered and has not left
    (tracer/trace/contexts.py): a value that enters a function by one call leaves it by that
    call's result only, and what a method or constructor given an object stores into it
    reaches only that object (tracer/graph/instances.py). Without OBJECTS, a value is not
    followed into the objects it is stored in (tracer/graph/held.py): the joins by name
    stand for them; without STORES, only an object it is already in is followed (the
    namespace a parser puts a flag in), not one it is stored into (the joins stand for
    those).
    Returns each reached step with the step it was first reached from. LEARNT, when given,
    is filled with the states and what they learnt of containers (see `Contents`)."""
    first: dict[str, str | None] = dict.fromkeys(starts)
    states: list[State] = [(s, (start_keys or {}).get(s, ()), ()) for s in starts]
    depth: dict[State, int] = dict.fromkeys(states, 0)
    parent: dict[State, State | None] = dict.fromkeys(states)
    if learnt is not None:
        learnt.parent = parent
    contents = graph.contents
    queue = deque(states)
    inside = 0  # states expanded with the value inside another (see MAX_INSIDE)
    while queue:
        state = queue.popleft()
        current, keys, context = state
        if depth[state] >= max_depth or not follow(current):
            continue
        if objects and in_object(keys):
            inside += 1
            if inside > MAX_INSIDE:
                continue
        found = graph.edges(current, forward)
        if objects and (stores or in_object(keys)):  # into and out of the objects it is in
            found = found + graph.held.edges(current, forward, keys)
        # Among equals, the step in the more central module is reached first.
        found = sorted(found, key=lambda e: -graph.centrality(e.dst if forward else e.src))
        for edge in found:
            edges[(edge.src, edge.dst, edge.kind)] = edge
            if not through(current, edge):
                continue
            nxt = edge.dst if forward else edge.src
            arrives = context
            if calls:
                allowed_here, arrives = matched(graph, edge, context, forward)
                if not allowed_here:
                    continue
            for ops in contents.alternatives(edge):
                if edge.confidence < min_confidence and not (forward and sure_by_key(keys, ops)):
                    continue
                allowed, kept = step_keys(keys, ops, forward)
                if not allowed:
                    continue
                following = (nxt, kept, arrives)
                if following in depth:
                    if learnt is not None and leaves(keys, kept, ops, forward, graph, edge):
                        learnt.out.add(state)  # (taken out where another way got first)
                    continue
                depth[following] = depth[state] + 1
                parent[following] = state
                if learnt is not None:
                    if leaves(keys, kept, ops, forward, graph, edge):
                        learnt.out.add(following)
                    elif kept and not keys and edge.kind == "read" and not forward:
                        learnt.opened.add(following)
                    elif kept and not keys and edge.kind != "store":
                        # (A store's own step is where it keeps the value: the object
                        # it is in, handed on, is a container like any other.)
                        learnt.put.add(following)
                if nxt not in first:
                    first[nxt] = current
                    if stop(nxt):
                        return first
                queue.append(following)
    return first


class Contents:
    """What a walk learnt of containers: each state it reached (a step, and the keys the
    value is kept at in the step's value; none: the value itself) with the state it came
    from, the states where the value was put into a container, and those where it came back
    out of one (a take of the key it was kept at, or what a call outside the tree makes of
    it)."""

    def __init__(self) -> None:
        self.parent: dict[State, State | None] = {}
        self.put: set[State] = set()
        self.out: set[State] = set()
        self.opened: set[State] = set()  # (backward) the objects a value is read out of

    def dead_ends(self, forward: bool = True) -> set[str]:
        """The steps of the walk none of whose states holds the value, or a container on the
        way to where it is taken out again: a container only handed on, which no step
        further on takes the value out of, gives nothing of it (`sink(box)` of `box = [v]`),
        nor does anything reached only through it. Going forward, where the value is put
        into a container stays (it is kept there: `return {"k": v}`). Going backward, an
        object a value is read out of (`x.f`), and where it came from, lead nowhere unless
        the walk finds where the value was put in it."""
        parent = self.parent
        useful: set[State] = set()
        for state in self.out:  # each state, and the way to it, holds the value or leads to it
            at: State | None = state
            while at is not None and at not in useful:
                useful.add(at)
                at = parent[at]
        dead: set[State] = set()
        inside: set[State] = set()  # (backward) reached inside an object read out of
        for state in parent:  # breadth-first: a parent before its children
            up = parent[state]
            if forward:
                held = bool(state[1]) and state not in self.put
            else:
                held = bool(state[1]) and (state in self.opened or up in inside)
                if held:
                    inside.add(state)
            if (up is not None and up in dead) or (held and state not in useful):
                dead.add(state)
        return {state[0] for state in parent} - {state[0] for state in set(parent) - dead}


def matched(graph: FlowGraph, edge: Edge, context: Context, forward: bool) -> tuple[bool, Context]:
    """Along EDGE from a step reached in CONTEXT: may the value go, and in which context does
    it arrive? Calls and returns are matched (tracer/trace/contexts.py); a write reaching the
    read of an object made in the reading function through a call (its constructor, a method
    given it: `Instances.calls_between`) goes there only when that call is one the value
    entered, and leaves it."""
    if forward and edge.kind in ("attr", "attr_via_call"):
        sites = graph.instances.calls_between(edge.src, edge.dst)
        if sites is not None:
            if not sites:
                return True, context  # stored in the reading function itself
            path = step_ids.file_of(edge.dst)
            for i in range(len(context) - 1, -1, -1):
                if context[i][0] == path and context[i][1] in sites:
                    return True, context[:i]
            return not context, ()
    return (after if forward else before)(graph, edge, context)


def leaves(
    keys: Keys, kept: Keys, ops: tuple[Op, ...], forward: bool, graph: FlowGraph, edge: Edge
) -> bool:
    """From a state with the value kept at KEYS, along EDGE (with OPS) to one with it at KEPT:
    does the value come out of the container it was in (taken out, perhaps into another one
    at once: `{"k": obj.f}`), or is it what a call outside the tree makes of it (see
    comes_out)?"""
    if not keys:
        return False
    if kept:  # out of an object and into a dict at once: the object's key was taken
        taken = TAKE if forward else PUT
        return any(code == taken for code, _ in ops) and in_object(keys) and not in_object(kept)
    return comes_out(graph, edge, ops, forward)


def comes_out(graph: FlowGraph, edge: Edge, ops: tuple[Op, ...], forward: bool) -> bool:
    """Along EDGE (with OPS), from a step holding the value inside a container to one with
    no keys: is that the value taken out (a take of its key), or what a call outside the tree
    makes of the container (`set(box)`, `next(iter(box))`: read as carrying what it holds)?
    Not a formula of the tree's own code over the container whole (`len(box) * 2`)."""
    if not any(code == NEW for code, _ in ops):
        return True
    return graph.step(edge.dst if forward else edge.src).kind != "formula"


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
