"""What a step reads, recorded in its file's tables: the names of a value (a Value's row), the
resolved calls whose results it takes, and the names it reaches only through calls outside
the tree (opaque), each indexed by name and by attribute for the queries that follow reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tracer.graph.step_tables import Read, StepTables
from tracer.graph.steps import Step, StepRow
from tracer.store.rows import ARG_VALUE, VALUE_CALLS, VALUE_REFS, Row, row_at

NO_REFS: frozenset[str] = frozenset()
# Calls whose result is their argument's value, converted or combined, or holds it (a list,
# a tuple, a dict: `dict(settings=x)` holds x): the value flows on.
VALUE_PRESERVING = frozenset(
    [
        "int",
        "float",
        "round",
        "abs",
        "min",
        "max",
        "sum",
        "bool",
        "str",
        "list",
        "tuple",
        "dict",
        "sorted",
        "reversed",
        "math.floor",
        "math.ceil",
        "math.prod",
    ]
)


def record_reads(
    tables: StepTables, step: Step | StepRow, scope: str, value: Row, extra: tuple[str, ...] = ()
) -> None:
    """Note what STEP reads (VALUE, a Value's row). A resolved call contributes its result;
    an unresolved one its receiver (`tensor.item()`) and its arguments: as the value itself
    for conversions (`int(x)`), else as an opaque input (`mem_get_info(gpu_id)` does not
    return gpu_id). TABLES are STEP's file's."""
    if not value[VALUE_CALLS] and not extra:  # the common case: names only
        index_reads(tables, step, scope, value[VALUE_REFS], NO_REFS, ())
        return
    refs, opaque, results = value_reads(value, extra, tables.targets.held, tables.calls)
    for call_id in results:
        tables.consumers.setdefault(call_id, []).append(step.id)
    index_reads(tables, step, scope, refs, opaque, results)


def value_reads(
    value: Row,
    extra: tuple[str, ...],
    resolved: Callable[[int], object],
    calls: Sequence[Any],
) -> tuple[tuple[str, ...], frozenset[str], tuple[int, ...]]:
    """What a step reading VALUE (and the names EXTRA) reads, as `record_reads` notes it:
    the names, in order; those it reaches only as inputs of calls it cannot see into; the
    calls whose results it takes. RESOLVED tells (truthy) whether a call of CALLS (the
    file's) is resolved."""
    refs: dict[str, bool] = dict.fromkeys(extra, False)  # ref -> reached only opaquely
    results: list[int] = []
    pending: list[tuple[Row, bool]] = [(value, False)]
    while pending:
        current, opaque = pending.pop()
        for ref in current[VALUE_REFS]:
            refs[ref] = refs.get(ref, True) and opaque
        for call_id in current[VALUE_CALLS]:
            if resolved(call_id):
                results.append(call_id)
                continue
            _, _, callee, receiver_value, args, _, _, _ = row_at(calls, call_id)
            receiver = callee.rpartition(".")[0]
            if receiver and receiver != "super()":
                refs[receiver] = refs.get(receiver, True) and opaque
            pending.append((receiver_value, opaque))
            keeps_value = callee in VALUE_PRESERVING
            pending.extend((arg[ARG_VALUE], opaque or not keeps_value) for arg in args)
    opaque = frozenset(ref for ref, hidden in refs.items() if hidden) or NO_REFS
    return tuple(refs), opaque, tuple(results)


def index_reads(
    tables: StepTables,
    step: Step | StepRow,
    scope: str,
    refs: tuple[str, ...],
    opaque: frozenset[str],
    results: tuple[int, ...],
) -> None:
    """Keep what STEP reads, and index each ref: by (scope, name), or by attribute."""
    tables.refs[step.id] = refs
    tables.opaque[step.id] = opaque
    tables.results[step.id] = results
    for ref in refs:
        base, _, name = ref.rpartition(".")
        if base:
            tables.append(tables.attr_reads, name, Read(step.id, scope, base, step.line))
        else:
            tables.append(tables.local_reads, (scope, ref), step.id)
