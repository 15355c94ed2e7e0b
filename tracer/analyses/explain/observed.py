"""What the log reports as the result: the lines that print a sink, or a name that carries
the sink's value onwards (found by walking the flow graph forward from the spine's end); the
lines printed below the formula; the logged measurements of the formula's variables in time."""

from __future__ import annotations

from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.match import Matched, Observation
from tracer.analyses.explain.measured import position
from tracer.graph.flow import FlowGraph
from tracer.graph.steps import Step

FORWARD_DEPTH = 6  # steps walked on from the result to the lines that print it
FORWARD_STEPS = 400


def find_observed(
    mine: list[Matched], sinks: tuple[str, ...], carried: set[tuple[str, str]]
) -> list[Observation]:
    """Lines of MINE printing the result: a hole that reads one of SINKS, or a name CARRIED
    onwards (see `carriers`)."""
    found: list[Observation] = []
    for matched in mine:
        for observation in matched.observations:
            hole = observation.hole
            if observation.value is None or not hole.simple or observation.derived:
                continue
            tail = hole.expr.rsplit(".", 1)[-1]
            if tail in sinks or (observation.template.symbol, tail) in carried:
                found.append(observation)
                break
    return found


def after_formula(steps: list[Step], mine: list[Matched]) -> list[int]:
    """Log lines printed, in a function of the spine, below the spine's step there: the
    formula has run by then (the pool is built after it is sized)."""
    below = {}
    for step in steps:
        below.setdefault(step.symbol, (step.file, step.line))
    return [
        m.line.number
        for m in mine
        if (m.template.file, m.template.symbol) in {(f, s) for s, (f, _) in below.items()}
        and m.template.line > below[m.template.symbol][1]
    ]


def carriers(graph: FlowGraph, steps: list[Step]) -> set[tuple[str, str]]:
    """(function, name) of the places the result is copied to, a few steps onwards."""
    # From every step after the last formula: the value may leave the spine (into the
    # pool that logs it) before the spine's end.
    last = max((i for i, s in enumerate(steps) if s.kind == "formula"), default=0)
    frontier = [s.id for s in steps[last:]]
    seen = set(frontier)
    carried: set[tuple[str, str]] = set()
    for _ in range(FORWARD_DEPTH):
        following = []
        for step_id in frontier:
            for edge in graph.edges(step_id, forward=True):
                if edge.dst in seen or len(seen) >= FORWARD_STEPS:
                    continue
                seen.add(edge.dst)
                step = graph.step(edge.dst)
                if step.kind in ("param", "local_assign", "attr_write", "field", "call_arg"):
                    carried.add((step.symbol, step.name))
                    following.append(edge.dst)
        frontier = following
    return carried


def timeline(bindings: dict[str, Binding], mine: list[Matched]) -> list[Observation]:
    """Every logged measurement of the functions the formula's variables were bound to."""
    functions = {
        f
        for b in bindings.values()
        if b.observation is not None and b.how in ("measured", "derived")
        for f in b.observation.hole.measured_by
    }
    out = []
    for matched in mine:
        for observation in matched.observations:
            hole = observation.hole
            if observation.value is not None and hole.simple and functions & set(hole.measured_by):
                out.append(observation)
    return sorted(out, key=position)
