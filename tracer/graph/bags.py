"""Objects filled by name ("bags"). A class whose method stores a value under a name it is
given (`setattr(self, name, value)`, `object.__setattr__(self, name, value)`) has attributes
that no line of it names: a read `bag.x` of such an object takes what that method was given.
These are the questions the carrier search asks of them: which methods fill a class by
name, which calls of a function fill the bag it makes, and where the object a read's
receiver names comes from when it is a call's result (an accessor, `get_settings().x`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracer.extract.facts import Arg
from tracer.extract.values import call_of_ref
from tracer.graph.objects import constructions, object_sources
from tracer.graph.steps import TRUSTED, Edge
from tracer.store import step_ids

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph

SETTERS = ("setattr", "__setattr__")  # the last names of the calls that set by name


@dataclass(frozen=True)
class Setter:
    """A method that stores its parameter VALUE in `self` under the name its parameter KEY
    holds (indices among its parameters, `self` being 0)."""

    function: str
    key: int
    value: int


def setters(graph: FlowGraph, klass: str) -> list[Setter]:
    """The methods along KLASS's MRO that fill `self` by name (asked of every object a
    carrier search passes: remembered)."""
    return graph.remembered("setters", klass, lambda: find_setters(graph, klass))


def find_setters(graph: FlowGraph, klass: str) -> list[Setter]:
    found = []
    for owner in graph.index.mro(klass):
        path, definition = graph.index.classes[owner]
        module = graph.index.module_of[path]
        flows = graph.facts.flows(path)
        callees = graph.facts.rows(path).callees
        prefix = definition.qualname + "."
        for call_id in sorted(c for name in SETTERS for c in callees.get(name, ())):
            call = flows.calls[call_id]
            if not call.scope.startswith(prefix) or "." in call.scope[len(prefix) :]:
                continue
            entry = graph.index.functions.get(f"{module}.{call.scope}")
            if entry is None:
                continue
            params = [p.name for p in entry[1].params]
            named = [a.value.refs[0] if len(a.value.refs) == 1 else "" for a in call.args]
            if len(named) < 3 or call.callee.rpartition(".")[2] not in SETTERS:
                continue
            receiver, key, value = named[-3:]
            if params and receiver == params[0] and key in params and value in params:
                found.append(
                    Setter(f"{module}.{call.scope}", params.index(key), params.index(value))
                )
    return found


@dataclass(frozen=True)
class Filling:
    """A call that fills a bag: the step of its value argument, the setter's parameter that
    takes it, and the name the call's key argument reads (`bag.set(name, value)`: name)."""

    value: str
    param: str
    key: str


def fillings(graph: FlowGraph, made: str) -> list[Filling]:
    """Where the function of MADE (a step that takes a new object of a class filled by name)
    fills such objects: the calls of a setter there."""
    classes = {klass for _, klass in constructions(graph, made, TRUSTED)}
    wanted = {s.function: s for klass in sorted(classes) for s in setters(graph, klass)}
    if not wanted:
        return []
    tables = graph.file(step_ids.file_of(made))
    scope = tables.scope_of[made]
    rows = graph.facts.rows(tables.path)
    found = []
    for name in sorted({w.rpartition(".")[2] for w in wanted}):
        for call_id in rows.callees.get(name, ()):
            if rows.call_head(call_id)[0] != scope:
                continue
            for target in tables.targets[call_id]:
                setter = wanted.get(target.function or "")
                if setter is None:
                    continue
                path, function = graph.index.functions[setter.function]
                shift = 1 if target.bound else 0
                args = tables.arguments(call_id)
                key = [
                    a
                    for a, _ in args
                    if passes(a, function.params[setter.key].name, setter.key - shift)
                ]
                value_name = function.params[setter.value].name
                for arg, arg_step in args:
                    if passes(arg, value_name, setter.value - shift) and key:
                        param = step_ids.param_id(path, function.qualname, value_name)
                        refs = key[0].value.refs
                        found.append(Filling(arg_step, param, refs[0] if len(refs) == 1 else ""))
    return found


def passes(arg: Arg, name: str, position: int) -> bool:
    """Does ARG fill the parameter NAME, at POSITION among those the call's arguments fill?"""
    return arg.keyword == name or (
        arg.keyword is None and not arg.star and arg.position == position
    )


def read_by_name(graph: FlowGraph, value: str, key: str) -> list[tuple[str, str]]:
    """Where the value argument VALUE of a filling is read out of another object by the
    name KEY holds: its value, or a local it reads, made by a call that is handed KEY and
    that object (`value = lookup(record, key)`, `getattr(record, key)`). For each, the step
    of the object (the call's argument, or what defines it) and the step the value is read
    out at."""
    if not key:
        return []
    candidates = [value] + [e.src for e in graph.edges(value, False) if e.kind == "local"]
    found = []
    for step in candidates:
        here = graph.file(step_ids.file_of(step))
        for call_id in here.results.get(step, ()):
            call = here.calls[call_id]
            if any(a.value.refs == (key,) for a in call.args):
                found.extend(
                    (arg_step, step)
                    for arg, arg_step in here.arguments(call_id)
                    if len(arg.value.refs) == 1 and arg.value.refs[0] != key and not arg.value.calls
                )
        if key in here.opaque.get(step, ()):  # `getattr(record, key)`: a call outside the tree
            found.extend(
                (e.src, step)
                for e in graph.edges(step, False)
                if e.kind == "local_via_call" and graph.step(e.src).name != key
            )
    return found


def receiver_sources(graph: FlowGraph, step_id: str, attr: str) -> list[Edge]:
    """Edges into STEP_ID from the steps that define the objects whose ATTR it reads: those
    of `object_sources`, and for `f().ATTR` the returns of f."""
    found = object_sources(graph, step_id, attr)
    tables = graph.file(step_ids.file_of(step_id))
    for ref in tables.refs.get(step_id, ()):
        base, _, name = ref.rpartition(".")
        call_id = call_of_ref(base)
        if name != attr or call_id is None:
            continue
        for target in tables.targets.get(call_id, ()):
            if target.function is None:
                continue
            path, function = graph.index.functions[target.function]
            for ret in graph.file(path).returns.get(function.qualname, []):
                found.append(Edge(ret, step_id, "return_to_result", target.confidence))
    return found
