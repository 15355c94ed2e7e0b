"""What one file binds, writes, reads and calls, by name: a small summary of its flows that
tells a query whether the file can contribute at all before its tables are built.

Every set here is a superset of what the file's tables hold (a file it lets through may still
give nothing), except `writes`, which is exactly the tables' attribute writes. It is cached
per file like the flows, and loads far faster (strings and tuples, no fact objects).
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable, ItemsView, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tracer.extract.facts import (
    MODULE_SCOPE,
    Call,
    FileFlows,
    FileSummary,
    Value,
    compact_pickle,
)
from tracer.store.rows import share
from tracer.store.step_ids import StepId, field_id, target_id
from tracer.store.units import top_classes, unit_of

FLAG_METHODS = frozenset({"add_argument"})
# An attribute write: (step id, scope, base, line); base "<class>" for a class-level field.
Write = tuple[StepId, str, str, int]
V = TypeVar("V")


class Pickled(Generic[V]):
    """A value kept pickled until first asked: most files a query loads names for are ruled
    out by one of their parts alone, and unpickling the others would cost more than that."""

    __slots__ = ("data", "loaded")

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = data  # a view into the cache entry it was read from, or fresh bytes
        self.loaded: V | None = None

    def value(self) -> V:
        if self.loaded is None:
            # Fresh, or from an entry whose checksum held (Facts.cached): intact bytes.
            self.loaded = pickle.loads(self.data)
        return self.loaded

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.data == self.data  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.data)

    def __reduce__(self) -> tuple[type, tuple[bytes]]:
        return type(self), (bytes(self.data),)


class Table(Pickled[dict[str, V]]):
    """Name -> V, unpickled whole when first asked: a file's attribute reads (compact:
    strings shared across names)."""

    __slots__ = ()

    @classmethod
    def of(cls, table: dict[str, V]) -> Table[V]:
        return cls(pickle.dumps(table, pickle.HIGHEST_PROTOCOL))

    def get(self, name: str, default: Any = ()) -> V:
        return self.value().get(name, default)


class ByName(Pickled[dict[str, bytes]], Generic[V]):
    """Name -> V: a file's attribute writes, the bulk of its names; each name's V pickled
    apart, and unpickled when that name is asked (a query asks a file for one)."""

    __slots__ = ("made",)

    def __init__(self, data: bytes | memoryview) -> None:
        super().__init__(data)
        self.made: dict[str, V] = {}

    @classmethod
    def of(cls, table: dict[str, V]) -> ByName[V]:
        each = {name: pickle.dumps(value, pickle.HIGHEST_PROTOCOL) for name, value in table.items()}
        return cls(pickle.dumps(each, pickle.HIGHEST_PROTOCOL))

    def get(self, name: str, default: Any = ()) -> V:
        found = self.made.get(name)
        if found is None:
            data = self.value().get(name)
            if data is None:
                return default  # type: ignore[no-any-return]
            found = self.made[name] = pickle.loads(data)
        return found

    def items(self) -> ItemsView[str, V]:
        return {name: self.get(name) for name in self.value()}.items()


class NameSet(Pickled[frozenset[str]]):
    """A set of names (what a file binds, calls, assigns to `self.`)."""

    __slots__ = ()

    @classmethod
    def of(cls, names: Iterable[str]) -> NameSet:
        return cls(pickle.dumps(frozenset(names), pickle.HIGHEST_PROTOCOL))

    def __contains__(self, name: object) -> bool:
        return name in self.value()

    def isdisjoint(self, names: Iterable[str]) -> bool:
        return self.value().isdisjoint(names)


@compact_pickle
@dataclass(frozen=True, slots=True)
class FileNames:
    binders: NameSet  # names a parameter, field, assignment or flag of the file binds
    writes: ByName[tuple[Write, ...]]  # attribute -> its writes, in the tables' order
    reads: Table[tuple[tuple[str, str], ...]]  # attribute -> (scope, base) of its reads
    flag_dests: frozenset[str]
    flag_generators: frozenset[str]  # scopes whose add_argument takes a computed name
    whole: bool  # a value crosses units (a lambda in a class body): build the file whole
    self_attrs: NameSet  # ATTR of every `self.ATTR = ...` (the resolver types them)


# A file's entry: the lengths of its four tables' pickles, those pickles one after the other
# (read back as views into the entry, not copied out of it), then the rest, pickled.
ENTRY_HEAD = struct.Struct(">4Q")


def pack_names(names: FileNames) -> bytes:
    """NAMES as one cache entry (see `unpack_names`)."""
    tables = (names.binders.data, names.writes.data, names.reads.data, names.self_attrs.data)
    rest = (names.flag_dests, names.flag_generators, names.whole)
    return (
        ENTRY_HEAD.pack(*map(len, tables))
        + b"".join(tables)
        + pickle.dumps(rest, pickle.HIGHEST_PROTOCOL)
    )


def unpack_names(entry: bytes | memoryview | None) -> FileNames | None:
    """The names ENTRY (from `pack_names`, intact) holds; None when it holds none."""
    if entry is None or len(entry) < ENTRY_HEAD.size:
        return None
    view = memoryview(entry)
    tables = []
    start = ENTRY_HEAD.size
    for length in ENTRY_HEAD.unpack_from(view):
        tables.append(view[start : start + length])
        start += length
    try:
        dests, generators, whole = pickle.loads(view[start:])
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError):
        return None  # another layout
    binders, writes, reads, self_attrs = tables
    return FileNames(
        NameSet(binders),
        ByName(writes),
        Table(reads),
        dests,
        generators,
        whole,
        NameSet(self_attrs),
    )


def crosses_units(summary: FileSummary, flows: FileFlows) -> bool:
    """Does a statement or call take the result of a call that lies in another unit?"""
    classes = top_classes(summary)
    calls = flows.calls
    holders: list[tuple[str, tuple[Value, ...]]] = []
    for assign in flows.assigns:
        holders.append((assign.scope, (assign.value, *assign.items)))
    for ret in flows.returns:
        holders.append((ret.scope, (ret.value, *ret.items)))
    for use in flows.uses:
        holders.append((use.scope, (use.value,)))
    for call in calls:
        holders.append((call.scope, (call.receiver, *(arg.value for arg in call.args))))
    for scope, read in holders:
        unit = unit_of(scope, classes)
        for value in read:
            if any(unit_of(calls[c].scope, classes) != unit for c in value.calls):
                return True
    return False


def flag_dest(call: Call) -> str | None:
    """The dest of an `add_argument` call; None when its name is computed (a generator)."""
    dest = next(
        (a.value.literal for a in call.args if a.keyword == "dest" and a.value.literal),
        None,
    )
    if dest is not None:
        return dest
    literals = [a.value.literal for a in call.args if a.keyword is None and a.value.literal]
    names = [s for s in literals if s.startswith("--")] or literals
    return names[0].lstrip("-").replace("-", "_") if names else None


def class_bodies(summary: FileSummary) -> Callable[[int], bool]:
    """A test: is a line directly in a class body (not inside one of its methods)?"""
    spans = [(c.line, c.end_line, True) for c in summary.classes]
    spans += [(f.line, f.end_line, False) for f in summary.functions]
    last = max((end for _, end, _ in spans), default=0)
    in_class = [False] * (last + 2)
    for start, end, is_class in sorted(spans):  # inner spans start later and win
        in_class[start : end + 1] = [is_class] * (end - start + 1)
    return lambda line: line < len(in_class) and in_class[line]


def attribute_writes(
    path: str, summary: FileSummary, flows: FileFlows
) -> dict[str, tuple[Write, ...]]:
    """Class-level fields first, then `x.ATTR (op)= ...` outside class bodies, in order."""
    found: dict[str, list[Write]] = {}
    for klass in summary.classes:
        for field in klass.fields:
            step = field_id(path, klass.qualname, field.name)
            found.setdefault(field.name, []).append((step, klass.qualname, "<class>", field.line))
    bodies = class_bodies(summary)
    for i, assign in enumerate(flows.assigns):
        if bodies(assign.line):
            continue
        for j, target in enumerate(assign.targets):
            if "." in target.path:
                base, _, name = target.path.rpartition(".")
                found.setdefault(name, []).append(
                    (target_id(path, i, j), assign.scope, base, assign.line)
                )
    return {name: tuple(writes) for name, writes in found.items()}


def file_names(path: str, summary: FileSummary, flows: FileFlows) -> FileNames:
    binders: set[str] = set()
    reads: dict[str, set[tuple[str, str]]] = {}

    def read(scope: str, ref: str) -> None:
        base, _, name = ref.rpartition(".")
        if base:
            reads.setdefault(name, set()).add((scope, base))

    def read_value(scope: str, value: Value) -> None:
        # Through every call, resolved or not: a superset of what the tables record.
        pending = [value]
        while pending:
            current = pending.pop()
            for ref in current.refs:
                read(scope, ref)
            for call_id in current.calls:
                call = flows.calls[call_id]
                receiver = call.callee.rpartition(".")[0]
                if receiver and receiver != "super()":
                    read(scope, receiver)
                pending.append(call.receiver)
                pending.extend(arg.value for arg in call.args)

    for function in summary.functions:
        outer = function.qualname.rpartition(".")[0] or MODULE_SCOPE
        for param in function.params:
            binders.add(param.name)
            for ref in param.default_refs:
                read(outer, ref)
    for klass in summary.classes:
        binders.update(field.name for field in klass.fields)
    for assign in flows.assigns:
        for target in assign.targets:
            binders.add(target.path.rpartition(".")[2])
            read(assign.scope, target.path)  # `x.a += v` reads x.a
        for value in (assign.value, *assign.items):
            read_value(assign.scope, value)
    for statement in (*flows.returns, *flows.uses):
        read_value(statement.scope, statement.value)
    for ret in flows.returns:
        for value in ret.items:
            read_value(ret.scope, value)
    dests: set[str] = set()
    generators: set[str] = set()
    for call in flows.calls:
        read_value(call.scope, Value((), (call.id,)))
        if call.callee.rpartition(".")[2] in FLAG_METHODS:
            dest = flag_dest(call)
            if dest is None:
                generators.add(call.scope)
            else:
                dests.add(dest)
    binders.update(dests)
    binders.discard("")
    seen: dict[Any, Any] = {}  # equal strings and tuples pickled (and loaded) once
    return FileNames(
        binders=NameSet.of(binders),
        writes=ByName.of(share(attribute_writes(path, summary, flows), {})),
        reads=Table.of({name: share(tuple(sorted(pairs)), seen) for name, pairs in reads.items()}),
        flag_dests=frozenset(dests),
        flag_generators=frozenset(generators),
        whole=crosses_units(summary, flows),
        self_attrs=NameSet.of(
            t.path[5:]
            for a in flows.assigns
            for t in a.targets
            if t.path.startswith("self.") and t.path.count(".") == 1
        ),
    )
