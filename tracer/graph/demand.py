"""A table of one file that is filled unit by unit as it is read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

ALL = object()  # a demand for every unit of the file


class Demanded(dict):  # type: ignore[type-arg]
    """A table of one file filled unit by unit: reading a key first builds the units it
    depends on (DEMAND); iterating the whole table builds every unit."""

    __slots__ = ("demand",)

    def __init__(self, demand: Callable[[object], None]) -> None:
        super().__init__()
        self.demand = demand

    def __getitem__(self, key: object) -> Any:
        self.demand(key)
        return super().__getitem__(key)

    def get(self, key: object, default: Any = None) -> Any:
        self.demand(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.demand(key)
        return super().__contains__(key)

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
