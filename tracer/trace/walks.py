"""Breadth-first walks over the flow graph in one direction, the paths they find, and which
guesses a walk around the spine follows."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from tracer.graph.contents import Keys, sure_by_key
from tracer.graph.contents import step as step_keys
from tracer.graph.steps import TRUSTED, Edge

if TYPE_CHECKING:  # the graph (and networkx) load when a source is indexed, not before
    from tracer.graph.flow import FlowGraph


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
) -> dict[str, str | None]:
    """Breadth-first in one direction, at most MAX_DEPTH steps from STARTS; only steps for
    which FOLLOW holds are expanded, along the edges THROUGH lets by; ends early at the
    first step for which STOP holds. A value kept in a container is taken out only at its
    own key (START_KEYS: where it is kept at a start, else nowhere; see
    tracer.graph.contents), and an edge that takes out exactly that key is as sure as the
    key (`f(**d)` into the parameter k); a step is reached once, with the keys of the first
    way there.
    Returns each reached step with the step it was reached from."""
    parent: dict[str, str | None] = dict.fromkeys(starts)
    depth = dict.fromkeys(starts, 0)
    keys: dict[str, Keys] = {s: (start_keys or {}).get(s, ()) for s in starts}
    contents = graph.contents
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
            if not through(current, edge):
                continue
            nxt = edge.dst if forward else edge.src
            if nxt in depth:
                continue
            ops = contents.ops(edge)
            if edge.confidence < min_confidence and not (
                forward and sure_by_key(keys[current], ops)
            ):
                continue
            allowed, kept = step_keys(keys[current], ops, forward)
            if not allowed:
                continue
            keys[nxt] = kept
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
