"""A file's flows as rows of plain tuples, the form they are cached in: unpickling tuples of
strings and ints is several times faster than rebuilding thousands of frozen fact objects,
and a query reads few of them. `Rows` turns a row into its fact the first time it is read.
"""

from __future__ import annotations

import pickle
import struct
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import Any, Generic, TypeVar, overload

from tracer.extract.facts import (
    Arg,
    Assign,
    Call,
    FileFlows,
    FileSummary,
    Raise,
    Return,
    Target,
    Use,
    Value,
)
from tracer.extract.values import NOTHING
from tracer.store.units import MEMBER_KINDS, ROW_KINDS, ROW_MEMBER, index_rows, members_of

# Parts of a file's entry: where the units are (names, sizes, spans, where each unit's rows
# end in the rows part); the columns the resolver reads (assignments and returns by scope,
# `self.x` writes, each assignment's targets); the calls by their callee's last name, and the
# locals called that may hold classes; each call's scope and callee; assignment targets by
# last name; the units' rows, each unit's pickled apart, one after the other; what the call
# graph reads of the whole file (assignment patterns, yields, raises). Each part but the rows
# is one pickle.
ROWS_PARTS = 7
LAYOUT, COLUMNS, CALLEES, HEADS, BINDERS, CHUNKS, OBJECTS = range(ROWS_PARTS)
T = TypeVar("T")
Row = tuple[Any, ...]


class Column(Generic[T]):
    """A column of one of a FileRows' parts (the whole part when INDEX is None)."""

    def __init__(self, part: int, index: int | None = None) -> None:
        self.number = part
        self.index = index

    def __get__(self, rows: FileRows, owner: type | None = None) -> T:
        found = rows.part(self.number)
        return found if self.index is None else found[self.index]  # type: ignore[no-any-return]


class FileRows:
    """A file's rows as cached: pickled unit by unit (see `tracer.store.units`), each unit's rows
    unpickled, from where they lie in the rows part, the first time one of them is read: a
    query reads few units of the files it touches. The other parts, each unpickled when first
    asked, answer what a query asks of many rows it makes no fact of."""

    __slots__ = ("loaded", "members", "parts", "runs")

    def __init__(self, *parts: bytes | memoryview) -> None:
        self.parts: list[Any] = list(parts)
        self.loaded: list[list[Row | None]] | None = None  # per ROW_KINDS, per row
        self.members: dict[int, list[list[int]]] = {}  # unit -> per MEMBER_KINDS: indices
        # Per MEMBER_KINDS: where each range of members starts, and its unit, in order.
        self.runs: list[tuple[list[int], list[int]] | None] = [None] * len(MEMBER_KINDS)

    def part(self, number: int) -> Any:
        found = self.parts[number]
        if isinstance(found, (bytes, memoryview)):
            # Fresh, or a view into an entry whose checksum held (Facts.rows): intact bytes,
            # the units' rows within (`load`) too.
            found = self.parts[number] = pickle.loads(found)
        return found

    # What the parts hold: each is unpickled, whole, when one of its columns is first read.
    units = Column[tuple[str, ...]](LAYOUT, 0)
    sizes = Column[tuple[int, ...]](LAYOUT, 1)  # per MEMBER_KINDS
    assigns_by_scope = Column[dict[str, tuple[int, ...]]](COLUMNS, 0)
    returns_by_scope = Column[dict[str, tuple[int, ...]]](COLUMNS, 1)
    self_writes = Column[dict[str, tuple[int, ...]]](COLUMNS, 2)
    assign_targets = Column[tuple[tuple[str, ...], ...]](COLUMNS, 3)  # per assignment
    callees = Column[dict[str, tuple[int, ...]]](CALLEES, 0)  # last name -> ids of its calls
    # (scope, name) of the plain names called where they are bound only to names' values.
    called_locals = Column[frozenset[tuple[str, str]]](CALLEES, 1)
    binders = Column[dict[str, tuple[int, ...]]](BINDERS)
    objects = Column[tuple[Any, ...]](OBJECTS)  # (patterns, yields, raises, straight)

    def call_head(self, call_id: int) -> tuple[str, str]:
        """The scope and the callee (as written) of the call CALL_ID."""
        scopes, callees = self.part(HEADS)
        return scopes[call_id], callees[call_id]

    def call_line(self, call_id: int) -> int:
        """The line of the call CALL_ID (its unit's rows are read)."""
        line: int = self.row(ROW_KINDS.index("calls"), call_id)[CALL_LINE]
        return line

    def owner(self, kind: int, i: int) -> int:
        """The unit (position in `units`) of member I of KIND (a position in MEMBER_KINDS)."""
        runs = self.runs[kind]
        if runs is None:
            spans = self.part(LAYOUT)[2]
            found = sorted((start, unit) for unit, s in enumerate(spans) for start, _ in s[kind])
            runs = self.runs[kind] = ([start for start, _ in found], [unit for _, unit in found])
        starts, units = runs
        return units[bisect_right(starts, i) - 1]

    def unit_members(self, unit: int) -> list[list[int]]:
        """Per MEMBER_KINDS, the indices of the members of UNIT (a position in `units`)."""
        found = self.members.get(unit)
        if found is None:
            found = self.members[unit] = members_of(self.part(LAYOUT)[2][unit])
        return found

    def row(self, kind: int, i: int) -> Row:
        """Row I of KIND (a position in ROW_KINDS)."""
        if self.loaded is None:
            self.loaded = [[None] * self.sizes[member] for member in ROW_MEMBER]
        found = self.loaded[kind][i]
        if found is None:
            self.load(self.owner(ROW_MEMBER[kind], i))
            found = self.loaded[kind][i]
        return found  # type: ignore[return-value]

    def load(self, unit: int) -> None:
        assert self.loaded is not None
        members = self.unit_members(unit)
        ends = self.part(LAYOUT)[3]
        chunk = memoryview(self.parts[CHUNKS])[ends[unit - 1] if unit else 0 : ends[unit]]
        for kind, rows in enumerate(pickle.loads(chunk)):
            loaded = self.loaded[kind]
            for i, row in zip(members[ROW_MEMBER[kind]], rows, strict=True):
                loaded[i] = row


