"""A log's starts, as a person counts them: one launch of the server, the lines of all its
ranks. A start begins where the settings are printed (`server_args=ServerArgs(...)`: the class
that holds a setting the formula reads, given by the chain), with the command line and the
launcher's lines just before; a log that prints no settings starts again where a rank prints
its first message again after having printed others."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.match import Matched

END = 10**12


@dataclass(frozen=True, slots=True)
class Start:
    number: int  # 1-based, in the order of the log
    begin: int  # its first log line
    end: int  # the first line of the next start (END for the last)
    marker: str  # what begins it: "ServerArgs(...)", "'Init torch distributed begin.'"
    at: int  # the log line that prints it

    def holds(self, number: int) -> bool:
        return self.begin <= number < self.end


def settings_print(classes: frozenset[str]) -> re.Pattern[str] | None:
    if not classes:
        return None
    names = "|".join(re.escape(c) for c in sorted(classes))
    return re.compile(rf"(?<![\w.])(?:{names})\(\s*\w+=")


def find_starts(
    lines: list[LogLine], matched: list[Matched], rank: str, classes: frozenset[str]
) -> list[Start]:
    """The starts of the log, in order. CLASSES: the settings classes whose print begins a
    start; RANK: the rank whose repeated first message begins one when no settings are
    printed."""
    pattern = settings_print(classes)
    printed = [line for line in lines if pattern is not None and pattern.search(line.message)]
    found = [
        (with_launch(lines, x.number), f"{settings_name(x.message, pattern)}(...)", x.number)
        for x in printed
        if pattern is not None
    ]
    begins, why = repeated_first(lines, matched, rank)
    begins = earliest_rank(lines, matched, rank, begins)
    # A rank's first message again begins a start, unless a settings print began it already.
    previous = begins[0]
    for begin, (marker, at) in zip(begins, why, strict=True):
        if not any(previous < b <= begin for b, _, _ in found) and (begin > previous or not found):
            found.append((begin, marker, at))
        previous = begin
    found.sort()
    if lines:
        found[0] = (min(found[0][0], lines[0].number), *found[0][1:])
    ends = [b for b, _, _ in found[1:]] + [END]
    return [
        Start(i + 1, begin, end, marker, at)
        for i, ((begin, marker, at), end) in enumerate(zip(found, ends, strict=True))
    ]


def earliest_rank(
    lines: list[LogLine], matched: list[Matched], rank: str, begins: list[int]
) -> list[int]:
    """Ranks interleave: a start begins with the first of its ranks to begin it again."""
    out = list(begins)
    for other in {m.line.rank for m in matched} - {rank, ""}:
        theirs, _ = repeated_first(lines, matched, other)
        if len(theirs) != len(begins):
            continue  # that rank did not start as often: it says nothing of where starts are
        for k in range(1, len(out)):
            if out[k - 1] < theirs[k] < out[k]:
                out[k] = theirs[k]
    return out


def settings_name(message: str, pattern: re.Pattern[str]) -> str:
    found = pattern.search(message)
    return found[0].split("(", 1)[0] if found else ""


def with_launch(lines: list[LogLine], number: int, by_rank: bool = False) -> int:
    """NUMBER moved back over the lines just before it that no server process printed (the
    command line; BY_RANK: the launcher's own, which no rank tags): they belong to the start
    they precede."""
    index = next(i for i, line in enumerate(lines) if line.number == number)
    while index > 0 and not (lines[index - 1].ranks or (lines[index - 1].time and not by_rank)):
        index -= 1
    return lines[index].number


def repeated_first(
    lines: list[LogLine], matched: list[Matched], rank: str
) -> tuple[list[int], list[tuple[str, int]]]:
    """Where RANK prints its first message again, after having printed others since."""
    mine = [m for m in matched if m.line.rank == rank] or matched
    if not mine:
        return [lines[0].number if lines else 1], [("the first line", 1)]
    first = mine[0].template
    begins = [mine[0].line.number]
    marker = repr(first.literal.strip()) + (f" ({rank})" if rank else "")
    why = [(marker, mine[0].line.number)]
    others = False
    for m in mine[1:]:
        if m.template != first:
            others = True
        elif others:
            begin = m.line.number
            if rank:  # the launcher's lines just before belong to this start
                begin = with_launch(lines, begin, by_rank=True)
            begins.append(begin)
            why.append((marker, m.line.number))
            others = False
    return begins, why
