"""What the graph says of objects, as the carrier search asks it: which steps define the
object whose attribute a step reads, which steps hold an object just constructed (and of
which class), and which hold `self` in a method of a class."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracer.extract.values import call_of_ref
from tracer.store import step_ids

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph
    from tracer.graph.steps import Edge


def object_sources(graph: FlowGraph, step_id: str, attr: str) -> list[Edge]:
    """Edges into STEP_ID from the steps that define the objects whose ATTR it reads (for
    `x.f.ATTR`, the writes of `f` on x's class; for `x.ATTR`, the bindings of x), each
    with its confidence. Reads of an attribute of a call's result (`f().ATTR`) give none."""
    tables = graph.file(step_ids.file_of(step_id))
    step = tables.steps[step_id]
    scope = tables.scope_of[step_id]
    found: list[Edge] = []
    for ref in tables.refs.get(step_id, ()):
        base, _, name = ref.rpartition(".")
        if name != attr or not base or call_of_ref(base.partition(".")[0]) is not None:
            continue
        found.extend(graph.ref_sources(tables, scope, step, base))
    return found


def constructions(graph: FlowGraph, step_id: str, least: float) -> list[tuple[int, str]]:
    """The constructor calls whose new object STEP_ID takes (`x = C(...)`, `return C(...)`,
    an argument `C(...)`), as (call id, class), for targets at least LEAST sure."""
    tables = graph.file(step_ids.file_of(step_id))
    found = []
    for call_id in tables.results.get(step_id, ()):
        for target in tables.targets[call_id]:
            if target.klass is not None and target.confidence >= least:
                found.append((call_id, target.klass))
    return found


def self_class(graph: FlowGraph, step_id: str) -> str | None:
    """The class STEP_ID stands for when it is the `self` parameter of a method, else None."""
    if not step_ids.is_param(step_id):
        return None
    tables = graph.file(step_ids.file_of(step_id))
    scope = tables.scope_of[step_id]
    found = graph.resolver.function(tables.path, scope)
    if found is None:
        return None
    function = found[1]
    if function.class_qualname is None or function.is_static or not function.params:
        return None
    if function.params[0].name != tables.steps[step_id].name:
        return None
    return graph.resolver.self_class(tables.path, scope)
