"""Which process a read runs in, as far as the record it is filled from tells: a holder kept
per process (a module-level object a function fills) is filled in each process that calls that
function, and a read sees what its own process put there. The reader's process is found
through the record's own way to the object the reading method runs on, across a launch."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tracer.graph.objects import route_back
from tracer.graph.steps import Edge
from tracer.store import step_ids

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph


def in_process(
    graph: FlowGraph, holds: Callable[[str], bool], classes: frozenset[str], read: str
) -> dict[str, list[Edge]]:
    """The steps that hold the object (a step HOLDS it where it is made, an object of
    CLASSES) in the process READ runs in, when that is not the one the object is made in:
    the object's own way to the object READ's method runs on (a field or attribute of
    READ's class typed as one of CLASSES), after the last process launch on it (a value a
    launcher passes). Each with the way up to it, first edge into the holder (as
    `route_back` gives it). {} when READ is in no method, its class holds no such object,
    or that object's way crosses no launch. A holder kept per process (a module-level
    object a function fills) is filled in each process that calls it: the read sees what
    its own process put there."""
    tables = graph.file(step_ids.file_of(read))
    klass = graph.resolver.self_class(tables.path, tables.scope_of[read])
    if klass is None or not classes:
        return {}
    starts = typed_holders(graph, klass, classes)
    way = route_back(graph, starts, holds) if starts else []
    launches = [i for i, edge in enumerate(way) if i and launched(graph, edge.src)]
    if not launches:
        return {}
    return {edge.dst: way[: i + 1] for i, edge in enumerate(way) if i >= launches[-1]}


def typed_holders(graph: FlowGraph, klass: str, classes: frozenset[str]) -> list[str]:
    """The steps of KLASS (along its MRO) typed as one of CLASSES: its fields, and the
    parameters of its `__init__`, whose annotation names one."""
    found = []
    index = graph.index
    for owner in index.mro(klass):
        path, definition = index.classes[owner]
        module = index.module_of[path]

        for field in definition.fields:
            if names_class(graph, module, field.annotation, classes):
                found.append(step_ids.field_id(path, definition.qualname, field.name))
        init = index.functions.get(f"{owner}.__init__")
        for param in init[1].params if init is not None else ():
            if names_class(graph, module, param.annotation, classes):
                found.append(step_ids.param_id(path, init[1].qualname, param.name))
    return found


def names_class(
    graph: FlowGraph, module: str, annotation: str | None, classes: frozenset[str]
) -> bool:
    """Does ANNOTATION (written in MODULE) name one of CLASSES?"""
    name = (annotation or "").strip("'\"")
    symbol = graph.index.resolve(module, name) if name else None
    return symbol is not None and symbol.name in classes


def launched(graph: FlowGraph, step_id: str) -> bool:
    """Is STEP_ID a value a launcher passes to the function it runs in another process?"""
    return graph.file(step_ids.file_of(step_id)).elements.get(step_id) is not None
