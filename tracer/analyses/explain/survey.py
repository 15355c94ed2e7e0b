"""A log read with one source's logging calls, in two passes that keep what explain needs and
no more, so that a log of any length is read in the same memory: the survey reads every line
and keeps counts, the ranks, where starts begin and the first line of each kind a note names;
then one start's lines are read again and kept, at most KEPT_PER_KIND of each logging call
(or, for a line no call prints, of each shape) per rank: a server that ran for days printed
the same few calls millions of times after its start."""

from __future__ import annotations

from dataclasses import dataclass, field

from tracer.analyses.explain.logread import Log, LogLine
from tracer.analyses.explain.match import (
    Choice,
    Matched,
    TemplateFinder,
    found_values,
    matched_line,
)
from tracer.analyses.explain.starts import END, MAX_RANKS, Start, StartMarks

KEPT_PER_KIND = 256  # a start's lines of one call on one rank (real logs: at most 48)
MAX_KEPT_LINES = 1 << 16
MAX_KEPT_CHARS = 32 << 20


@dataclass(slots=True)
class LooseCall:
    """The lines one logging call printed as another build of it prints them."""

    first: Matched
    count: int = 1


@dataclass(slots=True)
class Survey:
    """What every line of a log adds up to, with one source's logging calls."""

    marks: StartMarks
    lines: int = 0  # non-empty lines
    matched: int = 0  # ... printed by a logging call of the source
    server: int = 0  # lines with a time or a rank: the server's own
    exact: int = 0  # server lines a call prints as they are
    loose: int = 0  # ... as another build of the call prints them
    first_missed: LogLine | None = None  # the first server line no call prints
    ranks: set[str] = field(default_factory=set)  # of the lines a call prints
    loose_calls: dict[tuple[str, int], LooseCall] = field(default_factory=dict)

    @property
    def missed(self) -> int:
        return self.server - self.exact - self.loose


def survey(
    finder: TemplateFinder, log: Log, classes: frozenset[str], server_only: bool = False
) -> Survey:
    """One read of LOG with FINDER's source. CLASSES: the settings classes whose print begins
    a start; SERVER_ONLY: match only the server's lines, and look for no start (all a fit
    needs)."""
    found = Survey(StartMarks(classes))
    see = found.marks.see
    lines = server = exact = loose = matched = 0  # counted here: a log has millions of lines
    for line, shape in log.shaped():
        lines += 1
        stamped = bool(line.time or line.ranks)
        if server_only and not stamped:
            continue
        chosen = finder.choose(line.message, shape)
        if not server_only:
            see(line, chosen.template if chosen is not None else None)
        if stamped:
            server += 1
            if chosen is None:
                found.first_missed = found.first_missed or line
            elif chosen.loose:
                loose += 1
            else:
                exact += 1
        if chosen is None:
            continue
        matched += 1
        if line.rank and len(found.ranks) < MAX_RANKS:
            found.ranks.add(line.rank)
        if chosen.loose:
            loose_call(found, line, chosen)
    found.lines, found.server, found.exact, found.loose = lines, server, exact, loose
    found.matched = matched
    return found


def loose_call(found: Survey, line: LogLine, chosen: Choice) -> None:
    call = (chosen.template.file, chosen.template.line)
    seen = found.loose_calls.get(call)
    if seen is not None:
        seen.count += 1
        return
    values = found_values(chosen, line.message.strip())
    assert values is not None  # a line is matched loosely when its labels are read
    found.loose_calls[call] = LooseCall(matched_line(line, values))


def start_lines(
    finder: TemplateFinder, log: Log, start: Start
) -> tuple[list[LogLine], list[Matched]]:
    """START's lines, at most KEPT_PER_KIND of each kind per rank (MAX_KEPT_LINES and
    MAX_KEPT_CHARS in all), and those a logging call printed, with their values."""
    kept: dict[tuple[object, str], int] = {}
    lines: list[LogLine] = []
    matched: list[Matched] = []
    chars = 0
    last = start.end - 1 if start.end < END else None
    for line, shape in log.shaped(start.begin, last):
        chosen = finder.choose(line.message, shape)
        kind = (id(chosen.template) if chosen is not None else shape, line.rank)
        count = kept.get(kind, 0)
        if count >= KEPT_PER_KIND or len(lines) >= MAX_KEPT_LINES:
            continue
        if chars + len(line.message) > MAX_KEPT_CHARS:
            continue
        kept[kind] = count + 1
        chars += len(line.message)
        lines.append(line)
        values = found_values(chosen, line.message.strip()) if chosen is not None else None
        if values is not None:
            matched.append(matched_line(line, values))
    return lines, matched
