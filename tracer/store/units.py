"""The units of a file: a top-level function, a method of a top-level class with all that is
nested in it, a top-level class's own body, the module's code. A file's tables are built one
unit at a time, and its cached rows are stored by unit, so that a query loads and builds only
the units it reaches. `RowIndex` says where everything is without loading a row."""

from __future__ import annotations

from dataclasses import dataclass

from tracer.extract.facts import MODULE_SCOPE, FileFlows, FileSummary, Value

# A unit's members, in this order: indices into the summary's functions and classes, and into
# the flows' assignments, returns, uses and calls.
MEMBER_KINDS = ("functions", "classes", "assigns", "returns", "uses", "calls")
# The flows' kinds of rows, in FileFlows order, and where each sits among MEMBER_KINDS.
ROW_KINDS = ("calls", "assigns", "returns", "uses")
ROW_MEMBER = tuple(MEMBER_KINDS.index(kind) for kind in ROW_KINDS)


def unit_of(scope: str, classes: frozenset[str]) -> str:
    """The part of a file the tables of SCOPE are built with: its top-level function, or its
    method of a top-level class (CLASSES), with all that is nested in it; a top-level class
    alone (its fields); or the module's own code and lambdas."""
    if scope == MODULE_SCOPE:
        return MODULE_SCOPE
    head, _, rest = scope.partition(".")
    if head.startswith("<lambda"):
        return MODULE_SCOPE
    if head in classes and rest:
        return f"{head}.{rest.partition('.')[0]}"
    return head


def top_classes(summary: FileSummary) -> frozenset[str]:
    return frozenset(c.qualname for c in summary.classes if "." not in c.qualname)


# A unit's members of one kind, as (first, end) ranges of consecutive indices: a unit's code
# is mostly one stretch of the file, so a unit has few.
Spans = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class RowIndex:
    """Where a file's facts are, by unit, and the few columns queries filter rows by; each
    part is cached apart (see `tracer.store.rows.FileRows`), as queries ask for one or another."""

    units: tuple[str, ...]  # in the order a whole-file build first meets them
    sizes: tuple[int, ...]  # per MEMBER_KINDS: how many members
    spans: tuple[tuple[Spans, ...], ...]  # per unit, per MEMBER_KINDS: where its members are
    assigns_by_scope: dict[str, tuple[int, ...]]
    returns_by_scope: dict[str, tuple[int, ...]]
    self_writes: dict[str, tuple[int, ...]]  # ATTR -> the assignments to `self.ATTR`
    assign_targets: tuple[tuple[str, ...], ...]  # each assignment's targets (paths)
    callees: dict[str, tuple[int, ...]]  # last name of a callee -> the ids of its calls
    call_scopes: tuple[str, ...]
    call_callees: tuple[str, ...]  # each call's callee as written (`self.pool.alloc`)
    called_locals: frozenset[tuple[str, str]]  # see `called_locals`
    binders: dict[str, tuple[int, ...]]  # last name of an assignment target -> units


def index_rows(flows: FileFlows, summary: FileSummary) -> RowIndex:
    """FLOWS' RowIndex. Units are numbered in the order functions, classes, assignments,
    returns, uses, then calls first name them."""
    classes = top_classes(summary)
    scopes = (
        [f.qualname for f in summary.functions],
        [c.qualname for c in summary.classes],
        [a.scope for a in flows.assigns],
        [r.scope for r in flows.returns],
        [u.scope for u in flows.uses],
        [c.scope for c in flows.calls],
    )
    number: dict[str, int] = {}
    owners = [
        [number.setdefault(unit_of(s, classes), len(number)) for s in kind] for kind in scopes
    ]
    callees: dict[str, list[int]] = {}
    for call in flows.calls:
        if call.callee:
            callees.setdefault(call.callee.rpartition(".")[2], []).append(call.id)
    self_writes: dict[str, list[int]] = {}
    binders: dict[str, set[int]] = {}
    assign_units = owners[MEMBER_KINDS.index("assigns")]
    for i, assign in enumerate(flows.assigns):
        for target in assign.targets:
            if target.path.startswith("self.") and target.path.count(".") == 1:
                self_writes.setdefault(target.path[5:], []).append(i)
            binders.setdefault(target.path.rpartition(".")[2], set()).add(assign_units[i])
    return RowIndex(
        units=tuple(number),
        sizes=tuple(map(len, owners)),
        spans=spans_of(owners, len(number)),
        assigns_by_scope=by_scope(scopes[MEMBER_KINDS.index("assigns")]),
        returns_by_scope=by_scope(scopes[MEMBER_KINDS.index("returns")]),
        self_writes={attr: tuple(found) for attr, found in self_writes.items()},
        assign_targets=tuple(tuple(t.path for t in a.targets) for a in flows.assigns),
        callees={name: tuple(calls) for name, calls in callees.items()},
        call_scopes=tuple(scopes[MEMBER_KINDS.index("calls")]),
        call_callees=tuple(call.callee for call in flows.calls),
        called_locals=called_locals(flows),
        binders={name: tuple(sorted(units)) for name, units in binders.items()},
    )


def called_locals(flows: FileFlows) -> frozenset[tuple[str, str]]:
    """(scope, name) of each plain name called in a scope that binds it only to values read
    from names, never from a call (`Worker = A if c else B; Worker()`): a class chosen there."""
    values: dict[tuple[str, str], list[Value]] = {}
    for assign in flows.assigns:
        for target in assign.targets:
            if "." not in target.path:
                values.setdefault((assign.scope, target.path), []).append(assign.value)
    return frozenset(
        (call.scope, call.callee)
        for call in flows.calls
        if call.callee
        and "." not in call.callee
        and (bound := values.get((call.scope, call.callee)))
        and all(v.refs and not v.calls for v in bound)
    )


def by_scope(scopes: list[str]) -> dict[str, tuple[int, ...]]:
    """Scope -> the indices of the members in it, from SCOPES (the scope of each member)."""
    found: dict[str, list[int]] = {}
    for i, scope in enumerate(scopes):
        found.setdefault(scope, []).append(i)
    return {scope: tuple(indices) for scope, indices in found.items()}


def spans_of(owners: list[list[int]], units: int) -> tuple[tuple[Spans, ...], ...]:
    """Per unit, per kind, the ranges of its members, from OWNERS (per kind, the unit of
    each member)."""
    spans: list[list[list[tuple[int, int]]]] = [[[] for _ in owners] for _ in range(units)]
    for kind, kind_owners in enumerate(owners):
        start = 0
        for i in range(1, len(kind_owners) + 1):
            if i == len(kind_owners) or kind_owners[i] != kind_owners[start]:
                spans[kind_owners[start]][kind].append((start, i))
                start = i
    return tuple(tuple(map(tuple, unit)) for unit in spans)


def members_of(spans: tuple[Spans, ...]) -> list[list[int]]:
    """Per kind, the indices a unit's SPANS cover."""
    members: list[list[int]] = []
    for kind_spans in spans:
        indices: list[int] = []
        for start, end in kind_spans:
            indices.extend(range(start, end))
        members.append(indices)
    return members