class Rows(Sequence[T]):
    """One kind of a file's facts, each made from its row the first time it is read."""

    __slots__ = ("file_rows", "kind", "made", "make")

    def __init__(self, file_rows: FileRows, kind: int, make: Callable[[Row], T]) -> None:
        self.file_rows = file_rows
        self.kind = kind
        self.make = make
        self.made: list[T | None] | None = None

    def row(self, index: int) -> Row:
        return self.file_rows.row(self.kind, index)

    def __len__(self) -> int:
        return self.file_rows.sizes[ROW_MEMBER[self.kind]]

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if self.made is None:
            self.made = [None] * len(self)
        made = self.made[index]
        if made is None:
            made = self.made[index] = self.make(self.file_rows.row(self.kind, index))
        return made

    def __iter__(self) -> Iterator[T]:
        return map(self.__getitem__, range(len(self)))


def value_row(value: Value) -> Row:
    return (value.refs, value.calls, value.arithmetic, value.literal, value.shape)


def arg_row(arg: Arg) -> Row:
    return (arg.keyword, arg.position, arg.star, value_row(arg.value), arg.line, arg.end_line)


def call_row(call: Call) -> Row:
    args = tuple(map(arg_row, call.args))
    receiver = value_row(call.receiver)
    return (
        call.id,
        call.scope,
        call.callee,
        receiver,
        args,
        call.discarded,
        call.line,
        call.end_line,
    )


def assign_row(assign: Assign) -> Row:
    targets = tuple((target.path, target.index) for target in assign.targets)
    items = tuple(map(value_row, assign.items))
    value = value_row(assign.value)
    return (
        assign.scope,
        targets,
        value,
        items,
        assign.op,
        assign.annotation,
        assign.line,
        assign.end_line,
    )


def return_row(ret: Return) -> Row:
    items = tuple(map(value_row, ret.items))
    return (ret.scope, value_row(ret.value), items, ret.line, ret.end_line)


def use_row(use: Use) -> Row:
    return (use.scope, value_row(use.value), use.line, use.end_line)


ROW_OF: dict[type, Callable[[Any], Row]] = {
    Call: call_row,
    Assign: assign_row,
    Return: return_row,
    Use: use_row,
}


def encode(fact: Call | Assign | Return | Use) -> Row:
    """A fact as the nested tuples of its field values, in field order (what `call`,
    `assign`, `return_` and `use` read back)."""
    return ROW_OF[type(fact)](fact)


def encode_flows(flows: FileFlows, summary: FileSummary) -> tuple[bytes, ...]:
    """FLOWS as cached (see FileRows), the rows of each unit (calls, assigns, returns,
    uses) pickled apart. Equal strings and tuples are shared within each pickle: pickle then
    writes each once, and loading makes each once."""
    index = index_rows(flows, summary)
    kinds = [tuple(getattr(flows, kind)) for kind in ROW_KINDS]
    members = [members_of(spans) for spans in index.spans]
    chunks = tuple(
        dumps(
            tuple(
                tuple(encode(facts[i]) for i in unit[ROW_MEMBER[kind]])
                for kind, facts in enumerate(kinds)
            )
        )
        for unit in members
    )
    layout = (index.units, index.sizes, index.spans, tuple(accumulate(map(len, chunks))))
    columns = (
        index.assigns_by_scope,
        index.returns_by_scope,
        index.self_writes,
        index.assign_targets,
    )
    calls = (index.callees, index.called_locals)
    heads = (index.call_scopes, index.call_callees)
    parts = (layout, columns, calls, heads, index.binders)
    raises = tuple((r.scope, value_row(r.value), r.line) for r in flows.raises)
    objects = (dict(flows.patterns), flows.yields, raises, flows.straight)
    return (*map(dumps, parts), b"".join(chunks), dumps(objects))


