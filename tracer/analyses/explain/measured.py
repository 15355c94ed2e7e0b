"""A variable measured by a call (`x = get_available_gpu_memory(...)`): bound to the logged
value of the same measurement nearest in time, the minimum across ranks where the code reduces
with a MIN; and a variable a function returns that logs what it returns."""

from __future__ import annotations

import re

from tracer.analyses.explain.arith import number
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.match import Matched, Observation
from tracer.analyses.explain.returns import logged_returns
from tracer.graph.steps import Step
from tracer.session import Session


class Measurements:
    """The measurements one start's log shows, before the line that reports the result."""

    def __init__(
        self,
        session: Session,
        mine: list[Matched],
        matched: list[Matched],
        ranks: tuple[str, ...],
        result_line: int,
    ) -> None:
        self.session = session
        self.mine = mine  # the explained rank's lines, and those without a rank
        self.matched = matched
        self.ranks = ranks
        self.result_line = result_line

    def measured(self, name: str, step: Step, function: str, at_formula: bool) -> Binding | None:
        """NAME's value comes from a call of FUNCTION at STEP: bind it to the logged value of
        the same measurement nearest in time (before the result line); AT_FORMULA: STEP is in
        the formula's own function."""
        candidates = self.candidates(function, self.mine)
        if not candidates:
            return None
        if at_formula:
            chosen = candidates[-1]
            when = f"the last logged {function}() before the result"
        else:
            logged_here = [m.line.number for m in self.mine if m.template.symbol == step.symbol]
            after = max(logged_here, default=0)
            later = [c for c in candidates if position(c) > after]
            chosen = later[0] if later else candidates[0]
            when = f"the first logged {function}() after {step.symbol} ran"
        value = chosen.value
        per_rank: list[tuple[str, float]] = []
        how = "measured"
        why = (
            f"{name} = {function}(...) at {step.file}:{step.line} ({step.symbol}); not printed "
            f"there: {when}, {chosen.template.literal.strip()!r} ({chosen.where})"
        )
        if chosen.derived:
            how = "derived"
            why += f", derived as {chosen.derived}"
        if chosen.loose:
            why += " (a line another build printed: read by its label)"
        if self.takes_minimum(function, step.code) and len(self.ranks) > 1:
            per_rank = self.across_ranks(chosen, function)
            if per_rank:
                value = min(v for _, v in per_rank)
                why += f"; the code takes the minimum across ranks ({len(per_rank)} ranks)"
        return Binding(name, value, how, why, chosen, tuple(per_rank), function, step)

    def candidates(self, function: str, matched: list[Matched]) -> list[Observation]:
        found = []
        for line in matched:
            if line.line.number >= self.result_line:
                break
            for observation in line.observations:
                hole = observation.hole
                if observation.value is not None and hole.simple and function in hole.measured_by:
                    found.append(observation)
        return sorted(found, key=position)

    def across_ranks(self, chosen: Observation, function: str) -> list[tuple[str, float]]:
        """The same logged measurement on every rank (the Nth of its template on each)."""
        mine = [
            o
            for o in self.candidates(function, self.mine)
            if o.template == chosen.template
            and o.hole.expr == chosen.hole.expr
            and bool(o.derived) == bool(chosen.derived)
        ]
        nth = mine.index(chosen) if chosen in mine else 0
        out: list[tuple[str, float]] = []
        for rank in self.ranks:
            values = [
                o.value
                for m in self.matched
                if m.line.rank == rank and m.template == chosen.template
                for o in m.observations
                if o.hole.expr == chosen.hole.expr and bool(o.derived) == bool(chosen.derived)
            ]
            if len(values) > nth and values[nth] is not None:
                out.append((rank, values[nth]))
        return out

    def takes_minimum(self, function: str, call_code: str) -> bool:
        """FUNCTION reduces with a MIN across processes when a keyword the call passes says so
        (read from FUNCTION's own source)."""
        body = self.function_source(function)
        if not body or "MIN" not in body:
            return False
        call = call_code[call_code.find(function) :]
        for keyword in re.findall(r"[(,]\s*(\w+)\s*=(?!=)", call):
            if re.search(rf"\b{keyword}\s*=\s*(False|None|0)\b", call):
                continue
            for guard in re.finditer(rf"^(?P<indent>[ \t]*)if\s+{keyword}\b.*$", body, re.M):
                if "ReduceOp.MIN" in guarded_block(body, guard.end(), len(guard["indent"])):
                    return True
        return False

    def function_source(self, function: str) -> str:
        return self.function_at(function)[1]

    def function_at(self, function: str) -> tuple[str, str]:
        """The file defining FUNCTION (the first, in path order) and its source there."""
        for path in self.session.facts.mentioning(f"def {function}("):
            text = self.session.snapshot.read(path).decode("utf-8", "replace")
            start = text.find(f"def {function}(")
            body = text.find(":\n", start)  # past the signature, which may span lines
            end = re.compile(r"^\S", re.M).search(text, max(body, start) + 2)
            return path, text[start : end.start() if end else len(text)]
        return "", ""

    def returned(self, name: str, step: Step, function: str) -> Binding | None:
        """NAME = FUNCTION(...) where FUNCTION logs what it returns: the logged value, or,
        when this start holds no line of it, the constant its other returns give."""
        path, body = self.function_at(function)
        if not body:
            return None
        found = logged_returns(function, path, self.session.snapshot.read(path), body)
        if found is None:
            return None
        lines = [
            m for m in self.mine if m.template in found.logs and m.line.number < self.result_line
        ]
        values = [o for m in lines for o in m.observations if o.value is not None]
        call = f"{name} = {function}(...) at {step.file}:{step.line} ({step.symbol})"
        literal = found.logs[0].literal.strip()
        if values:
            return Binding(
                name,
                values[-1].value,
                "printed",
                f"{call}, which logs what it returns: {literal!r} ({values[-1].where})",
                values[-1],
            )
        if len(found.constants) != 1:
            return None
        return Binding(
            name,
            found.constants[0],
            "implied",
            f"{call}: it logs {literal!r} when it returns a computed value, and this start "
            f"has no such line, so it returned its constant {number(found.constants[0])}",
        )


def first_free(mine: list[Matched]) -> Observation | None:
    """The first free memory the log reports (before anything was loaded)."""
    measured = [
        o
        for m in mine
        for o in m.observations
        if o.value is not None and o.hole.simple and o.hole.measured_by
    ]
    return min(measured, key=position, default=None)


def guarded_block(text: str, start: int, indent: int) -> str:
    """The lines after START indented deeper than INDENT (the body of an `if`)."""
    block: list[str] = []
    for line in text[start:].splitlines()[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return "\n".join(block)


def position(observation: Observation) -> float:
    # A derived value was measured before the line that lets us derive it.
    return observation.line.number - (0.5 if observation.derived else 0.0)
