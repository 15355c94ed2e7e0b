"""What one file binds, writes, reads and calls, by name: a small summary of its flows that
tells a query whether the file can contribute at all before its tables are built.

Every set here is a superset of what the file's tables hold (a file it lets through may still
give nothing), except `writes`, which is exactly the tables' attribute writes. It is cached
per file like the flows, in parts (tracer/store/parts.py), each read when first asked: a
query asks most files' names for one attribute or one name, and rules most files out.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tracer.extract.facts import MODULE_SCOPE, Call, FileFlows, FileSummary, Value
from tracer.store.columns import KeyedPickles
from tracer.store.parts import Parts
from tracer.store.rows import dumps
from tracer.store.step_ids import StepId, field_id, target_id
from tracer.store.units import top_classes, unit_of

FLAG_METHODS = frozenset({"add_argument"})
# An attribute write: (step id, scope, base, line); base "<class>" for a class-level field.
Write = tuple[StepId, str, str, int]
# Parts of a file's entry: the flags' dests and generators and whether the file is built
# whole, pickled (read with the entry); then the tables, each read when first asked.
FLAGS, BINDERS, WRITES, READS, SELF_ATTRS = range(5)
NAMES_PARTS = 5


class NameSet:
    """A set of names, unpickled when first asked: most files a query loads names for are
    ruled out by another of their parts."""

    __slots__ = ("loaded", "number", "parts")

    def __init__(self, parts: Parts, number: int) -> None:
        self.parts = parts
        self.number = number
        self.loaded: frozenset[str] | None = None

    def value(self) -> frozenset[str]:
        if self.loaded is None:
            self.loaded = pickle.loads(self.parts.checked(self.number))
        return self.loaded

    def __contains__(self, name: object) -> bool:
        return name in self.value()

    def isdisjoint(self, names: Iterable[str]) -> bool:
        return self.value().isdisjoint(names)


# Not frozen: a frozen dataclass's __init__ costs five times as much, and a query makes one
# for each of hundreds of files it rules out. Nothing assigns to one.
@dataclass(slots=True)
class FileNames:
    binders: NameSet  # names a parameter, field, assignment or flag of the file binds
    writes: KeyedPickles[tuple[Write, ...]]  # attribute -> its writes, in the tables' order
    reads: KeyedPickles[tuple[tuple[str, str], ...]]  # attribute -> (scope, base) of its reads
    flag_dests: frozenset[str]
    flag_generators: frozenset[str]  # scopes whose add_argument takes a computed name
    whole: bool  # a value crosses units (a lambda in a class body): build the file whole
    self_attrs: NameSet  # ATTR of every `self.ATTR = ...` (the resolver types them)


def read_names(parts: Parts) -> FileNames | None:
    """The names PARTS (from `names_parts`) hold; None when they hold no names."""
    if len(parts) != NAMES_PARTS:
        return None
    dests, generators, whole = pickle.loads(parts.checked(FLAGS))
    return FileNames(
        NameSet(parts, BINDERS),
        KeyedPickles(parts, WRITES),
        KeyedPickles(parts, READS),
        dests,
        generators,
        whole,
        NameSet(parts, SELF_ATTRS),
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
    found = read_names(Parts.made(names_parts(path, summary, flows)))
    assert found is not None
    return found


def names_parts(path: str, summary: FileSummary, flows: FileFlows) -> list[bytes]:
    """The names of the file PATH (its SUMMARY and FLOWS), as the parts of their entry."""
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
    self_attrs = {
        t.path[5:]
        for a in flows.assigns
        for t in a.targets
        if t.path.startswith("self.") and t.path.count(".") == 1
    }
    return [
        dumps((frozenset(dests), frozenset(generators), crosses_units(summary, flows))),
        dumps(frozenset(binders)),
        KeyedPickles.encode(attribute_writes(path, summary, flows)),
        KeyedPickles.encode({name: tuple(sorted(pairs)) for name, pairs in reads.items()}),
        dumps(frozenset(self_attrs)),
    ]
