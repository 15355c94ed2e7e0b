"""Our own programs of Python's value semantics (tests/unit/dataflow_cases.py), traced forward
from their value as `sgtrace trace FOLDER SECRET --direction forward` does: the cases named in
HOLDING reach every line marked `# reached` and none marked `# not reached`. A case not named
there does not hold yet; when a change makes one hold, this test fails until it is named, so
HOLDING is what the engine can be shown to do."""

from __future__ import annotations

import pytest

from tests.unit.dataflow_cases import CASES, Case
from tracer.trace.chains import trace

HOLDING = frozenset(
    {
        "read before the write",
        "attributes joined by name across objects",
        "class attributes",
        "match statements",
        "conditions decided by constants",
        "call contexts merged",
        "comprehensions keep their elements' parts",
        "getattr and setattr by a constant name",
        "loop-carried values",
        "global and nonlocal",
        "closures",
    }
)


def reached_lines(snippet_session, case: Case) -> set[int]:
    """The lines whose `sink(...)` call an edge of the answer passes the value into."""
    session = snippet_session({"case.py": case.source})
    chain = trace(session.graph, case.traced, direction="forward", max_depth=200, branch_depth=200)
    steps = {s.id: s for s in chain.steps}
    sinks = {s.id for s in chain.steps if s.kind == "param" and s.symbol == "sink"}
    return {
        line
        for e in chain.edges
        if e.dst in sinks and e.src in steps
        for line in range(steps[e.src].line, steps[e.src].end_line + 1)
    }


@pytest.mark.parametrize("case", CASES, ids=[c.category for c in CASES])
def test_the_cases_named_hold_and_only_they(snippet_session, case: Case) -> None:
    reached = reached_lines(snippet_session, case)
    missed = [n for n in case.reached if n not in reached]
    wrong = [n for n in case.not_reached if n in reached]
    assert (not missed and not wrong) == (case.category in HOLDING), (missed, wrong)
