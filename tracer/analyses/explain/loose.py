"""A log line from another build of the same logging call (a field added, removed or moved
around the same literal text: `Load weight end. elapsed=778.18 s, type=..., avail mem=...`),
read as a person reads it: the message's own words first, then each value by the label printed
just before it (`avail mem=`, `#tokens: `)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tracer.analyses.explain.templates import NUMBER, Hole, Part, Template

MIN_KEY = 8  # the message's own words: shorter ones are found in too many other messages
# Where a label starts: after a comma, a sentence's end or an opening bracket.
LABEL_START = re.compile(r"[,;]\s+|\.\s+|[(\[{|]")
A_NUMBER = re.compile(NUMBER)
LABEL = re.compile(r"[A-Za-z_#][\w #.\-]{0,38}[=:]")
# A label in a line of the log: `name=` or `name: ` after a separator or at the start.
LOGGED_LABEL = re.compile(r"(?:^|(?<=[,;]\s)|(?<=\.\s))([A-Za-z_#][\w #\-]{0,38}?[=:])(?!=)")


@dataclass(frozen=True, slots=True)
class Labelled:
    """A hole of a template and the label printed before it."""

    index: int  # its position in the template's parts
    label: str  # "avail mem=", "#tokens:"
    hole: Hole


@dataclass(frozen=True, slots=True)
class Shape:
    """What of a template a line from another build still shows."""

    key: str  # the message's own words ("Load weight end.")
    leading: bool  # the template starts with them: so must the line
    labelled: tuple[Labelled, ...]


@dataclass(frozen=True, slots=True)
class LooseMatch:
    values: dict[int, str]  # part index -> the text the line shows after the hole's label
    extra: tuple[str, ...]  # labels the line shows that the template does not print
    missing: tuple[str, ...]  # labels the template prints that the line does not show
    start: int  # where the message's words start in the line (after a progress bar, ...)
    reordered: bool = False  # the line shows the labels in another order


def label_of(literal: str) -> str:
    """The label at the end of LITERAL (`mem usage=` of `" GB, mem usage="`), or ""."""
    tail = LABEL_START.split(literal)[-1].strip()
    return tail if LABEL.fullmatch(tail) and any(c.isalpha() for c in tail) else ""


@lru_cache(maxsize=4096)
def shape_of(parts: tuple[Part, ...]) -> Shape | None:
    """The words and labels of a template; None when it has no words long enough to find a
    line by, or no labelled hole to read a value from."""
    labelled: list[Labelled] = []
    pieces: list[str] = []  # literal text without its labels, in order
    for index, part in enumerate(parts):
        if isinstance(part, Hole):
            before = parts[index - 1] if index else ""
            label = label_of(before) if isinstance(before, str) else ""
            if label:
                labelled.append(Labelled(index, label, part))
        elif isinstance(part, str):
            following = parts[index + 1] if index + 1 < len(parts) else None
            label = label_of(part) if isinstance(following, Hole) else ""
            text = part[: len(part.rstrip()) - len(label)] if label else part
            pieces.append(text.strip(" ,;"))
    if not labelled:
        return None
    key = next((p for p in pieces if len(p) >= MIN_KEY and any(c.isalpha() for c in p)), "")
    leading = bool(key) and isinstance(parts[0], str) and parts[0].lstrip().startswith(key)
    if not key and isinstance(parts[0], str) and label_of(parts[0]) == parts[0].strip():
        key, leading = labelled[0].label, True  # a line of labels only: it starts with its first
    if not key:
        return None
    return Shape(key, leading, tuple(labelled))


@lru_cache(maxsize=4096)
def value_after(label: str, numeric: bool) -> re.Pattern[str]:
    """The value printed after LABEL: a number, or text up to the next field."""
    body = rf"(?:{NUMBER})" if numeric else r"[^,;]*?"
    end = r"(?![\d.])" if numeric else r"(?=,\s|;\s|$)"
    return re.compile(rf"(?<![\w#]){re.escape(label.rstrip())}\s*(?P<v>{body}){end}")


def loose_match(template: Template, message: str) -> LooseMatch | None:
    """MESSAGE read as a line TEMPLATE's call prints in another build: its words found, and
    a number after one of its labels at least; None otherwise."""
    return read_loosely(shape_of(template.parts), message)


def read_loosely(shape: Shape | None, message: str) -> LooseMatch | None:
    """MESSAGE read by the words and labels of SHAPE (a template's, `shape_of`)."""
    if shape is None:
        return None
    at = message.find(shape.key)
    if at < 0 or (shape.leading and message[:at].strip()):
        return None
    values: dict[int, str] = {}
    places: list[int] = []
    numbers = 0
    for labelled in shape.labelled:
        found = value_after(labelled.label, labelled.hole.numeric).search(message, at)
        if found is None:
            continue
        values[labelled.index] = found["v"]
        places.append(found.start())
        numbers += bool(A_NUMBER.fullmatch(found["v"].strip()))
    if not numbers:
        return None
    labels = {norm(x.label) for x in shape.labelled}
    shown = [norm(x) for x in LOGGED_LABEL.findall(message[at:])]
    extra = tuple(dict.fromkeys(x for x in shown if x not in labels))
    missing = tuple(x.label for x in shape.labelled if x.index not in values)
    return LooseMatch(values, extra, missing, at, places != sorted(places))


def norm(label: str) -> str:
    return label.strip()


def weight(template: Template, found: LooseMatch) -> tuple[int, int]:
    """How well a loose match holds: labels read, then the length of the words found."""
    shape = shape_of(template.parts)
    return (len(found.values), len(shape.key) if shape else 0)


def weighed(shape: Shape, found: LooseMatch) -> tuple[int, int]:
    """`weight` of a template of SHAPE."""
    return (len(found.values), len(shape.key))
