"""A record a log prints whole (a dataclass's repr, `ServerArgs(model_path='...', ...)`) names
every field of its class, in the order the class declares them: a fingerprint of the releases
whose class has exactly those fields. This module reads the printed records out of a log and
the fields a source's class of that name would print, and compares the two; which releases
to ask, and what the answers decide, is tracer/analyses/explain/release.py's."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tracer.analyses.explain.logread import LogLine
from tracer.extract.facts import ClassDef
from tracer.store.facts import Facts

MIN_FIELDS = 8  # keyword fields a repr must print to be read as a fingerprint
MAX_RECORD_CHARS = 1 << 20  # of a line, read for one record
RECORD_START = re.compile(r"\b([A-Z]\w*)\((\w+)=")
NOT_PRINTED = ("ClassVar", "InitVar", "typing.ClassVar", "dataclasses.InitVar")


@dataclass(frozen=True, slots=True)
class Printed:
    """A record the log prints: its class's name and the fields it shows, in order."""

    name: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Difference:
    """How a class's fields differ from a printed record's."""

    missing: tuple[str, ...]  # printed, but not fields of the class: the log is newer
    extra: tuple[str, ...]  # fields of the class the log does not print: the log is older

    @property
    def exact(self) -> bool:
        return not self.missing and not self.extra

    @property
    def size(self) -> int:
        return len(self.missing) + len(self.extra)


def printed_records(lines: Iterable[LogLine]) -> list[Printed]:
    """The records printed whole in LINES (`Name(a=..., b=..., ...)`, at least MIN_FIELDS
    keywords at its top level), the last of each class name, in the order first seen."""
    found: dict[str, Printed] = {}
    for line in lines:
        text = line.message[:MAX_RECORD_CHARS]
        for start in RECORD_START.finditer(text):
            fields = keywords(text, start.end(1) + 1)
            if fields is not None and len(fields) >= MIN_FIELDS:
                found[start[1]] = Printed(start[1], fields)
    return list(found.values())


def keywords(text: str, at: int) -> tuple[str, ...] | None:
    """The keyword names at the top level of the call whose arguments start at AT in TEXT
    (strings, brackets and escapes skipped), read in one pass, never recursively; None when
    the call is not closed in TEXT (a line cut short names only some of the fields) or an
    argument is not a keyword."""
    names: list[str] = []
    depth, quote, token, expecting = 1, "", [], True
    i = at
    while i < len(text) and depth:
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 1 and char == ",":
            expecting, token = True, []
        elif depth == 1 and expecting:
            if char == "=":
                name = "".join(token).strip()
                if not name.isidentifier():
                    return None  # not a repr of keywords after all
                names.append(name)
                expecting = False
            else:
                token.append(char)
        i += 1
    return tuple(names) if depth == 0 else None


def declared_fields(facts: Facts, name: str) -> list[tuple[str, ...]]:
    """The fields each class named NAME in FACTS' tree prints in its repr: its annotated
    class-level names but ClassVars, InitVars and those declared with `repr=False`, in order;
    one tuple per class of that name (a tree may hold several). Only the files whose bytes
    hold `class NAME` are read."""
    found = []
    for path in facts.mentioning(f"class {name}"):
        for klass in facts.summary(path).classes:
            if klass.name == name:
                found.append(printed_fields(klass))
    return found


def printed_fields(klass: ClassDef) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in klass.fields
        if not (f.annotation or "").startswith(NOT_PRINTED) and "repr=False" not in f.code
    )


def difference(printed: Printed, classes: list[tuple[str, ...]]) -> Difference | None:
    """How the nearest of CLASSES (each a class's printed fields) differs from PRINTED; None
    when the tree has no class of that name."""
    if not classes:
        return None
    shown = set(printed.fields)
    nearest = min(classes, key=lambda fields: len(shown.symmetric_difference(fields)))
    declared = set(nearest)
    return Difference(
        tuple(f for f in printed.fields if f not in declared),
        tuple(f for f in nearest if f not in shown),
    )
