"""How well a source's logging calls fit a log: the share of the log's server lines (those with
a timestamp or a rank) that a call of the source prints, as it is or loosely (another build of
the call). The release a log was printed by fits it best. Which releases are worth trying: the
one the log names; those uploaded last before the log's own dates; for a log without dates,
samples of every minor series, refined by bisection within the best one."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tracer.analyses.explain.logread import Log, LogLine
from tracer.analyses.explain.match import TemplateFinder
from tracer.analyses.explain.survey import survey
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


def fit(session: Session, log: Log) -> Fit:
    """How well SESSION's logging calls fit LOG (read once, as it arrives)."""
    found = survey(TemplateFinder(session.facts), log, frozenset(), server_only=True)
    session.facts.flush()
    return Fit(session.snapshot.label, found.exact, found.loose, found.server)


def log_dates(lines: Iterable[LogLine]) -> tuple[str, str] | None:
    """The first and last dates (YYYY-MM-DD) the log's lines print, or None."""
    first = last = ""
    for line in lines:
        found = DATE.match(line.time)
        if found is not None:
            first, last = min(first or found[1], found[1]), max(last, found[1])
    return (first, last) if first else None


# -- which releases to try -------------------------------------------------------------------

RELEASE = r"v?(\d+\.\d+(?:\.\d+)*(?:\.?(?:post|rc|dev|a|b)\d+)*)\b"
REFINE_STEPS = 8  # releases tried within the best series, beyond the samples of every series


def named_version(lines: Iterable[LogLine], package: str) -> str | None:
    """The version of PACKAGE the log says it runs (`sglang==0.4.6`, `SGLang v0.4.6`,
    `sglang 0.4.6`, `sglang version: 0.4.6`, `sglang-0.4.6` in a path, `version=0.4.6` on a
    line naming the package), the last one said; None when it names none."""
    name = re.escape(package)
    forms = re.compile(rf"\b{name}(?:==|-| v?| version[:=]? ?|_version ?[=:] ?){RELEASE}", re.I)
    beside = re.compile(rf"\bversion ?[=:] ?['\"]?{RELEASE}", re.I)
    mentioned, alone = re.compile(rf"\b{name}", re.I), re.compile(rf"\b{name}\b", re.I)
    named = None
    for line in lines:
        if not mentioned.search(line.message):
            continue  # each form names the package
        found = forms.search(line.message) or (
            alone.search(line.message) and beside.search(line.message)
        )
        if found:
            named = found[1]
    return named


def minor_series(version: str) -> str:
    """`0.4` for 0.4.6.post1: the series a version belongs to."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return f"{found[1]}.{found[2]}" if found else version


def samples(versions: list[str]) -> list[str]:
    """The middle and the last release of each minor series of VERSIONS (oldest first): a
    series changes its logging calls within itself too, so its last alone can miss the log."""
    series: dict[str, list[str]] = {}
    for version in versions:
        series.setdefault(minor_series(version), []).append(version)
    chosen: list[str] = []
    for members in series.values():
        for version in (members[(len(members) - 1) // 2], members[-1]):
            if version not in chosen:
                chosen.append(version)
    return chosen


def newest_best(versions: list[str], fits: dict[str, Fit]) -> str:
    """The version of VERSIONS (oldest first) whose fit scores highest, the newer on a tie."""
    scored = [(fits[v].score, i, v) for i, v in enumerate(versions) if v in fits]
    return max(scored)[2]


def search_undated(versions: list[str], score: Callable[[str], Fit]) -> dict[str, Fit]:
    """The fits of the releases worth trying for a log without dates: samples of every minor
    series, then, within the best-scoring series, bisections beside its best release: the
    newer side first (a tie goes to the newer release), then before the releases tried next
    to it that fit as well, while one there may fit better. VERSIONS oldest first; SCORE fits
    one."""
    fits = {version: score(version) for version in samples(versions)}
    series = minor_series(newest_best(versions, fits))
    members = [v for v in versions if minor_series(v) == series]
    for _ in range(REFINE_STEPS):
        best = members.index(newest_best(members, fits))
        top = fits[members[best]].score
        tried = [i for i, v in enumerate(members) if v in fits]
        newer = min((i for i in tried if i > best), default=len(members))
        start = best  # the first of the releases tried next to it that fit as well
        while start > 0 and members[start - 1] in fits and fits[members[start - 1]].score == top:
            start -= 1
        older = max((i for i in tried if i < start), default=-1)
        if newer - best > 1:
            step = (best + newer) // 2
        elif start - older > 1 and top < 1 and (older < 0 or fits[members[older]].score < top):
            step = (older + start) // 2
        else:
            break
        fits[members[step]] = score(members[step])
    return fits
