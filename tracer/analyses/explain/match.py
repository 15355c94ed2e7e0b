"""Log lines matched to the logging calls that printed them, with the values of their holes.
The templates come from the source itself: a distinctive literal piece of each message is
grepped in the snapshot, and only the files it is found in are read for logging calls. A line
no template prints as it is may still be another build's line of the same call (`loose.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.loose import LooseMatch, loose_match, weight
from tracer.analyses.explain.templates import NUMBER, Hole, Template, file_templates
from tracer.store.facts import Facts
from tracer.versions import TEMPLATES

MAX_MESSAGE = 4096
MIN_NEEDLE = 8  # a literal piece shorter than this is too common to find the right file
MAX_FILES_PER_NEEDLE = 60
NEEDLES_PER_MESSAGE = 3
NUMBER_TEXT = re.compile(rf"^(?:{NUMBER})$")
PIECES = re.compile(r"\d+|(?<=[.,;:=])\s|(?<==)")


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
    exact = template.pattern.fullmatch(message)
    if exact is not None:
        values = {
            i: exact[f"h{i}"] for i, part in enumerate(template.parts) if isinstance(part, Hole)
        }
        return Found(template, values)
    loose = loose_match(template, message)
    return Found(template, loose.values, loose) if loose is not None else None


class TemplateFinder:
    """Finds the logging call of each message, reading each file's templates once."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.by_file: dict[str, list[Template]] = {}
        self.by_message: dict[str, Template | None] = {}
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

    def match(self, message: str) -> Found | None:
        message = message.strip()
        if len(message) > MAX_MESSAGE:
            return None  # holes match lazily: a huge line costs too much for what it carries
        if message in self.by_message:
            template = self.by_message[message]
            return hole_values(template, message) if template is not None else None
        candidates = [t for path in self.files_for(message) for t in self.templates(path)]
        best: tuple[int, Template, re.Match[str]] | None = None
        for template in candidates:
            found = template.pattern.fullmatch(message)
            if found is None:
                continue
            weight_ = sum(len(p) for p in template.parts if isinstance(p, str))
            if best is None or weight_ > best[0]:
                best = (weight_, template, found)
        chosen = best[1] if best else self.loosely(candidates, message)
        self.by_message[message] = chosen
        return hole_values(chosen, message) if chosen is not None else None

    def loosely(self, candidates: list[Template], message: str) -> Template | None:
        """The template MESSAGE fits best when read by its words and labels."""
        best: tuple[tuple[int, int], Template] | None = None
        for template in candidates:
            found = loose_match(template, message)
            if found is not None and (best is None or weight(template, found) > best[0]):
                best = (weight(template, found), template)
        return best[1] if best else None

    def files_for(self, message: str) -> list[str]:
        """Files holding the longest literal pieces of MESSAGE (cut at numbers and at the
        punctuation where implicit concatenation and holes usually split a message)."""
        pieces = sorted(
            {p.strip() for p in PIECES.split(message) if len(p.strip()) >= MIN_NEEDLE},
            key=len,
            reverse=True,
        )
        found: dict[str, None] = {}
        for needle in [p for p in pieces if any(c.isalpha() for c in p)][:NEEDLES_PER_MESSAGE]:
            paths = self.facts.mentioning(needle)
            if len(paths) <= MAX_FILES_PER_NEEDLE:
                found.update(dict.fromkeys(paths))
        return list(found)


def match_lines(finder: TemplateFinder, lines: list[LogLine]) -> list[Matched]:
    """Every line that a logging call of the source printed, with its values."""
    matched: list[Matched] = []
    for line in lines:
        found = finder.match(line.message)
        if found is None:
            continue
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
        matched.append(Matched(line, template, tuple(observations), found.loose))
    return matched


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
