"""Whether an explanation reproduces the number the log reports, and if not, where it parts
from the log: said in one line, which the command puts first and turns into its exit status."""

from __future__ import annotations

from dataclasses import dataclass

from tracer.analyses.explain.arith import number
from tracer.analyses.explain.explanation import Explanation
from tracer.analyses.explain.match import Observation, hole_values
from tracer.analyses.explain.notes import formula_alone
from tracer.analyses.explain.templates import Hole

CLOSE = 0.02  # a logged number is reproduced within this fraction of it
PRINTED_HALF_DIGIT = 0.005  # a size printed with two decimals is off by up to this much


@dataclass(frozen=True, slots=True)
class Verdict:
    reproduced: bool
    line: str  # what agrees, or where the explanation parts from the log


@dataclass(frozen=True, slots=True)
class Sizes:
    """The sizes a result line prints (`K size: 5.21 GB, V size: 5.21 GB`), against the
    formula's first value (what the pool is given)."""

    observation: Observation
    sizes: tuple[float, ...]
    against: str  # the first value's name
    value: float

    @property
    def total(self) -> float:
        return sum(self.sizes)

    @property
    def close(self) -> bool:
        slack = max(CLOSE * abs(self.value), PRINTED_HALF_DIGIT * len(self.sizes))
        return abs(self.total - self.value) <= slack

    @property
    def apart(self) -> str:
        return percent(self.total, self.value)


def verdict(e: Explanation) -> Verdict:
    logged = e.observed[0] if e.observed else None
    if e.result is None and e.cap is None:
        return Verdict(False, f"Does not reproduce the log: {stopped(e)}")
    if logged is None or logged.value is None:
        return Verdict(
            False,
            "Does not reproduce the log: no line of it reports the result; the formula gives "
            + (number(e.result) if e.result is not None else "?"),
        )
    if e.cap is not None:
        alone = formula_alone(e.evaluations)
        return Verdict(
            True,
            f"Reproduces the log: the count it reports, {number(logged.value)} "
            f"({logged.where}), is the cap {e.cap.name} = {number(e.cap.value)} (log line "
            f"{e.cap.line}); the formula alone gives {alone}",
        )
    solved = [b.name for b in e.bindings.values() if b.how == "solved"]
    if not solved:
        apart = percent(e.result, logged.value)
        if abs(e.result - logged.value) <= CLOSE * abs(logged.value):
            return Verdict(
                True,
                f"Reproduces the log: the formula gives {number(e.result)}, the log "
                f"{number(logged.value)} ({logged.where}; {apart} apart)",
            )
        return Verdict(
            False,
            f"Does not reproduce the log: the formula gives {number(e.result)}, the log "
            f"reports {number(logged.value)} ({logged.where}), {apart} apart",
        )
    solved_from = (
        f"{', '.join(solved)} solved from the logged {number(logged.value)} ({logged.where})"
    )
    fitted = f"{solved_from}, so the count agrees by construction"
    sizes = sizes_check(e)
    if sizes is None:
        return Verdict(
            True,
            f"Reproduces the log by construction: {solved_from}; the log prints no size to "
            "check it against",
        )
    shown = f"{' + '.join(number(s) for s in sizes.sizes)} = {number(sizes.total)}"
    if len(sizes.sizes) == 1:
        shown = number(sizes.total)
    if sizes.close:
        return Verdict(
            True,
            f"Reproduces the log: its sizes, {shown}, against {sizes.against} = "
            f"{number(sizes.value)} ({sizes.apart} apart; {fitted})",
        )
    return Verdict(
        False,
        f"Does not reproduce the log: its sizes, {shown} ({sizes.observation.where}), are "
        f"{sizes.apart} off {sizes.against} = {number(sizes.value)}, what the formula gives "
        f"from the logged values ({fitted})",
    )


def stopped(e: Explanation) -> str:
    """Where the evaluation stops, and why: the first value nothing gives."""
    stop = next(ev for ev in e.evaluations if ev.value is None)
    where = f"{stop.step.file.rsplit('/', 1)[-1]}:{stop.step.line}"
    binding = e.bindings.get(stop.missing)
    if binding is not None:
        return f"the formula stops at {stop.target} ({where}): {binding.why}"
    return f"the formula stops at {stop.target} ({where}): {stop.missing or 'no value'}"


def sizes_check(e: Explanation) -> Sizes | None:
    """The first result line that prints sizes, against the memory the formula gives the
    pool."""
    first = e.budget
    if first is None or first.value is None:
        return None
    for observation in e.observed:
        sizes = other_sizes(observation)
        if sizes:
            return Sizes(observation, tuple(sizes), first.target, first.value)
    return None


def other_sizes(observation: Observation) -> list[float]:
    """The line's other computed fractional values (`K size: 5.21 GB, V size: 5.21 GB`), not
    the measurements it also prints (`avail mem=...`)."""
    template = observation.template
    found = hole_values(template, observation.line.message.strip())
    if found is None:
        return []
    out: list[float] = []
    for index, raw in sorted(found.values.items()):
        part = template.parts[index]
        if not isinstance(part, Hole) or not part.spec.endswith("f"):
            continue
        if part.simple and part.measured_by:
            continue  # a measurement, not a size of what was built
        try:
            value = float(raw)
        except ValueError:
            continue
        if value != observation.value:
            out.append(value)
    return out


def percent(value: float, against: float) -> str:
    if against == 0:
        return "-" if value == 0 else "all"
    share = abs(value - against) / abs(against) * 100
    return f"{share:.2g}%" if share < 10 else f"{share:.0f}%"
