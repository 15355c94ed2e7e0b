"""Which release printed a log, decided by what the log itself says, strongest first:

- a record it prints whole (`ServerArgs(model_path=..., ...)`, fingerprint.py): the releases
  whose class has exactly those fields, found by bisection over the releases in order (a
  field the log prints and a release lacks says the log is newer; one the release has and
  the log does not, older), each release asked only for the files that define the class;
  none exactly: a build made between two releases is said to be one, and explained with the
  release it was made after; one newer than every release, with the newest;
- a version string naming the package (`sglang==0.4.6`, `sglang 0.4.6`);
- the log's dates: only releases uploaded before its last date could have printed it;
- how well each candidate's logging calls print the log's server lines (fit.py), among the
  releases left: the three uploaded last before the log's dates, or, without dates, samples
  of every minor series refined within the best one.

The choice says what decided it. Releases are opened through the callables the caller gives
(the CLI opens them from the package index), so this module names no package."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tracer.analyses.explain.fingerprint import Difference, Printed, difference, printed_records
from tracer.analyses.explain.fit import (
    Fit,
    log_dates,
    named_version,
    newest_best,
    search_undated,
)
from tracer.analyses.explain.logread import Log
from tracer.errors import SgtraceError
from tracer.sources.pypi_index import version_order

CANDIDATES = 3  # releases tried by their fit: the last uploaded before the log
MAX_SAME_FIELDS = 6  # neighbours asked whether they print the same fields too
MAX_FIELDS_SHOWN = 3  # fields named in what decided the choice


@dataclass(frozen=True, slots=True)
class Candidate:
    version: str
    uploaded: str  # YYYY-MM-DD, "" when the index gives none


@dataclass(slots=True)
class Choice:
    """The release chosen for a log, what decided it, and the fits of the releases tried."""

    version: str
    fit: Fit
    tried: list[Fit]
    decided: list[str] = field(default_factory=list)  # what decided it, for people
    between: tuple[str, str] | None = None  # a build made after the first, before the second
    newer: bool = False  # the log is newer than every release that could have printed it


Fits = Callable[[str], Fit]
Fields = Callable[[str, str], list[tuple[str, ...]]]  # (version, class) -> each class's fields


def choose_release(
    log: Log, package: str, known: list[Candidate], fits: Fits, fields: Fields, poor: float
) -> Choice:
    """The release of KNOWN (final releases, oldest first) that printed LOG. FITS scores a
    release against the log, FIELDS gives the fields a release's classes of a name print;
    a fit under POOR does not keep the release a version string names."""
    versions = [c.version for c in known]
    if not versions:
        raise SgtraceError(
            f"no final release of {package} on the index",
            "give SOURCE: pypi:NAME==VERSION, a folder or host:/path",
        )
    dates = log_dates(log)
    possible = [c.version for c in known if dates is None or (c.uploaded or "") <= dates[1]]
    named = named_version(log, package)
    records = printed_records(log)
    if records and possible:
        record = max(records, key=lambda r: len(r.fields))
        until = dates[1] if dates is not None and len(possible) < len(versions) else None
        chosen = by_fields(record, possible, fields, fits, named, until)
        if chosen is not None:
            return chosen
    return by_fit(versions, known, possible, fits, named, dates, poor)


# -- by the fields of a printed record --------------------------------------------------------


def by_fields(
    record: Printed,
    versions: list[str],
    fields: Fields,
    fits: Fits,
    named: str | None,
    until: str | None,
) -> Choice | None:
    """The release whose class RECORD names prints exactly its fields (among those of
    VERSIONS, oldest first: those uploaded before UNTIL, when the log's dates leave out
    later ones), found by bisection; None when no release asked has that class."""
    asked: dict[int, Difference | None] = {}

    def ask(i: int) -> Difference | None:
        if i not in asked:
            asked[i] = difference(record, fields(versions[i], record.name))
        return asked[i]

    low, high, exact = 0, len(versions) - 1, None
    while low <= high:
        middle = (low + high) // 2
        found = ask(middle)
        if found is not None and found.exact:
            exact = middle
            break
        if found is None or len(found.missing) > len(found.extra):  # the log is newer
            low = middle + 1
        else:
            high = middle - 1
    if all(d is None for d in asked.values()):
        return None
    if exact is None:  # a field removed later bends the order: look beside the boundary
        exact = exact_beside(high, low, len(versions), ask)
    shown = f"its {record.name}(...) of {len(record.fields)} fields"
    if exact is not None:
        same = same_fields(exact, len(versions), ask)
        version = pick_among([versions[i] for i in same], fits, named)
        span = (
            versions[same[0]] if len(same) == 1 else f"{versions[same[0]]} to {versions[same[-1]]}"
        )
        decided = [f"{shown} are exactly those of {span}"]
        if len(same) > 1:
            decided.append(
                f"of those, {version}: "
                + (
                    "the version the log names"
                    if version == named
                    else "the best fit, the newer on a tie"
                )
            )
        return Choice(version, fits(version), [], decided)
    if low >= len(versions):  # newer than every release asked
        version = versions[-1]
        found = ask(len(versions) - 1)
        lacks = found.missing if found is not None else record.fields
        return Choice(
            version,
            fits(version),
            [],
            [
                f"{shown} has {count(lacks)} {version} lacks ({some(lacks)}): a build newer "
                "than every release" + (f" uploaded before {until}" if until else "")
            ],
            newer=True,
        )
    if high < 0:  # older than every release asked
        version = versions[0]
        found = ask(0)
        extra = found.extra if found is not None else ()
        return Choice(
            version,
            fits(version),
            [],
            [
                f"{shown} lacks {count(extra)} of {version}'s ({some(extra)}): older than every "
                "release; the oldest taken"
            ],
        )
    before, after = versions[high], versions[low]
    newer, older = ask(high), ask(low)
    gained = newer.missing if newer is not None else ()
    lost = older.extra if older is not None else ()
    return Choice(
        before,
        fits(before),
        [],
        [
            f"{shown} has {count(gained)} {before} lacks ({some(gained)}) and lacks "
            f"{count(lost)} of {after}'s ({some(lost)}): a build made between the two, "
            f"explained with {before}, the release it was made after"
        ],
        between=(before, after),
    )


def exact_beside(
    high: int, low: int, total: int, ask: Callable[[int], Difference | None]
) -> int | None:
    """A release within MAX_SAME_FIELDS of the boundary the bisection ended at (HIGH below
    it, LOW above) whose class prints exactly the record's fields; the nearest first."""
    for distance in range(MAX_SAME_FIELDS + 1):
        for i in (low + distance, high - distance):
            found = ask(i) if 0 <= i < total else None
            if found is not None and found.exact:
                return i
    return None


