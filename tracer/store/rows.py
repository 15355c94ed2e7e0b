"""A file's flows as rows of plain tuples, the form they are cached in: unpickling tuples of
strings and ints is several times faster than rebuilding thousands of frozen fact objects,
and a query reads few of them. `Rows` turns a row into its fact the first time it is read.
"""

from __future__ import annotations

import pickle
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from itertools import accumulate
from typing import Any, TypeVar, overload

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
from tracer.store.columns import KeyedInts, KeyedPickles, Pickles, Texts
from tracer.store.later import LaterMapping, LaterSequence, LaterSet
from tracer.store.parts import Parts, read_words, words
from tracer.store.units import (
    MEMBER_KINDS,
    ROW_KINDS,
    ROW_MEMBER,
    Spans,
    index_rows,
    members_of,
)

# Parts of a file's entry (tracer/store/parts.py), each read when first asked, in the form its
# readers ask it in (tracer/store/columns.py: a table most readers ask one name or a few is
# keyed, one read whole is pickled): how many members of each kind (MEMBER_KINDS) the file
# has; its units by number; where each range of members starts, and its unit, per kind (who
# owns a member); each unit's ranges; the assignments by scope, and by scope the targets
# assigned; the returns by scope; the `self.x` writes; each assignment's targets; the calls
# by their callee's last name (each call's id, scope and callee); the names the file imports
# or aliases that it calls; the locals called that may hold classes; the calls of a method
# on an expression that is no name, by the method's name; each call's scope and
# callee; the units binding each last name; what the call graph reads of the whole file
# (assignment patterns, yields, raises, straight lines); then each unit's rows, a part each,
# each row pickled apart (a query reads a quarter of the rows of the units it touches: one
# call's line, one assignment's value).
(
    SIZES,
    UNITS,
    RUNS,
    SPANS,
    ASSIGNS_BY_SCOPE,
    SCOPE_TARGETS,
    RETURNS_BY_SCOPE,
    SELF_WRITES,
    TARGET_PATHS,
    TARGET_ENDS,
    CALLEES,
    CALLED_IMPORTS,
    CALLED_LOCALS,
    METHOD_CALLS,
    CALL_SCOPES,
    CALL_CALLEES,
    BINDERS,
    PATTERNS,
    YIELDS,
    RAISES,
    STRAIGHT,
    UNIT_ROWS,  # the first unit's rows: unit N's are part UNIT_ROWS + N
) = range(22)
KINDS = len(MEMBER_KINDS)
T = TypeVar("T")
Row = tuple[Any, ...]
Head = tuple[int, str, str]  # a call's id, scope and callee (as written)
CALL_ROWS = ROW_KINDS.index("calls")
# Per MEMBER_KINDS, its kind of row (a position in ROW_KINDS); None for members with no rows.
MEMBER_ROWS = tuple(ROW_KINDS.index(k) if k in ROW_KINDS else None for k in MEMBER_KINDS)
CHUNK = 16  # rows pickled together: a unit's rows are read by chunk


class Callees(KeyedPickles[tuple[Head, ...]]):
    """The last name of a callee -> its calls' heads (each kept in KNOWN by its call's id)."""

    __slots__ = ("known",)

    def __init__(self, parts: Parts, number: int, known: dict[int, tuple[str, str]]) -> None:
        super().__init__(parts, number)
        self.known = known

    def get(self, key: str, default: Any = ()) -> tuple[int, ...]:  # type: ignore[override]
        """The ids of the calls whose callee's last name is KEY."""
        return tuple(head[0] for head in self.heads(key)) or default  # type: ignore[no-any-return]

    def heads(self, key: str) -> tuple[Head, ...]:
        found = self.made.get(key)
        if found is None:
            found = super().get(key, ())
            for call_id, scope, callee in found:
                self.known[call_id] = scope, callee
        return found


