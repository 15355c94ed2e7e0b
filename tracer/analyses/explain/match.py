"""Log lines matched to the logging calls that printed them, with the values of their holes.
The templates come from the source itself: a distinctive literal piece of each message is
grepped in the snapshot, and only the files it is found in are read for logging calls. A line
no template prints as it is may still be another build's line of the same call (`loose.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from tracer.analyses.explain.logread import LogLine, zeros
from tracer.analyses.explain.loose import (
    LooseMatch,
    Shape,
    loose_match,
    read_loosely,
    shape_of,
    weighed,
)
from tracer.analyses.explain.templates import NUMBER, Hole, Template, file_templates
from tracer.store.facts import Facts
from tracer.versions import TEMPLATES

MAX_MESSAGE = 4096
MIN_NEEDLE = 8  # a literal piece shorter than this is too common to find the right file
MAX_FILES_PER_NEEDLE = 60
NEEDLES_PER_MESSAGE = 3
MAX_SHAPES = 4096  # shapes of messages remembered with their templates
MAX_NEEDLES = 1024  # pieces of messages looked up in the source, per log (real logs: < 200)
NUMBER_TEXT = re.compile(rf"^(?:{NUMBER})$")
PIECES = re.compile(r"\d+|(?<=[.,;:=])\s|(?<==)")
DIGIT = re.compile(r"[0-9]")


@dataclass(frozen=True, slots=True)
class Observation:
    """One value a log line shows, and the hole of the logging call that printed it."""

    line: LogLine
    template: Template
    hole: Hole
    value: float | None  # None for a value that is not a number
    raw: str
    derived: str = ""  # how it was derived when the line does not print it as such
    loose: bool = False  # read by its label from a line another build of the call printed

    @property
    def where(self) -> str:
        return f"log line {self.line.number}" + (f" ({self.line.rank})" if self.line.rank else "")


@dataclass(frozen=True, slots=True)
class Matched:
    line: LogLine
    template: Template
    observations: tuple[Observation, ...]
    loose: LooseMatch | None = None  # how the line differs, when it matched loosely


@dataclass(frozen=True, slots=True)
class Found:
    template: Template
    values: dict[int, str]  # part index of each hole -> the text the line shows for it
    loose: LooseMatch | None = None


def hole_values(template: Template, message: str) -> Found | None:
    """The values MESSAGE shows for TEMPLATE's holes: as the call prints the line, or loosely
    (by their labels) as another build of it does."""
    return found_values(Choice(template, template.pattern, False), message)


@dataclass(frozen=True, slots=True)
class Candidate:
    template: Template
    pattern: re.Pattern[str]
    shape: Shape | None  # its words and labels, to read a line of another build by
    free: bool  # no digit in its literal text: whether it prints a line depends on its shape


@dataclass(slots=True)
class Candidates:
    """The templates a message of one shape (its digits all 0) may be printed by: TRIED in
    the order a message is matched against them as printed (the heaviest, the most literal
    text, first), LOOSE in the order their files were found. What a `free` template makes of
    a message depends on its shape alone: known once (PRINTS, READS), and where the choice
    for a message looked at free templates only, it is CHOSEN for every message of the
    shape."""

    tried: tuple[Candidate, ...]
    loose: tuple[Candidate, ...]
    prints: list[bool | None]  # by TRIED: whether a free template prints the shape as it is
    reads: list[tuple[int, int] | None | Literal[False]]  # by LOOSE: a free one's weight
    chosen: Choice | None | Literal[False] = False  # False: not chosen for the shape


@dataclass(frozen=True, slots=True)
class Choice:
    template: Template
    pattern: re.Pattern[str]
    loose: bool  # the line is another build's of the call: read by its labels


class TemplateFinder:
    """Finds the logging call of each message, reading each file's templates once. What it
    remembers is bounded whatever the log: MAX_SHAPES shapes of messages, MAX_NEEDLES pieces
    of text looked up in the source."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.by_file: dict[str, list[Template]] = {}
        self.shapes: dict[str, Candidates] = {}
        self.by_template: dict[int, Candidate] = {}  # of the templates in by_file
        self.needles: set[str] = set()
        self.warnings: list[str] = []

    def templates(self, path: str) -> list[Template]:
        found = self.by_file.get(path)
        if found is None:
            # Kept in the fact cache by content: a file's templates are read once per machine.
            key = self.facts.key(path)
            cached = self.facts.cached(TEMPLATES, key)
            if isinstance(cached, list):
                found = [replace(t, file=path) for t in cached]
            else:
                try:
                    found = file_templates(path, self.facts.snapshot.read(path))
                    self.facts.keep(TEMPLATES, key, found)
                except (OSError, ValueError) as exc:
                    self.warnings.append(f"{path}: logging calls not read ({exc})")
                    found = []
            self.by_file[path] = found
        return found

    def match(self, message: str, shape: str | None = None) -> Found | None:
        """The logging call that printed MESSAGE and the values it shows; SHAPE: MESSAGE with
        its digits all 0, when the reader has it."""
        chosen = self.choose(message, shape)
        return found_values(chosen, message.strip()) if chosen is not None else None

    def choose(self, message: str, shape: str | None = None) -> Choice | None:
        """The logging call that printed MESSAGE: as it is (the heaviest that prints it), else
        the one whose words and labels it shows best."""
        if len(message) > MAX_MESSAGE and len(message.strip()) > MAX_MESSAGE:
            return None  # holes match lazily: a huge line costs too much for what it carries
        message = message.strip()
        key = (shape if shape is not None else zeros(message)).strip()
        known = self.shapes.get(key)
        if known is None:
            if len(self.shapes) >= MAX_SHAPES:
                self.shapes.clear()  # a log of ever new shapes: forget, and find them again
            known = self.shapes[key] = self.candidates(message)
        if known.chosen is not False:
            return known.chosen
        free = True
        for index, candidate in enumerate(known.tried):
            free = free and candidate.free
            prints = known.prints[index]
            if prints is None:
                prints = candidate.pattern.fullmatch(message) is not None
                if candidate.free:
                    known.prints[index] = prints
            if prints:
                chosen: Choice | None = Choice(candidate.template, candidate.pattern, False)
                break
        else:
            free = free and all(c.free for c in known.loose)
            chosen = self.loosely(known, message)
        if free:
            known.chosen = chosen
        return chosen

    def candidates(self, message: str) -> Candidates:
        found = [
            self.candidate(t) for path in self.files_for(message) for t in self.templates(path)
        ]
        # Stable: among as heavy templates, the first found.
        tried = sorted(found, key=lambda c: -weight_of(c.template))
        return Candidates(tuple(tried), tuple(found), [None] * len(tried), [False] * len(found))

    def candidate(self, template: Template) -> Candidate:
        found = self.by_template.get(id(template))
        if found is None:
            free = not any(map(DIGIT.search, literals(template)))
            found = Candidate(template, template.pattern, shape_of(template.parts), free)
            self.by_template[id(template)] = found
        return found

    def loosely(self, known: Candidates, message: str) -> Choice | None:
        """The template MESSAGE fits best when read by its words and labels."""
        best: tuple[tuple[int, int], Candidate] | None = None
        for index, candidate in enumerate(known.loose):
            reads = known.reads[index]
            if reads is False:
                found = read_loosely(candidate.shape, message)
                reads = weighed(candidate.shape, found) if candidate.shape and found else None
                if candidate.free:
                    known.reads[index] = reads
            if reads is not None and (best is None or reads > best[0]):
                best = (reads, candidate)
        return Choice(best[1].template, best[1].pattern, True) if best else None

    def files_for(self, message: str) -> list[str]:
        """Files holding the longest literal pieces of MESSAGE (cut at numbers and at the
        punctuation where implicit concatenation and holes usually split a message), of the
        first MAX_NEEDLES pieces this finder looked up."""
        pieces = sorted(
            {p.strip() for p in PIECES.split(message) if len(p.strip()) >= MIN_NEEDLE},
            key=len,
            reverse=True,
        )
        found: dict[str, None] = {}
        for needle in [p for p in pieces if any(c.isalpha() for c in p)][:NEEDLES_PER_MESSAGE]:
            if needle not in self.needles:
                if len(self.needles) >= MAX_NEEDLES:
                    continue  # each new piece is a search of every file of the source
                self.needles.add(needle)
            paths = self.facts.mentioning(needle)
            if len(paths) <= MAX_FILES_PER_NEEDLE:
                found.update(dict.fromkeys(paths))
        return list(found)


