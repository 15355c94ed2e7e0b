"""What a variable of the formula is bound to, and how: a value the log prints, measures,
sets or implies (`bind.py` finds it), or none, with why in one line."""

from __future__ import annotations

from dataclasses import dataclass

from tracer.analyses.explain.defaults import Computed
from tracer.analyses.explain.match import Observation
from tracer.graph.steps import Step


@dataclass(frozen=True, slots=True)
class Binding:
    name: str  # as the formula writes it: "self.mem_fraction_static"
    value: float | None
    how: str  # printed, measured, derived, flag, logged-args, default, solved, unbound
    why: str
    observation: Observation | None = None
    per_rank: tuple[tuple[str, float], ...] = ()
    function: str = ""  # for a measured value: the function that measured it
    at: Step | None = None  # ... and the step that called it
    computed: Computed | None = None  # a default the code computes when it starts
