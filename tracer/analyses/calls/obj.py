"""What a value may be, as the call graph's value follower (tracer/analyses/calls/objects.py)
names it, and the questions its parts (names: bindings.py, containers: contents.py) ask it
back (`Follower`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tracer.extract.facts import Shape, Value


@dataclass(frozen=True, slots=True)
class Obj:
    """A value: KIND is "function" (NAME a function or lambda, of the tree or outside it),
    "method" (NAME a method, bound to its receiver), "class", "instance" (NAME its class),
    "const" (KEY its value), "box" (a container: the display SHAPE written in SCOPE of the
    file NAME, at LINE)."""

    kind: str
    name: str = ""
    scope: str = ""
    shape: Shape | None = None
    line: int = 0
    key: object = None


UNKNOWN = Obj("unknown")  # a value nothing here can name (a key it stands for: any key)
Objs = frozenset[Obj]
NONE: Objs = frozenset()
Where = tuple[str, str, int]  # where a value is read: (path, scope, line)


class Follower(Protocol):
    """What the parts of the value follower ask of it."""

    def value(self, path: str, scope: str, value: Value, line: int) -> Objs:
        """What VALUE (read in SCOPE at LINE) may hold."""
        ...

    def shape(self, path: str, scope: str, shape: Shape | None, line: int) -> Objs:
        """What the expression SHAPE (read in SCOPE at LINE) may hold."""
        ...

    def name(self, path: str, scope: str, name: str, line: int) -> Objs:
        """What NAME (dotted) may hold in SCOPE at LINE."""
        ...

    def parameter(self, function: str, name: str) -> Objs:
        """What parameter NAME of FUNCTION holds."""
        ...

    def attributes(self, objs: Objs, path: str) -> Objs:
        """What `x.PATH` (dotted) holds when x may be each of OBJS."""
        ...

    def straight(self, path: str, line: int) -> bool:
        """Is the statement at LINE at the top level of its scope (no branch or loop)?"""
        ...
