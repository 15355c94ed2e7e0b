"""Functions run by code outside the tree: `multiprocessing.Process(target=run, args=(a, b))`
runs `run(a, b)` in another process (`tracer/index/library.py` says which callables do that).
The file tables make a step of each value such a call will pass (`UnitSteps.add_launch`);
this module says which functions its target may hold, following the name back through
parameters, attributes and fields to the functions it is bound to (`target=run_func`, a
parameter whose callers pass `run_func=self.run_func`, a class attribute
`run_func = staticmethod(run_scheduler_process)`), and binds each value to the parameter at its
position or of its key."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from tracer.extract.facts import MODULE_SCOPE
from tracer.graph.steps import Edge
from tracer.graph.unit_steps import launch_parts
from tracer.index.calls.answers import in_order
from tracer.index.library import LAUNCHER_NAMES
from tracer.store import step_ids
from tracer.store.rows import CALL_LINE, CALL_SCOPE, CALLEE
from tracer.store.units import ROW_KINDS

if TYPE_CHECKING:
    from tracer.graph.call_values import CallValues
    from tracer.graph.file_steps import FileTables
    from tracer.graph.steps import Step
    from tracer.index.index import Index
    from tracer.index.resolve import Resolver
    from tracer.store.facts import Facts


class FlowGraph(Protocol):
    """What launches ask of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    index: Index
    resolver: Resolver
    facts: Facts
    values: CallValues

    def file(self, path: str) -> FileTables: ...

    def step(self, step_id: str) -> Step: ...

    def edges(self, step_id: str, forward: bool) -> list[Edge]: ...

    def calling(self, name: str) -> list[str]: ...

    def ref_sources(
        self, tables: FileTables, scope: str, step: Step, ref: str
    ) -> Iterator[Edge]: ...


DEPTH = 6  # bindings followed back from a launcher's target to the functions it may hold
SURE = 1.0  # a value bound through a target that may hold one function
SHARED = 0.8  # ... that may hold several


def launch_edges(graph: FlowGraph, tables: FileTables, step_id: str) -> Iterator[Edge]:
    """Edges from a value a launcher will pass (STEP_ID) to the parameter it is bound to in
    each function the launcher's target may hold."""
    call_id, key = tables.elements[step_id]
    target = tables.launches.get(call_id) or ()
    functions = target_functions(graph, tables.path, tables.scope_of[step_id], step_id, target)
    confidence = SURE if len(functions) == 1 else SHARED
    for function in functions:
        param = parameter(graph, function, key)
        if param is not None:
            yield Edge(step_id, param, "arg_to_param", confidence)


def launch_sources(graph: FlowGraph, function: str, param: str) -> Iterator[Edge]:
    """Edges into the parameter PARAM (its step id) of FUNCTION from the values launchers
    pass it. Only when FUNCTION's name is used as a value somewhere (not only called), and
    only from the launchers in the files that name it (where the function is handed on, or
    launched: the target is followed back from there)."""
    path, definition = graph.index.functions[function]
    if definition.name.startswith("__") and definition.name.endswith("__"):
        return  # run by the language itself (`__init__`, `__post_init__`), not handed on
    name = re.escape(definition.name.encode())
    naming = graph.facts.matching(definition.name, rb"\b" + name + rb"\b(?!\s*\()")
    if not naming:
        return
    for site_path, call_id, functions in launch_sites(graph, set(naming)):
        if function not in functions:
            continue
        tables = graph.file(site_path)
        target = tables.launches.get(call_id) or ()  # its unit built: its values are steps
        for step_id, (owner, key) in list(tables.elements.held_items()):
            if owner != call_id or parameter(graph, function, key) != param:
                continue
            # The functions the target holds where this value is bound (`args` bound in
            # each branch beside its own `target`).
            own = target_functions(graph, site_path, tables.scope_of[step_id], step_id, target)
            if function in own:
                yield Edge(step_id, param, "arg_to_param", SURE if len(own) == 1 else SHARED)


def launch_sites(graph: FlowGraph, within: set[str]) -> list[tuple[str, int, tuple[str, ...]]]:
    """The launcher calls in the files WITHIN, each with the functions its target may hold
    (a question of the call graph's follower per call)."""
    found = []
    launching: dict[str, None] = {}
    for word in sorted(LAUNCHER_NAMES):
        launching.update(dict.fromkeys(p for p in graph.calling(word) if p in within))
    answers = graph.values.follower[1].answers
    for path in launching:
        rows = graph.facts.rows(path)
        calls = sorted({c for word in LAUNCHER_NAMES for c in rows.callees.get(word, ())})
        for call_id in calls:
            held = answers.ask(
                ("launched", path, call_id),
                lambda path=path, call_id=call_id: enumerate(launched(graph, path, call_id)),
                bounded=False,
            )
            found.append((path, call_id, tuple(in_order(held))))
    return found


def launched(graph: FlowGraph, path: str, call_id: int) -> Iterator[str]:
    """The functions the launcher call CALL_ID of PATH may run (none when it is no launch)."""
    launch = launch_of(graph, path, call_id)
    if launch is not None:
        scope, elements, target = launch
        for element in elements:  # each where it is bound (see launch_sources)
            yield from target_functions(graph, path, scope, element, target)


