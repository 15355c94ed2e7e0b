"""A file's flows as rows of plain tuples, the form they are cached in: unpickling tuples of
strings and ints is several times faster than rebuilding thousands of frozen fact objects,
and a query reads few of them. `Rows` turns a row into its fact the first time it is read.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar, overload

from tracer.facts import Arg, Assign, Call, FileFlows, Return, Target, Use, Value
from tracer.values import NOTHING

ROWS_VERSION = "4"  # of the cached layout
ROWS_PARTS = 5  # pickles in a file's entry: calls, assigns, returns, uses, calls' heads
T = TypeVar("T")
Row = tuple[Any, ...]


class Rows(Sequence[T]):
    """A read-only sequence of facts made from ROWS on first access, one at a time; ROWS may
    come pickled, and are then unpickled on first use (a query reads the calls of many
    files it never reads the statements of). HEADS, pickled apart, are the few columns a
    query reads of many rows it makes no fact of (a call's scope and callee)."""

    __slots__ = ("heads_pickled", "loaded", "made", "make", "pickled")

    def __init__(
        self, rows: tuple[Row, ...] | bytes, make: Callable[[Row], T], heads: bytes | None = None
    ) -> None:
        self.pickled = rows if isinstance(rows, bytes) else None
        self.loaded = None if isinstance(rows, bytes) else rows
        self.make = make
        self.made: list[T | None] | None = None
        self.heads_pickled = heads

    @property
    def rows(self) -> tuple[Row, ...]:
        if self.loaded is None:
            assert self.pickled is not None
            self.loaded = pickle.loads(self.pickled)
            self.pickled = None
        return self.loaded

    @property
    def heads(self) -> tuple[Row, ...] | None:
        """The rows' heads, unpickled (once); None when they came without."""
        found = self.heads_pickled
        if isinstance(found, bytes):
            found = self.heads_pickled = pickle.loads(found)
        return found  # type: ignore[return-value]

    def __len__(self) -> int:
        if self.loaded is None and self.heads_pickled is not None:
            return len(self.heads)  # type: ignore[arg-type]
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.rows)))]
        if self.made is None:
            self.made = [None] * len(self.rows)
        made = self.made[index]
        if made is None:
            made = self.made[index] = self.make(self.rows[index])
        return made

    def __iter__(self) -> Iterator[T]:
        return map(self.__getitem__, range(len(self.rows)))


def encode(fact: Any) -> Any:
    """A fact (or a tuple of facts) as nested tuples of its field values, in field order."""
    if isinstance(fact, tuple):
        return tuple(encode(item) for item in fact)
    if is_dataclass(fact):
        return tuple(encode(getattr(fact, f.name)) for f in fields(fact))
    return fact


def encode_flows(flows: FileFlows) -> tuple[bytes, ...]:
    """FLOWS as rows, one pickle per kind of fact (calls, assigns, returns, uses), equal
    strings and tuples shared within each: pickle then writes each once, and loading makes
    each once (about twice as fast to load); then the calls' heads (scope, callee)."""
    kinds = tuple(share(encode(tuple(getattr(flows, f.name))), {}) for f in fields(flows))
    heads = share(tuple((call.scope, call.callee) for call in flows.calls), {})
    return tuple(pickle.dumps(rows, pickle.HIGHEST_PROTOCOL) for rows in (*kinds, heads))


def share(item: Any, seen: dict[Any, Any]) -> Any:
    """ITEM with equal strings and tuples made one object (tuples keyed with the types of
    their items too, so that `(0,)` never stands for `(False,)`)."""
    if isinstance(item, str):
        return seen.setdefault(item, item)
    if isinstance(item, tuple):
        item = tuple(share(part, seen) for part in item)
        return seen.setdefault((item, tuple(map(type, item))), item)
    if isinstance(item, dict):
        return {share(key, seen): share(value, seen) for key, value in item.items()}
    return item


EMPTY_VALUE = encode(NOTHING)


def value(row: Row) -> Value:
    return NOTHING if row == EMPTY_VALUE else Value(*row)


def values(rows: tuple[Row, ...]) -> tuple[Value, ...]:
    return tuple(map(value, rows))


def arg(row: Row) -> Arg:
    keyword, position, star, read, line, end_line = row
    return Arg(keyword, position, star, value(read), line, end_line)


def call(row: Row) -> Call:
    id_, scope, callee, receiver, args, discarded, line, end_line = row
    return Call(
        id_, scope, callee, value(receiver), tuple(map(arg, args)), discarded, line, end_line
    )


def assign(row: Row) -> Assign:
    scope, targets, read, items, op, annotation, line, end_line = row
    found = tuple(Target(*target) for target in targets)
    return Assign(scope, found, value(read), values(items), op, annotation, line, end_line)


def return_(row: Row) -> Return:
    scope, read, items, line, end_line = row
    return Return(scope, value(read), values(items), line, end_line)


def use(row: Row) -> Use:
    scope, read, line, end_line = row
    return Use(scope, value(read), line, end_line)


def decode_flows(encoded: tuple[bytes, ...]) -> FileFlows:
    """Flows over the rows ENCODED holds; each kind is unpickled, and each fact made, when
    first read."""
    calls, assigns, returns, uses, heads = encoded
    return FileFlows(
        calls=Rows(calls, call, heads),
        assigns=Rows(assigns, assign),
        returns=Rows(returns, return_),
        uses=Rows(uses, use),
    )


def rows_of(facts: Sequence[Any]) -> tuple[Row, ...]:
    """The rows of FACTS: those it was made from, else encoded now."""
    return facts.rows if isinstance(facts, Rows) else tuple(map(encode, facts))


def call_heads(calls: Sequence[Call]) -> tuple[tuple[str, str], ...]:
    """(scope, callee) of each of CALLS, without unpickling their rows when they came with
    heads."""
    heads = calls.heads if isinstance(calls, Rows) else None
    if heads is None:
        heads = tuple((row[CALL_SCOPE], row[CALLEE]) for row in rows_of(calls))
    return heads  # type: ignore[return-value]


def where(facts: Sequence[T], test: Callable[[Row], bool]) -> Iterator[tuple[int, T]]:
    """(index, fact) of the FACTS whose row passes TEST; only those facts are made."""
    for index, row in enumerate(rows_of(facts)):
        if test(row):
            yield index, facts[index]


# Row fields the filters read (positions follow the dataclasses' field order).
SCOPE = 0  # of an Assign, a Return, a Use
TARGETS = 1  # of an Assign: ((path, index), ...)
CALL_SCOPE = 1  # of a Call
CALLEE = 2  # of a Call
DISCARDED = 5  # of a Call: its result is thrown away
HEAD_SCOPE, HEAD_CALLEE = 0, 1  # of a call's head
