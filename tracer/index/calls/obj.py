"""What a value may be, as the call graph's value follower (tracer/index/calls/objects.py)
names it, and the questions its parts (names: bindings.py, containers: contents.py) ask it
back (`Follower`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from tracer.extract.facts import Call, Shape, Value


@dataclass(frozen=True, slots=True)
class Obj:
    """A value: KIND is "function" (NAME a function or lambda, of the tree or outside it),
    "method" (NAME a method, bound to its receiver), "class", "instance" (NAME its class),
    "const" (KEY its value), "module" (NAME a module of the tree), "box" (a container: the
    display SHAPE written in SCOPE of the file NAME, at LINE). A GUESS is one of several
    values chosen at run time by a string (`getattr(obj, name)` where name may be several
    constants): a call of it is a guess, which the call graph leaves out."""

    kind: str
    name: str = ""
    scope: str = ""
    shape: Shape | None = None
    line: int = 0
    key: object = None
    guess: bool = False


UNKNOWN = Obj("unknown")  # a value nothing here can name (a key it stands for: any key)
Objs = frozenset[Obj]
NONE: Objs = frozenset()
Where = tuple[str, str, int]  # where a value is read: (path, scope, line)


def guessed(objs: Iterable[Obj]) -> Objs:
    """OBJS as guesses (what nothing here can name stays unknown)."""
    return frozenset(obj if obj is UNKNOWN else replace(obj, guess=True) for obj in objs)


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

    def global_name(self, module: str, name: str) -> Objs:
        """What NAME holds as a global of MODULE, read from another scope."""
        ...

    def parameter(self, function: str, name: str) -> Objs:
        """What parameter NAME of FUNCTION holds."""
        ...

    def result(self, path: str, call: Call) -> Objs:
        """What CALL returns."""
        ...

    def attribute(self, objs: Objs, attr: str) -> Objs:
        """What `x.ATTR` holds when x may be each of OBJS."""
        ...

    def attributes(self, objs: Objs, path: str) -> Objs:
        """What `x.PATH` (dotted) holds when x may be each of OBJS."""
        ...

    def straight(self, path: str, line: int) -> bool:
        """Is the statement at LINE at the top level of its scope (no branch or loop)?"""
        ...
