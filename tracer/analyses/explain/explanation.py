"""What `sgtrace explain` says of a log: the formula's evaluations and onward steps, what each
variable is bound to, the lines that report the result, notes, and what would change it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.caps import Cap
from tracer.analyses.explain.evaluate import Evaluation
from tracer.analyses.explain.match import Observation


@dataclass(frozen=True, slots=True)
class WhatIf:
    question: str
    knob: str
    value: float | None
    result: float | None
    why: str


@dataclass
class Explanation:
    source: str
    param: str
    rank: str
    ranks: tuple[str, ...]
    evaluations: list[Evaluation]
    bindings: dict[str, Binding]
    observed: list[Observation]
    timeline: list[Observation]
    notes: list[str] = field(default_factory=list)
    what_if: list[WhatIf] = field(default_factory=list)
    log_lines: int = 0
    matched_lines: int = 0
    start: int = 1  # the start explained (1-based), of
    starts: int = 1
    cap: Cap | None = None  # a setting that caps the result at the logged value
    # From the spine's end to the value the pool is built with: later writes of the sink's
    # attribute on the branches the settings select (page alignment, caps, a draft's share).
    onward: list[Evaluation] = field(default_factory=list)

    @property
    def result(self) -> float | None:
        if self.onward:
            return self.onward[-1].value
        return self.evaluations[-1].value if self.evaluations else None

    @property
    def budget(self) -> Evaluation | None:
        """The memory the pool is given, as the formula computes it: the value a later step
        turns from GiB into bytes (`* (1 << 30)`), else the formula's first value."""
        for index, ev in enumerate(self.evaluations):
            if ev.value is None or not ev.target.isidentifier():
                continue
            reads = re.compile(rf"\b{re.escape(ev.target)}\b")
            for later in self.evaluations[index + 1 :]:
                if "<< 30" in later.expression and reads.search(later.expression):
                    return ev
                if later.target == ev.target and later.value is not None:
                    break  # bound again before it is used: the later value is the budget
        return self.evaluations[0] if self.evaluations else None
