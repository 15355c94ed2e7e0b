"""Collections made when first read: what a file's flows hold for the call graph alone (its
assignment patterns, yields, raises, straight lines) is left in the cache entry until asked."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar, overload

T = TypeVar("T")


class LaterMapping(Mapping[int, Any]):
    """The mapping MAKE gives, made when first read."""

    __slots__ = ("made", "make")

    def __init__(self, make: Callable[[], Mapping[int, Any]]) -> None:
        self.make = make
        self.made: Mapping[int, Any] | None = None

    def value(self) -> Mapping[int, Any]:
        if self.made is None:
            self.made = self.make()
        return self.made

    def __getitem__(self, key: int) -> Any:
        return self.value()[key]

    def get(self, key: int, default: Any = None) -> Any:
        return self.value().get(key, default)

    def __iter__(self) -> Iterator[int]:
        return iter(self.value())

    def __len__(self) -> int:
        return len(self.value())


class LaterSet(AbstractSet[int]):
    """The set MAKE gives, made when first read."""

    __slots__ = ("made", "make")

    def __init__(self, make: Callable[[], AbstractSet[int]]) -> None:
        self.make = make
        self.made: AbstractSet[int] | None = None

    def value(self) -> AbstractSet[int]:
        if self.made is None:
            self.made = self.make()
        return self.made

    def __contains__(self, item: object) -> bool:
        return item in self.value()

    def __iter__(self) -> Iterator[int]:
        return iter(self.value())

    def __len__(self) -> int:
        return len(self.value())


class LaterSequence(Sequence[T]):
    """The sequence MAKE gives, made when first read."""

    __slots__ = ("made", "make")

    def __init__(self, make: Callable[[], Sequence[T]]) -> None:
        self.make = make
        self.made: Sequence[T] | None = None

    def value(self) -> Sequence[T]:
        if self.made is None:
            self.made = self.make()
        return self.made

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        return self.value()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self.value())

    def __len__(self) -> int:
        return len(self.value())
