"""The units of a file: a top-level function, a method of a top-level class with all that is
nested in it, a top-level class's own body, the module's code. A file's tables are built one
unit at a time, and its cached rows are stored by unit, so that a query loads and builds only
the units it reaches. `RowIndex` says where everything is without loading a row."""

from __future__ import annotations

from dataclasses import dataclass

from tracer.facts import MODULE_SCOPE, FileFlows, FileSummary

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


@dataclass(frozen=True, slots=True)
class RowIndex:
    """Where a file's facts are, by unit, and the few columns queries filter rows by; each
    part is cached apart (see `tracer.rows.FileRows`), as queries ask for one or another."""

    units: tuple[str, ...]  # in the order a whole-file build first meets them
    sizes: tuple[int, ...]  # per MEMBER_KINDS: how many members
    runs: tuple[Runs, ...]  # per MEMBER_KINDS: which unit holds each member
    assign_scopes: tuple[str, ...]
    return_scopes: tuple[str, ...]
    self_writes: dict[str, tuple[int, ...]]  # ATTR -> the assignments to `self.ATTR`
    callees: dict[str, tuple[int, ...]]  # last name of a callee -> the calls' ids
    binders: dict[str, tuple[int, ...]]  # last name of an assignment target -> units


# Members of one kind as runs: (first index, unit) where a run of consecutive members of one
# unit starts (a unit's code is mostly one stretch of the file: a few runs per unit).
Runs = tuple[tuple[int, int], ...]


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
        runs=tuple(runs_of(kind) for kind in owners),
        assign_scopes=tuple(scopes[MEMBER_KINDS.index("assigns")]),
        return_scopes=tuple(scopes[MEMBER_KINDS.index("returns")]),
        self_writes={attr: tuple(found) for attr, found in self_writes.items()},
        callees={name: tuple(ids) for name, ids in callees.items()},
        binders={name: tuple(sorted(units)) for name, units in binders.items()},
    )


def runs_of(owners: list[int]) -> Runs:
    """OWNERS (the unit of each member, in order) as runs."""
    return tuple((i, unit) for i, unit in enumerate(owners) if i == 0 or owners[i - 1] != unit)


def members_of(runs: tuple[Runs, ...], sizes: tuple[int, ...], unit: int) -> list[list[int]]:
    """Per kind, the indices of UNIT's members: its RUNS unrolled (SIZES: members per kind)."""
    members: list[list[int]] = []
    for kind_runs, size in zip(runs, sizes, strict=True):
        indices: list[int] = []
        for i, (start, owner) in enumerate(kind_runs):
            if owner == unit:
                end = kind_runs[i + 1][0] if i + 1 < len(kind_runs) else size
                indices.extend(range(start, end))
        members.append(indices)
    return members
