"""How well a source's logging calls fit a log: the share of the log's server lines (those with
a timestamp or a rank) that a call of the source prints, as it is or loosely (another build of
the call). The release a log was printed by fits it best; a log's own dates narrow the
releases worth trying to those uploaded before it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.match import TemplateFinder, match_lines
from tracer.session import Session

LOOSE_WEIGHT = 0.5  # a line matched by its labels only counts half
DATE = re.compile(r"^(\d{4}-\d\d-\d\d)")


@dataclass(frozen=True, slots=True)
class Fit:
    label: str
    exact: int  # server lines a logging call prints as they are
    loose: int  # ... as another build of the call prints them
    lines: int  # the log's server lines

    @property
    def score(self) -> float:
        return (self.exact + LOOSE_WEIGHT * self.loose) / self.lines if self.lines else 0.0

    @property
    def shown(self) -> str:
        loose = f" and {self.loose} loosely" if self.loose else ""
        return f"{self.exact} of {self.lines} server lines printed by its logging calls{loose}"


def fit(session: Session, lines: list[LogLine]) -> Fit:
    """How well SESSION's logging calls fit LINES."""
    server = [line for line in lines if line.time or line.ranks]
    matched = match_lines(TemplateFinder(session.facts), server)
    session.facts.flush()
    loose = sum(1 for m in matched if m.loose is not None)
    return Fit(session.snapshot.label, len(matched) - loose, loose, len(server))


def log_dates(lines: list[LogLine]) -> tuple[str, str] | None:
    """The first and last dates (YYYY-MM-DD) the log's lines print, or None."""
    dates = sorted(found[1] for line in lines if (found := DATE.match(line.time)))
    return (dates[0], dates[-1]) if dates else None
