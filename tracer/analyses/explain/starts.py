"""A log's starts, as a person counts them: one launch of the server, the lines of all its
ranks. A start begins where the settings are printed (`server_args=ServerArgs(...)`: the class
that holds a setting the formula reads, given by the chain), with the command line and the
launcher's lines just before; a log that prints no settings starts again where a rank prints
its first message again after having printed others. What says so is gathered as the log is
read (`StartMarks`), a few numbers per start: no line is kept."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field

from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.templates import Template

END = 10**12
MAX_RANKS = 4096  # ranks followed; a server has a few hundred at most


@dataclass(frozen=True, slots=True)
class Start:
    number: int  # 1-based, in the order of the log
    begin: int  # its first log line
    end: int  # the first line of the next start (END for the last)
    marker: str  # what begins it: "ServerArgs(...)", "'Init torch distributed begin.'"
    at: int  # the log line that prints it

    def holds(self, number: int) -> bool:
        return self.begin <= number < self.end


@dataclass(slots=True)
class FirstAgain:
    """Where one rank prints its first message again, after having printed others since."""

    first: Template
    begins: array[int]  # each time: where the start begins (the launcher's lines before it)
    ats: array[int]  # ... and the line that prints the first message
    others: bool = False  # a message other than the first was printed since the last time


@dataclass(slots=True)
class StartMarks:
    """What begins a start, gathered line by line (`see`): the settings prints of CLASSES
    and each rank's first message printed again; then the starts of one rank (`starts`)."""

    classes: frozenset[str]
    pattern: re.Pattern[str] | None = None
    printed: list[tuple[int, str, int]] = field(default_factory=list)  # (begin, class, at)
    firsts: dict[str, FirstAgain] = field(default_factory=dict)  # by rank, "" for none
    first_line: int = 0  # the log's first non-empty line
    unranked_from: int | None = None  # the first of the lines just seen that no rank tags
    bare_from: int | None = None  # ... that neither a rank nor a time tags

    def __post_init__(self) -> None:
        self.pattern = settings_print(self.classes)

    def see(self, line: LogLine, template: Template | None) -> None:
        """LINE, the next non-empty line of the log, printed by TEMPLATE (None: by no call)."""
        self.first_line = self.first_line or line.number
        pattern = self.pattern  # a settings print names its class: looked for first
        named = pattern is not None and any(c in line.message for c in self.classes)
        if named and pattern is not None and (found := pattern.search(line.message)):
            begin = self.bare_from or line.number  # the command line before it is its own
            self.printed.append((begin, found[0].split("(", 1)[0], line.number))
        if template is not None:
            self.first_again(line, template)
        self.unranked_from = None if line.ranks else self.unranked_from or line.number
        bare = not (line.ranks or line.time)
        self.bare_from = (self.bare_from or line.number) if bare else None

    def first_again(self, line: LogLine, template: Template) -> None:
        """LINE's rank printed TEMPLATE: its first message again, after others?"""
        rank = line.rank
        firsts = self.firsts.get(rank)
        if firsts is None:
            if len(self.firsts) < MAX_RANKS:  # past it, a rank's lines count, not its starts
                at = array("q", [line.number])
                self.firsts[rank] = FirstAgain(template, at, array("q", at))
        elif template is not firsts.first:
            firsts.others = True
        elif firsts.others:
            # The launcher's lines just before a rank's begin belong to its start.
            begin = (self.unranked_from or line.number) if rank else line.number
            firsts.begins.append(begin)
            firsts.ats.append(line.number)
            firsts.others = False

    def starts(self, rank: str) -> list[Start]:
        """The starts of the log, in order; RANK: the rank whose repeated first message
        begins one when no settings are printed."""
        found = [(begin, f"{name}(...)", at) for begin, name, at in self.printed]
        settings = sorted(begin for begin, _, _ in self.printed)
        firsts = self.firsts.get(rank)
        if firsts is None:
            begins, why = [self.first_line or 1], [("the first line", 1)]
        else:
            marker = repr(firsts.first.literal.strip()) + (f" ({rank})" if rank else "")
            begins = self.earliest_rank(rank, list(firsts.begins))
            why = [(marker, at) for at in firsts.ats]
        # A rank's first message again begins a start, unless a settings print began it already.
        previous = begins[0]
        for begin, (marker, at) in zip(begins, why, strict=True):
            between = bisect_right(settings, begin) - bisect_right(settings, previous)
            if not between and (begin > previous or not found):
                found.append((begin, marker, at))
            previous = begin
        found.sort()
        if self.first_line:
            found[0] = (min(found[0][0], self.first_line), *found[0][1:])
        ends = [b for b, _, _ in found[1:]] + [END]
        return [
            Start(i + 1, begin, end, marker, at)
            for i, ((begin, marker, at), end) in enumerate(zip(found, ends, strict=True))
        ]

    def earliest_rank(self, rank: str, begins: list[int]) -> list[int]:
        """Ranks interleave: a start begins with the first of its ranks to begin it again."""
        out = list(begins)
        for other in sorted(set(self.firsts) - {rank, ""}):
            theirs = self.firsts[other].begins
            if len(theirs) != len(begins):
                continue  # that rank did not start as often: it says nothing of where starts are
            for k in range(1, len(out)):
                if out[k - 1] < theirs[k] < out[k]:
                    out[k] = theirs[k]
        return out


def settings_print(classes: frozenset[str]) -> re.Pattern[str] | None:
    if not classes:
        return None
    names = "|".join(re.escape(c) for c in sorted(classes))
    return re.compile(rf"(?<![\w.])(?:{names})\(\s*\w+=")