def launch_of(
    graph: FlowGraph, path: str, call_id: int
) -> tuple[str, list[str], tuple[str, ...]] | None:
    """Of the call CALL_ID of PATH, when it launches a function and passes it values (as
    `UnitSteps.add_launch` makes them, read from its row without building its unit): its
    scope, its values' steps and what its target reads; else None."""
    row = graph.facts.rows(path).row(ROW_KINDS.index("calls"), call_id)
    scope, callee = row[CALL_SCOPE], row[CALLEE]
    if graph.resolver.targets(path, scope, callee, row[CALL_LINE]):
        return None  # a call of the tree's own: no launch
    launcher = graph.resolver.launcher(path, scope, callee)
    if launcher is None:
        return None
    target, elements = launch_parts(row, launcher, graph.facts.flows(path), graph.facts.rows(path))
    if not elements:
        return None
    steps = [step_ids.element_id(path, call_id, i, j) for i, j, *_ in elements]
    return scope, steps, target


def target_functions(
    graph: FlowGraph, path: str, scope: str, reader: str, target: tuple[str, ...]
) -> tuple[str, ...]:
    """The functions of the tree a launcher's target (TARGET: the names it reads) may hold,
    read in SCOPE of PATH as READER (a step of the same statement) reads names."""
    found: dict[str, None] = {}
    for ref in target:
        found.update(dict.fromkeys(functions_held(graph, path, scope, reader, ref, DEPTH)))
    return tuple(found)


def functions_held(
    graph: FlowGraph, path: str, scope: str, reader: str, ref: str, depth: int
) -> tuple[str, ...]:
    """The functions of the tree the name REF, read in SCOPE of PATH by the step READER, may
    hold: the function it names, else what its bindings hold, DEPTH steps back at most (a
    question of the call graph's follower: a cycle of bindings holds its least fixed
    point, whichever of its names was asked first)."""
    found = graph.values.follower[1].answers.ask(
        ("launch target", reader, scope, ref, depth),
        lambda: enumerate(held_by_name(graph, path, scope, reader, ref, depth)),
        bounded=False,
    )
    return tuple(in_order(found))


def held_by_name(
    graph: FlowGraph, path: str, scope: str, reader: str, ref: str, depth: int
) -> tuple[str, ...]:
    resolver = graph.resolver
    if "." not in ref:
        local = resolver.local_function(path, scope, ref)
        if local is not None:
            return (local,)
        if not resolver.is_local(path, scope, ref):
            symbol = graph.index.resolve(graph.index.module_of[path], ref)
            if symbol is not None and symbol.kind == "function":
                return (symbol.name,)
    else:  # `Klass.method`, `module.function`: what a call of that name there would run
        line = graph.file(path).steps[reader].line
        named = [t.function for t in resolver.targets(path, scope, ref, line) if t.function]
        if named:
            return tuple(dict.fromkeys(named))
    if depth <= 0:
        return ()
    tables = graph.file(path)
    found: dict[str, None] = {}
    for edge in graph.ref_sources(tables, scope, tables.steps[reader], ref):
        found.update(dict.fromkeys(held_by_step(graph, edge.src, depth - 1)))
    return tuple(found)


def held_by_step(graph: FlowGraph, step_id: str, depth: int) -> tuple[str, ...]:
    """The functions the value of STEP_ID may be: what a parameter's callers pass and its
    default, what a field's default names, what an assignment or an argument reads."""
    path = step_ids.file_of(step_id)
    tables = graph.file(path)
    step = tables.steps[step_id]
    scope = tables.scope_of[step_id]
    found: dict[str, None] = {}
    if step.kind == "param":
        outer = scope.rpartition(".")[0] or MODULE_SCOPE
        for ref in tables.refs.get(step_id, ()):  # the default, read around the function
            found.update(dict.fromkeys(functions_held(graph, path, outer, step_id, ref, depth)))
        for edge in graph.edges(step_id, False):
            if edge.kind == "arg_to_param" and depth > 0:
                found.update(dict.fromkeys(held_by_step(graph, edge.src, depth - 1)))
        return tuple(found)
    if step.kind == "field":
        klass = next(c for c in tables.summary.classes if c.qualname == step.symbol)
        definition = next(f for f in klass.fields if f.name == step.name)
        for ref in definition.default_refs:  # `staticmethod(run)` names run
            found.update(dict.fromkeys(functions_held(graph, path, MODULE_SCOPE, step_id, ref, 0)))
        return tuple(found)
    for ref in tables.refs.get(step_id, ()):
        found.update(dict.fromkeys(functions_held(graph, path, scope, step_id, ref, depth)))
    return tuple(found)


def parameter(graph: FlowGraph, function: str, key: int | str) -> str | None:
    """The step of FUNCTION's parameter a launcher's value at KEY (a position in its tuple,
    a name in its dict) is bound to."""
    path, definition = graph.index.functions[function]
    params = list(definition.params)
    if definition.class_qualname is not None and not definition.is_static and params:
        params = params[1:]  # a method given as `target=self.run` is bound
    if isinstance(key, int):
        positional = [p for p in params if p.kind == "positional"]
        if key < len(positional):
            return step_ids.param_id(path, definition.qualname, positional[key].name)
        spread = [p for p in params if p.kind == "varargs"]
    else:
        named = [p for p in params if p.name == key and p.kind in ("positional", "keyword_only")]
        if named:
            return step_ids.param_id(path, definition.qualname, named[0].name)
        spread = [p for p in params if p.kind == "kwargs"]
    return step_ids.param_id(path, definition.qualname, spread[0].name) if spread else None
