"""What reading a class's construction (`interpret.py`) works with and records: a value with
the inputs it is computed from (`Val`), each write of a field and the decisions on its branch,
the conditions read from something unknown (`Assumed`), a value the log prints by name (`Fit`),
and what a method sees beyond its class (`Surroundings`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from tracer.analyses.explain.classcode import Unknown


@dataclass(frozen=True, slots=True)
class Val:
    value: object  # int, float, str, bool, None, a tuple of them, or Unknown
    deps: frozenset[str] = frozenset()  # the inputs it is computed from

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown)


@dataclass(frozen=True, slots=True)
class Decision:
    """A condition that chose the branch a statement is on: it gave TAKEN (an `else` is on
    its chain's last condition being false)."""

    line: int
    condition: str
    taken: bool


@dataclass(frozen=True, slots=True)
class Write:
    field: str
    value: Val
    line: int
    function: str  # Class.method
    code: str  # the right side
    branch: tuple[Decision, ...]


@dataclass(frozen=True, slots=True)
class Assumed:
    """A condition read from something unknown: taken as false unless flipped."""

    key: int  # its start byte in the file
    line: int
    condition: str
    unknown: str
    otherwise: object = None  # the value it decides, with the condition true instead


@dataclass
class Run:
    fields: dict[str, Val]
    writes: dict[str, Write] = field(default_factory=dict)  # the last write of each field
    history: list[Write] = field(default_factory=list)  # every write, in order
    assumed: dict[int, Assumed] = field(default_factory=dict)
    statements: int = 0
    complete: bool = True  # False: stopped at MAX_STATEMENTS


# What a local assigned by a call is worth when the code cannot know it: (name, call) -> value.
External = Callable[[str, str, int], Val | None]


class Returned(Exception):
    def __init__(self, value: Val) -> None:
        self.value = value


class Raised(Exception):
    pass


class TooLong(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Fit:
    """A value the log prints by name (`max_cache_size: 85292`), taken where the code's
    expression for it reads an unknown (UNKNOWN, which the value lets one solve)."""

    name: str
    line: int
    expression: Node
    local: dict[str, Val]
    value: Val
    unknown: str


SETTINGS = Val(Unknown("the settings object"))  # what `self.server_args` holds, in a method


def nothing_logged(name: str) -> Val | None:
    return None


@dataclass
class Surroundings:
    """What a method sees beyond its own class: the settings object by the name the code
    gives it (`server_args` for ServerArgs), with its fields' values; the values the log
    prints by name; values given for unknown expressions (by their text)."""

    bag_name: str = ""
    bag: dict[str, Val] = field(default_factory=dict)
    logged: Callable[[str], Val | None] = nothing_logged
    overrides: dict[str, object] = field(default_factory=dict)
    fits: list[Fit] = field(default_factory=list)