class FileRows:
    """A file's rows as cached: each row unpickled the first time it is read (a query reads
    few rows of the files it touches); the other parts, read when first asked, answer what
    a query asks of many rows it makes no fact of."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.loaded: list[list[Row | None]] | None = None  # per ROW_KINDS, per row
        self.unit_rows: dict[int, Pickles] = {}  # unit -> its rows, each read when asked
        self.members: dict[int, list[list[int]]] = {}  # unit -> per MEMBER_KINDS: indices
        self.heads: dict[int, tuple[str, str]] = {}  # call -> its scope and callee, when read

    def unpickled(self, number: int) -> Any:
        return pickle.loads(self.parts.checked(number))

    @cached_property
    def sizes(self) -> tuple[int, ...]:
        """Per MEMBER_KINDS, how many members the file has."""
        return tuple(read_words(self.parts.checked(SIZES)))

    @cached_property
    def units(self) -> tuple[str, ...]:
        """The units' names by number, in the order a whole-file build meets them."""
        found: tuple[str, ...] = self.unpickled(UNITS)
        return found

    @cached_property
    def unit_numbers(self) -> dict[str, int]:
        return {unit: number for number, unit in enumerate(self.units)}

    @cached_property
    def runs(self) -> memoryview:
        """Per kind where its ranges of members are in what follows, then their starts (by
        kind, in order), their units, and where each range's rows start among its unit's."""
        return read_words(self.parts.checked(RUNS))

    @cached_property
    def spans(self) -> memoryview:
        """Per unit where its ranges are in what follows, then each range's kind, start and
        end."""
        return read_words(self.parts.checked(SPANS))

    @cached_property
    def assigns_by_scope(self) -> KeyedInts:
        """A scope -> the indices of its assignments."""
        return KeyedInts(self.parts, ASSIGNS_BY_SCOPE)

    @cached_property
    def scope_targets(self) -> KeyedPickles[dict[str, list[int]]]:
        """A scope -> each target (a name or dotted path) it assigns to, and where."""
        return KeyedPickles(self.parts, SCOPE_TARGETS)

    @cached_property
    def returns_by_scope(self) -> KeyedInts:
        return KeyedInts(self.parts, RETURNS_BY_SCOPE)

    @cached_property
    def self_writes(self) -> KeyedInts:
        """ATTR -> the assignments to `self.ATTR`."""
        return KeyedInts(self.parts, SELF_WRITES)

    @cached_property
    def target_paths(self) -> Texts:
        return Texts(self.parts, TARGET_PATHS)

    @cached_property
    def target_ends(self) -> memoryview:
        return read_words(self.parts.checked(TARGET_ENDS))

    @cached_property
    def callees(self) -> Callees:
        """The last name of a callee -> the ids (or heads) of its calls."""
        return Callees(self.parts, CALLEES, self.heads)

    @cached_property
    def called_imports(self) -> tuple[str, ...]:
        """The names the file imports or aliases that it calls (in the summary's order)."""
        found: tuple[str, ...] = self.unpickled(CALLED_IMPORTS)
        return found

    @cached_property
    def called_locals(self) -> frozenset[tuple[str, str]]:
        """(scope, name) of the plain names called where they are bound only to names'
        values."""
        found: frozenset[tuple[str, str]] = self.unpickled(CALLED_LOCALS)
        return found

    @cached_property
    def method_calls(self) -> KeyedInts:
        """A method's name -> the ids of its calls on an expression that is no name (`f().m()`,
        `d[k].m()`: no callee, a receiver of shape ("attr", _, NAME))."""
        return KeyedInts(self.parts, METHOD_CALLS)

    @cached_property
    def call_scopes(self) -> Texts:
        return Texts(self.parts, CALL_SCOPES)

    @cached_property
    def call_callees(self) -> Texts:
        """Each call's callee as written (`self.pool.alloc`)."""
        return Texts(self.parts, CALL_CALLEES)

    @cached_property
    def binders(self) -> KeyedInts:
        """The last name of an assignment target -> the units assigning to it."""
        return KeyedInts(self.parts, BINDERS)

    @cached_property
    def patterns(self) -> dict[int, Any]:
        found: dict[int, Any] = self.unpickled(PATTERNS)
        return found

    @cached_property
    def yields(self) -> frozenset[int]:
        found: frozenset[int] = self.unpickled(YIELDS)
        return found

    @cached_property
    def raises(self) -> tuple[Row, ...]:
        found: tuple[Row, ...] = self.unpickled(RAISES)
        return found

    @cached_property
    def straight(self) -> frozenset[int]:
        found: frozenset[int] = self.unpickled(STRAIGHT)
        return found

    def unit_number(self, unit: str) -> int | None:
        """The number of the unit named UNIT; None if the file has none of that name."""
        return self.unit_numbers.get(unit)

    def assign_target(self, index: int) -> tuple[str, ...]:
        """The targets (paths) of the assignment INDEX."""
        ends, paths = self.target_ends, self.target_paths
        return tuple(paths[i] for i in range(ends[index - 1] if index else 0, ends[index]))

    @property
    def assign_targets(self) -> Sequence[tuple[str, ...]]:
        """Each assignment's targets (paths), by index."""
        return Targets(self)

    def call_head(self, call_id: int) -> tuple[str, str]:
        """The scope and the callee (as written) of the call CALL_ID: from its row or its
        callee's heads when either was read (most calls asked for), else from their parts."""
        row = self.loaded[CALL_ROWS][call_id] if self.loaded is not None else None
        if row is not None:
            return row[CALL_SCOPE], row[CALLEE]
        return self.heads.get(call_id) or (self.call_scopes[call_id], self.call_callees[call_id])

    def call_line(self, call_id: int) -> int:
        """The line of the call CALL_ID (its unit's rows are read)."""
        line: int = self.row(CALL_ROWS, call_id)[CALL_LINE]
        return line

    def owner(self, kind: int, i: int) -> int:
        """The unit (a number) of member I of KIND (a position in MEMBER_KINDS)."""
        runs = self.runs
        found = bisect_right(runs, i, KINDS + 1 + runs[kind], KINDS + 1 + runs[kind + 1]) - 1
        return runs[found + runs[KINDS]]

    def place(self, kind: int, i: int) -> tuple[int, int]:
        """The unit (a number) of member I of KIND (a position in MEMBER_KINDS), and where its
        row is among the unit's."""
        runs = self.runs
        found = bisect_right(runs, i, KINDS + 1 + runs[kind], KINDS + 1 + runs[kind + 1]) - 1
        ranges = runs[KINDS]
        return runs[found + ranges], runs[found + 2 * ranges] + i - runs[found]

    def unit_members(self, unit: int) -> list[list[int]]:
        """Per MEMBER_KINDS, the indices of the members of UNIT (a number)."""
        found = self.members.get(unit)
        if found is None:
            spans = self.spans
            found = [[] for _ in MEMBER_KINDS]
            ranges = spans[spans[unit] : spans[unit + 1]].tolist()
            for at in range(0, len(ranges), 3):
                found[ranges[at]].extend(range(ranges[at + 1], ranges[at + 2]))
            self.members[unit] = found
        return found

    def row(self, kind: int, i: int) -> Row:
        """Row I of KIND (a position in ROW_KINDS)."""
        if self.loaded is None:
            self.loaded = [[None] * self.sizes[member] for member in ROW_MEMBER]
        found = self.loaded[kind][i]
        if found is None:
            self.load(*self.place(ROW_MEMBER[kind], i))
            found = self.loaded[kind][i]
        return found  # type: ignore[return-value]

    def load(self, unit: int, position: int) -> None:
        """The rows of the chunk of UNIT (a number) that holds its row POSITION."""
        assert self.loaded is not None
        chunks = self.unit_rows.get(unit)
        if chunks is None:
            chunks = self.unit_rows[unit] = Pickles(self.parts, UNIT_ROWS + unit)
        rows = chunks[position // CHUNK]
        first = position - position % CHUNK
        last = first + len(rows)
        spans = self.spans
        ranges = spans[spans[unit] : spans[unit + 1]].tolist()
        at = 0  # the position of the range's first row
        for r in range(0, len(ranges), 3):
            row_kind = MEMBER_ROWS[ranges[r]]
            if row_kind is None:
                continue
            start, end = ranges[r + 1], ranges[r + 2]
            low, high = max(first, at), min(last, at + end - start)
            if low < high:
                self.loaded[row_kind][start + low - at : start + high - at] = rows[
                    low - first : high - first
                ]
            at += end - start
            if at >= last:
                break


class Targets(Sequence[tuple[str, ...]]):
    """A FileRows' assignment targets, by index (each read from the rows' parts when asked)."""

    __slots__ = ("rows",)

    def __init__(self, rows: FileRows) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows.target_ends)

    @overload
    def __getitem__(self, index: int) -> tuple[str, ...]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, ...]]: ...
    def __getitem__(self, index: int | slice) -> tuple[str, ...] | list[tuple[str, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self.rows.assign_target(index)


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


def encode_flows(flows: FileFlows, summary: FileSummary) -> list[bytes]:
    """FLOWS as cached: the parts of a FileRows, the rows of each unit (calls, assigns,
    returns, uses) pickled apart. Equal strings and tuples are shared within each pickle:
    pickle then writes each once, and loading makes each once."""
    index = index_rows(flows, summary)
    kinds = [tuple(getattr(flows, kind)) for kind in ROW_KINDS]
    unit_rows = [
        Pickles.encode([dumps(rows[at : at + CHUNK]) for at in range(0, len(rows), CHUNK)])
        for rows in (
            tuple(
                encode(kinds[row_kind][i])
                for member, row_kind in enumerate(MEMBER_ROWS)
                if row_kind is not None
                for i in members[member]
            )
            for members in map(members_of, index.spans)
        )
    ]
    heads = {
        name: tuple((i, index.call_scopes[i], index.call_callees[i]) for i in calls)
        for name, calls in index.callees.items()
    }
    local = [i.alias for i in summary.imports] + [a.name for a in summary.aliases]
    raises = tuple((r.scope, value_row(r.value), r.line) for r in flows.raises)
    return [
        words(index.sizes),
        dumps(index.units),
        runs_part(index.spans),
        spans_part(index.spans),
        KeyedInts.encode(index.assigns_by_scope),
        KeyedPickles.encode(scope_targets(index.assigns_by_scope, index.assign_targets)),
        KeyedInts.encode(index.returns_by_scope),
        KeyedInts.encode(index.self_writes),
        Texts.encode(path for paths in index.assign_targets for path in paths),
        words(accumulate(map(len, index.assign_targets))),
        KeyedPickles.encode(heads),
        dumps(tuple(name for name in local if name in index.callees)),
        dumps(index.called_locals),
        KeyedInts.encode(method_calls(flows)),
        Texts.encode(index.call_scopes),
        Texts.encode(index.call_callees),
        KeyedInts.encode(index.binders),
        dumps(dict(flows.patterns)),
        dumps(flows.yields),
        dumps(raises),
        dumps(flows.straight),
        *unit_rows,
    ]


def method_calls(flows: FileFlows) -> dict[str, tuple[int, ...]]:
    """A method's name -> the ids of its calls on an expression that is no name."""
    found: dict[str, list[int]] = {}
    for call in flows.calls:
        shape = call.receiver.shape
        if not call.callee and shape and shape[0] == "attr":
            found.setdefault(shape[2], []).append(call.id)
    return {name: tuple(ids) for name, ids in found.items()}


def scope_targets(
    by_scope: dict[str, tuple[int, ...]], targets: tuple[tuple[str, ...], ...]
) -> dict[str, dict[str, list[int]]]:
    """Per scope, each target it assigns to and the indices of those assignments."""
    found: dict[str, dict[str, list[int]]] = {}
    for scope, indices in by_scope.items():
        table = found[scope] = {}
        for i in indices:
            for target in targets[i]:
                table.setdefault(target, []).append(i)
    return found


def runs_part(spans: tuple[tuple[Spans, ...], ...]) -> bytes:
    """Per kind, where its ranges of members are in the lists that follow; then each range's
    start, by kind and in order; each range's unit; where its rows start among its unit's
    (see `FileRows.place`: a unit's rows are its members' of each kind of row, in
    MEMBER_KINDS order)."""
    ranges: list[list[tuple[int, int, int]]] = [[] for _ in range(KINDS)]  # (start, unit, base)
    for unit, unit_spans in enumerate(spans):
        base = 0
        for kind, kind_spans in enumerate(unit_spans):
            for start, end in kind_spans:
                ranges[kind].append((start, unit, base))
                if MEMBER_ROWS[kind] is not None:
                    base += end - start
    found = [run for kind_ranges in ranges for run in sorted(kind_ranges)]
    bounds = accumulate(map(len, ranges), initial=0)
    return words([*bounds, *(column for columns in zip(*found, strict=True) for column in columns)])


def spans_part(spans: tuple[tuple[Spans, ...], ...]) -> bytes:
    """Per unit, where its ranges are in this list; then each unit's (kind, start, end)."""
    ranges = [
        [value for kind, kind_spans in enumerate(unit) for s in kind_spans for value in (kind, *s)]
        for unit in spans
    ]
    ends = accumulate(map(len, ranges), initial=len(spans) + 1)
    return words([*ends, *(value for unit in ranges for value in unit)])


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
    read; what the call graph reads of the whole file, when first read."""
    return FileFlows(
        calls=Rows(file_rows, 0, call),
        assigns=Rows(file_rows, 1, assign),
        returns=Rows(file_rows, 2, return_),
        uses=Rows(file_rows, 3, use),
        patterns=LaterMapping(lambda: file_rows.patterns),
        yields=LaterSet(lambda: file_rows.yields),
        raises=LaterSequence(lambda: tuple(map(raise_, file_rows.raises))),
        straight=LaterSet(lambda: file_rows.straight),
    )


def raise_(row: Row) -> Raise:
    scope, read, line = row
    return Raise(scope, value(read), line)


def row_at(facts: Sequence[Any], index: int) -> Row:
    """The row of FACTS[INDEX], without making the fact (or the others' rows) when cached."""
    return facts.row(index) if isinstance(facts, Rows) else encode(facts[index])


def file_rows(flows: FileFlows, summary: FileSummary) -> FileRows:
    """FLOWS' rows as cached; flows made otherwise (SUMMARY is their file's) are encoded."""
    calls = flows.calls
    if isinstance(calls, Rows):
        return calls.file_rows
    return FileRows(Parts.made(encode_flows(flows, summary)))


# Row fields the filters read (positions follow the dataclasses' field order).
SCOPE = 0  # of an Assign, a Return, a Use
TARGETS = 1  # of an Assign: ((path, index), ...)
CALL_SCOPE = 1  # of a Call
CALLEE = 2  # of a Call
DISCARDED = 5  # of a Call: its result is thrown away
CALL_LINE = 6  # of a Call
ASSIGN_LINE = 6  # of an Assign
ASSIGN_VALUE = 2  # of an Assign
ASSIGN_OP = 4  # of an Assign
CALL_ARGS = 4  # of a Call
VALUE_REFS, VALUE_CALLS, VALUE_ARITHMETIC = 0, 1, 2  # of a Value
VALUE_LITERAL = 3  # of a Value
VALUE_SHAPE = 4  # of a Value
ARG_VALUE = 3  # of an Arg