# A file's entry: the parts' lengths, then the parts one after the other (read back as views
# into the entry: copying them out, as unpickling a tuple of them did, cost more than the rest).
ENTRY_HEAD = struct.Struct(f">{ROWS_PARTS}Q")


def pack_parts(parts: tuple[bytes, ...]) -> bytes:
    """PARTS (as `encode_flows` makes them) as one entry."""
    return ENTRY_HEAD.pack(*map(len, parts)) + b"".join(parts)


def unpack_parts(entry: bytes | memoryview | None) -> tuple[memoryview, ...] | None:
    """The parts ENTRY holds, as views into it; None when it holds no such parts."""
    if entry is None or len(entry) < ENTRY_HEAD.size:
        return None
    view = memoryview(entry)
    lengths = ENTRY_HEAD.unpack_from(view)
    if ENTRY_HEAD.size + sum(lengths) != len(view):
        return None
    parts = []
    start = ENTRY_HEAD.size
    for length in lengths:
        parts.append(view[start : start + length])
        start += length
    return tuple(parts)


def dumps(item: Any) -> bytes:
    return pickle.dumps(share(item, {}), pickle.HIGHEST_PROTOCOL)


def share(item: Any, seen: dict[Any, Any]) -> Any:
    """ITEM with equal strings and tuples made one object (tuples keyed with the types of
    their items too, so that `(0,)` never stands for `(False,)`)."""
    kind = type(item)
    if kind is str:
        return seen.setdefault(item, item)
    if kind is tuple:
        parts = []
        for part in item:  # strings inline, numbers as they are: most parts are leaves
            part_kind = type(part)
            if part_kind is str:
                part = seen.setdefault(part, part)
            elif part_kind is tuple or part_kind is dict:
                part = share(part, seen)
            parts.append(part)
        item = tuple(parts)
        types = tuple(map(type, item))
        if dict in types:
            return item  # unhashable
        return seen.setdefault((item, types), item)
    if kind is dict:
        return {share(key, seen): share(value, seen) for key, value in item.items()}
    return item


EMPTY_VALUE = value_row(NOTHING)


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


def decode_flows(file_rows: FileRows) -> FileFlows:
    """Flows over FILE_ROWS; each unit's rows are unpickled, and each fact made, when first
    read."""
    patterns, yields, raises, straight = file_rows.objects
    return FileFlows(
        calls=Rows(file_rows, 0, call),
        assigns=Rows(file_rows, 1, assign),
        returns=Rows(file_rows, 2, return_),
        uses=Rows(file_rows, 3, use),
        patterns=patterns,
        yields=yields,
        raises=tuple(Raise(scope, value(read), line) for scope, read, line in raises),
        straight=straight,
    )


def row_at(facts: Sequence[Any], index: int) -> Row:
    """The row of FACTS[INDEX], without making the fact (or the others' rows) when cached."""
    return facts.row(index) if isinstance(facts, Rows) else encode(facts[index])


def file_rows(flows: FileFlows, summary: FileSummary) -> FileRows:
    """FLOWS' rows as cached; flows made otherwise (SUMMARY is their file's) are encoded."""
    calls = flows.calls
    if isinstance(calls, Rows):
        return calls.file_rows
    return FileRows(*encode_flows(flows, summary))


# Row fields the filters read (positions follow the dataclasses' field order).
SCOPE = 0  # of an Assign, a Return, a Use
TARGETS = 1  # of an Assign: ((path, index), ...)
CALL_SCOPE = 1  # of a Call
CALLEE = 2  # of a Call
DISCARDED = 5  # of a Call: its result is thrown away
CALL_LINE = 6  # of a Call
ASSIGN_LINE = 6  # of an Assign
ASSIGN_VALUE = 2  # of an Assign
CALL_ARGS = 4  # of a Call
VALUE_REFS, VALUE_CALLS, VALUE_ARITHMETIC = 0, 1, 2  # of a Value
VALUE_LITERAL = 3  # of a Value
VALUE_SHAPE = 4  # of a Value
ARG_VALUE = 3  # of an Arg