def same_fields(exact: int, total: int, ask: Callable[[int], Difference | None]) -> list[int]:
    """EXACT and its neighbours that print the same fields (post-releases often do), in order,
    at most MAX_SAME_FIELDS on each side."""
    same = [exact]
    for step in (-1, 1):
        i = exact + step
        while 0 <= i < total and abs(i - exact) <= MAX_SAME_FIELDS:
            found = ask(i)
            if found is None or not found.exact:
                break
            same.append(i)
            i += step
    return sorted(same)


def pick_among(versions: list[str], fits: Fits, named: str | None) -> str:
    """Of VERSIONS (oldest first, printing the same fields), the one the log names, else the
    best fit, the newer on a tie."""
    if named in versions:
        return named  # type: ignore[return-value]
    if len(versions) == 1:
        return versions[0]
    return newest_best(versions, {v: fits(v) for v in versions})


def count(fields: tuple[str, ...]) -> str:
    return f"{len(fields)} field" + ("" if len(fields) == 1 else "s")


def some(fields: tuple[str, ...]) -> str:
    shown = ", ".join(fields[:MAX_FIELDS_SHOWN])
    return shown + (
        f" and {len(fields) - MAX_FIELDS_SHOWN} more" if len(fields) > MAX_FIELDS_SHOWN else ""
    )


# -- by the fit of logging calls -----------------------------------------------------------------


def by_fit(
    versions: list[str],
    known: list[Candidate],
    possible: list[str],
    fits: Fits,
    named: str | None,
    dates: tuple[str, str] | None,
    poor: float,
) -> Choice:
    """The release whose logging calls fit the log best (ties: the newer, and the newest
    post-release of the version that could have printed the log): the release the log names
    first, kept when it fits; then those uploaded last before the log's dates, or, for a log
    without dates, samples of every minor series refined within the best one."""
    tried: dict[str, Fit] = {}
    if named is not None:
        version = nearest(named, versions)
        tried[version] = fits(version)
        if tried[version].score >= poor:
            newer = version_order(named) > version_order(versions[-1])
            said = f"the log names {named}"
            if newer:
                said += f", newer than every release on the index; the nearest, {version}"
            elif version != named:
                said += f", nearest {version}"
            return Choice(version, tried[version], list(tried.values()), [said], newer=newer)
    if dates is None:
        tried |= search_undated(versions, fits)
        decided = ["the best fit of samples of every minor series (the log has no dates)"]
    else:
        before = [c for c in known if c.uploaded and c.uploaded <= dates[1]]
        before.sort(key=lambda c: c.uploaded)
        if not before and not tried:
            raise SgtraceError(
                "no release on the index is older than the log",
                "give SOURCE: pypi:NAME==VERSION, a folder or host:/path",
            )
        tried |= {c.version: fits(c.version) for c in before[-CANDIDATES:]}
        decided = [f"the best fit of the releases uploaded last before {dates[1]}"]
    best = newest_best(versions, tried)
    tried |= later_posts(best, possible, tried, fits)
    version = newest_best(versions, tried)
    return Choice(version, tried[version], list(tried.values()), decided)


def later_posts(
    best: str, versions: list[str], tried: dict[str, Fit], fits: Fits
) -> dict[str, Fit]:
    """The post-releases of BEST's version among VERSIONS newer than it (0.4.2.post4 beside
    0.4.2.post3), when another post-release of that version fits as well as BEST: a tie
    between post-releases, which differ in fixes rather than in what they log, goes to the
    newest."""
    base = best.split(".post")[0]
    same = [v for v in versions if v == base or v.startswith(base + ".post")]
    if best not in same:
        return {}
    top = tried[best].score
    if not any(v != best and v in same and tried[v].score == top for v in tried):
        return {}
    return {v: fits(v) for v in same[same.index(best) + 1 :] if v not in tried}


def nearest(named: str, versions: list[str]) -> str:
    """The release of VERSIONS (in order) that NAMED is, or the newest before it (a build not
    on the index: a nightly, a dev or rc build), or the oldest when all are newer."""
    from tracer.sources.pypi_index import version_key

    exact = [v for v in versions if version_key(v) == version_key(named)]
    if exact:
        return exact[0]
    older = [v for v in versions if version_order(v) <= version_order(named)]
    same = [v for v in versions if version_key(v)[0] == version_key(named)[0]]
    if same and (not older or older[-1] not in same):  # 0.5.10.dev0: a build of 0.5.10
        return same[0]
    return older[-1] if older else versions[0]


def is_final(version: str) -> bool:
    return not any(mark in version for mark in ("rc", "a", "b", "dev"))
