"""Values of a dict taken by key on an object's way back. A `**d` argument binds d's constant
keys to the parameters of the same names (see `objects.splat_keys`); going back from the
parameter `k` through `f(**d)` to where d is made (`d = dict(k=v, ...)`, `{"k": v, ...}`,
`d["k"] = v`), only the value at `k` is the parameter's: the others went to other parameters.
These are the questions `route_back` asks to keep to that value."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from tracer.graph.unit_steps import names_of
from tracer.store import step_ids
from tracer.store.rows import (
    ASSIGN_VALUE,
    CALL_ARGS,
    CALLEE,
    VALUE_CALLS,
    VALUE_REFS,
    VALUE_SHAPE,
    row_at,
)

if TYPE_CHECKING:
    from tracer.graph.file_steps import FileTables
    from tracer.graph.steps import Edge, Step


class FlowGraph(Protocol):
    """What these questions ask of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    def file(self, path: str) -> FileTables: ...

    def step(self, step_id: str) -> Step: ...

    def edges(self, step_id: str, forward: bool) -> list[Edge]: ...

    def ref_sources(
        self, tables: FileTables, scope: str, step: Step, ref: str
    ) -> Iterator[Edge]: ...


def splat_key(graph: FlowGraph, arg_step: str, param: str) -> str | None:
    """The key the `**d` argument ARG_STEP gives the parameter PARAM (its name), or None when
    ARG_STEP is no `**d` of a plain name."""
    tables = graph.file(step_ids.file_of(arg_step))
    if tables.steps[arg_step].kind != "call_arg" or tables.elements.get(arg_step) is not None:
        return None
    call_id = step_ids.call_of(arg_step)
    for arg, step in tables.arguments(call_id):
        if step == arg_step:
            refs = arg.value.refs
            if arg.star == 2 and len(refs) == 1 and "." not in refs[0] and not arg.value.calls:
                return graph.step(param).name
    return None


def keyed_sources(graph: FlowGraph, made: str, key: str) -> set[str] | None:
    """The steps the value at KEY of the dict the binding MADE makes may come from, or None
    when MADE makes no dict with constant keys (then every source of it is kept). A
    `d["other"] = v` binding gives nothing at KEY: the empty set."""
    tables = graph.file(step_ids.file_of(made))
    where = step_ids.address(made)
    if where.kind != "a":
        return None
    pattern = tables.flows.patterns.get(where.number)
    if pattern is not None and pattern[0] == "item":  # `d["k"] = v`
        found = pattern[2]
        if isinstance(found, tuple) and found[0] == "const" and isinstance(found[1], str):
            return {e.src for e in graph.edges(made, False)} if found[1] == key else set()
        return None
    refs = value_at(tables, row_at(tables.flows.assigns, where.number)[ASSIGN_VALUE], key)
    if refs is None:
        return None
    step = tables.steps[made]
    scope = tables.scope_of[made]
    return {e.src for ref in refs for e in graph.ref_sources(tables, scope, step, ref)}


def value_at(tables: FileTables, value: tuple, key: str) -> tuple[str, ...] | None:
    """The names the value at KEY of a dict display or `dict(...)` call (VALUE, a Value's
    row) reads; () when it has no such key; None when VALUE is no such dict."""
    shape = value[VALUE_SHAPE]
    if shape is not None and shape[0] == "dict":
        found: tuple[str, ...] | None = ()
        for entry_key, element in shape[1]:
            if not (isinstance(entry_key, tuple) and entry_key[0] == "const"):
                return None
            if entry_key[1] == key:
                found = names_of(element) or None  # not a name: every source is kept
        return found
    if value[VALUE_REFS] or len(value[VALUE_CALLS]) != 1:
        return None
    call = row_at(tables.flows.calls, value[VALUE_CALLS][0])
    if call[CALLEE] != "dict":
        return None
    found = ()
    for keyword, _, star, arg_value, _, _ in call[CALL_ARGS]:
        if star or not keyword:
            return None
        if keyword == key:
            if arg_value[VALUE_CALLS] or len(arg_value[VALUE_REFS]) != 1:
                return None  # not a name: every source is kept
            found = tuple(arg_value[VALUE_REFS])
    return found