def found_values(chosen: Choice, message: str) -> Found | None:
    """The values MESSAGE shows for the holes of the template CHOSEN for it."""
    template = chosen.template
    if not chosen.loose:
        exact = chosen.pattern.fullmatch(message)
        if exact is not None:
            values = {
                i: exact[f"h{i}"] for i, p in enumerate(template.parts) if isinstance(p, Hole)
            }
            return Found(template, values)
    loose = loose_match(template, message)
    return Found(template, loose.values, loose) if loose is not None else None


def weight_of(template: Template) -> int:
    return sum(len(p) for p in template.parts if isinstance(p, str))


def literals(template: Template) -> list[str]:
    """The literal text of TEMPLATE: its pieces and the literals it chooses between."""
    return [
        text
        for part in template.parts
        if not isinstance(part, Hole)
        for text in (part if isinstance(part, tuple) else (part,))
    ]


def matched_line(line: LogLine, found: Found) -> Matched:
    """LINE as printed by FOUND's template, with the values it shows."""
    template = found.template
    loose = found.loose is not None
    observations: list[Observation] = []
    printed: dict[str, float] = {}
    for index, raw in sorted(found.values.items()):
        part = template.parts[index]
        assert isinstance(part, Hole)
        value = to_number(raw)
        observations.append(Observation(line, template, part, value, raw, loose=loose))
        if value is not None:
            printed[part.expr] = value
    observations.extend(derived(line, template, observations, printed))
    return Matched(line, template, tuple(observations), found.loose)


def derived(
    line: LogLine, template: Template, observations: list[Observation], printed: dict[str, float]
) -> list[Observation]:
    """Values a line implies without printing them: `usage = before - after` printed with
    `after` gives `before` (the first measurement of the difference)."""
    found: list[Observation] = []
    for observation in observations:
        hole = observation.hole
        if observation.value is None or not hole.minuend or hole.subtrahend not in printed:
            continue
        value = observation.value + printed[hole.subtrahend]
        shown = (
            f"{hole.subtrahend} + {hole.expr} = "
            f"{printed[hole.subtrahend]:g} + {observation.value:g}"
        )
        synthetic = Hole(
            expr=hole.minuend,
            spec=hole.spec,
            names=(hole.minuend,),
            measured_by=hole.minuend_measured_by,
            simple=True,
        )
        found.append(
            Observation(
                line,
                template,
                synthetic,
                round(value, 6),
                f"{value:g}",
                derived=shown,
                loose=observation.loose,
            )
        )
    return found


def to_number(raw: str) -> float | None:
    cleaned = raw.strip().replace(",", "").replace("_", "")
    if not NUMBER_TEXT.match(cleaned):
        return None
    try:
        return float(cleaned)
    except ValueError:
        return None
