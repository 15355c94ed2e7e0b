"""A table of one file that is filled unit by unit as it is read: what a query sees as a
dictionary, and what the unit builders fill without setting off a build of their own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

ALL = object()  # a demand for every unit of the file
MISSING = object()  # no value held for a key
K = TypeVar("K")
V = TypeVar("V")


class Demanded(dict[K, V]):
    """A table of one file filled unit by unit. Read as a dictionary (what queries do),
    a key first builds the units it depends on (DEMAND), and the whole table every unit.
    The builders, which run inside a demand, set keys by item assignment (dict's own: the
    table does not override it) and read with `held`: they see what is built so far and
    build nothing more."""

    __slots__ = ("demand",)

    def __init__(self, demand: Callable[[object], None]) -> None:
        super().__init__()
        self.demand = demand

    # dict's own methods called directly: `super()` costs as much again on these hot paths,
    # and a slot's wrapper (`dict.__getitem__`) more than `dict.get`.
    def __getitem__(self, key: object) -> Any:
        self.demand(key)
        found = dict.get(self, key, MISSING)
        if found is MISSING:
            raise KeyError(key)
        return found

    def get(self, key: object, default: Any = None) -> Any:
        self.demand(key)
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        self.demand(key)
        return dict.get(self, key, MISSING) is not MISSING

    def __iter__(self) -> Iterator[Any]:
        self.demand(ALL)
        return super().__iter__()

    def __len__(self) -> int:
        self.demand(ALL)
        return super().__len__()

    def keys(self) -> Any:
        self.demand(ALL)
        return super().keys()

    def values(self) -> Any:
        self.demand(ALL)
        return super().values()

    def items(self) -> Any:
        self.demand(ALL)
        return super().items()

    # -- for the builders: what is built so far, building nothing ----------------------------
    # (dict's own methods under other names: no call of Python code on the builders' paths)

    held = dict.get
    held_values = dict.values
    held_items = dict.items


class Whole(Demanded[K, V]):
    """A table of one file each of whose keys is filled whole at once (by its unit's build,
    or alone: a step's own entries, a call's targets, a scope's bindings of a name), so that
    a key it holds is read as it is, without asking its demand again."""

    __slots__ = ()

    def __getitem__(self, key: object) -> Any:
        found = dict.get(self, key, MISSING)
        if found is MISSING:
            self.demand(key)
            found = dict.get(self, key, MISSING)
            if found is MISSING:
                raise KeyError(key)
        return found

    def get(self, key: object, default: Any = None) -> Any:
        found = dict.get(self, key, MISSING)
        if found is MISSING:
            self.demand(key)
            return dict.get(self, key, default)
        return found

    def __contains__(self, key: object) -> bool:
        if dict.get(self, key, MISSING) is not MISSING:
            return True
        self.demand(key)
        return dict.get(self, key, MISSING) is not MISSING
