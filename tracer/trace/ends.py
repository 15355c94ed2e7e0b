"""Where a value ends up: forward from the spine's origin to a sink (a binding of a name the
presets or `--to` give), else where it is kept (an attribute of a long-lived object) or
returned out of the tree; and which binding of a sink's own name the others copy."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tracer.graph.contents import value_row
from tracer.graph.steps import TRUSTED, Edge
from tracer.store.rows import VALUE_ARITHMETIC, VALUE_CALLS, VALUE_REFS
from tracer.trace.contexts import unmatched_return
from tracer.trace.origins import is_setting, updates_itself
from tracer.trace.walks import path_to, walk

if TYPE_CHECKING:  # the graph (and networkx) load when a source is indexed, not before
    from tracer.graph.flow import FlowGraph

CHANGING_KINDS = frozenset({"formula", "return"})
RETURN_CANDIDATES = 10  # returns asked whether their function is called, without a sink
SOURCE_DEPTH = 2  # steps searched from a sink's binding for the others that copy its value
# Where the value may end up without a sink, at most: a class chosen at run time (a
# registry's, a factory's) shows its own ends.
MAX_ENDS = 12
END_SLACK = 6  # steps an end in a more central module may be further than the nearest


def sink_paths(
    graph: FlowGraph,
    start: str,
    sinks: set[str],
    names: set[str],
    max_depth: int,
    edges: dict[tuple[str, str, str], Edge],
) -> list[list[str]]:
    """START ... sink: the first step binding a name in SINKS. Without one, where the value
    ends up: the nearest attributes that keep a value computed from the traced one (kept
    on a long-lived object), reached along sure steps if any is, the nearest first, up to
    MAX_ENDS, none on the way to another; else a return out of the tree; [START] when
    there is none."""

    is_sink = sink_test(graph, sinks)

    def realizable(path: list[str]) -> bool:  # every return goes back where it came from
        return unmatched_return(graph, path, edges) is None

    def reached(parent: dict[str, str | None]) -> list[str] | None:
        named = [s for s in parent if graph.step(s).name in sinks and graph.step(s).kind != "use"]
        # An object's attribute, else a record's field, else a local of that name.
        for found in (
            [s for s in named if is_sink(s)],
            [s for s in named if graph.step(s).kind == "field"],
            named,
        ):
            paths = [list(reversed(path_to(parent, s))) for s in found]
            good = [path for path in paths if realizable(path)]
            if good:
                return good[0]
        return None

    # (An object the value is already in is followed (the namespace a parser puts a flag
    # in); one it is stored into is not: the joins by name stand for those, at a cost
    # bounded by the names; following every object a settings record rides in costs more.)
    parent = walk(
        graph, [start], True, max_depth, edges, stop=is_sink, min_confidence=TRUSTED, stores=False
    )
    trusted = parent
    if not any(is_sink(s) for s in parent):  # then guesses too
        parent = walk(graph, [start], True, max_depth, edges, stop=is_sink, stores=False)
    path = reached(parent)
    if parent is not trusted and (path is None or not is_sink(path[-1])):
        path = reached(trusted) or path  # a field or local of the sink's name: surely first
    if path is None and any(is_sink(s) for s in parent):
        # The sink met first is met only by returning to another call: look further.
        parent = walk(graph, [start], True, max_depth, edges, min_confidence=TRUSTED, stores=False)
        path = reached(parent)
    if path is not None:
        return [path]
    # No sink met: where the value is kept, along sure steps, else along guesses too.
    found = kept_ends(graph, trusted, names, realizable, edges) or kept_ends(
        graph, parent, names, realizable, edges
    )
    if found:
        return main_end_first(graph, found)
    return returned_out(graph, parent, realizable, edges) or [[start]]


def main_end_first(graph: FlowGraph, found: list[list[str]]) -> list[list[str]]:
    """FOUND (nearest first) with the main end first: of the ends at most END_SLACK steps
    further than the nearest, the one in the module the most modules import (a class the
    others build on: the GPU worker before the CPU worker that imports it); the nearest
    among equals. An end that computes another setting (`self.other = ...` where `other` is
    a field a flag sets) is that setting's input, not where the value ends up: it is the
    main end only when every end is one."""
    near = [path for path in found if len(path) <= len(found[0]) + END_SLACK]
    ends = [path for path in near if not writes_setting(graph, path[-1])] or near
    main = max(ends, key=lambda path: graph.centrality(path[-1]))  # the first of equals
    return [main] + [path for path in found if path is not main]


def writes_setting(graph: FlowGraph, step_id: str) -> bool:
    """Is STEP_ID a write `x.attr = ...` on an object whose class (or a base) declares `attr`
    as a field a flag sets?"""
    step = graph.step(step_id)
    if step.kind == "field":
        return is_setting(graph, step_id)
    tables = graph.file(step.file)
    target = tables.bound.get(step_id, "")
    if "." not in target:
        return False
    base, _, attr = target.rpartition(".")
    holder = graph.resolver.ref_type(tables.path, tables.scope_of[step_id], base)
    for klass in graph.index.family(holder) if holder else ():
        definition = graph.index.classes.get(klass)
        if definition is None or attr not in {f.name for f in definition[1].fields}:
            continue
        if is_setting(graph, graph.field_step(klass, attr)):
            return True
    return False


def kept_ends(
    graph: FlowGraph,
    parent: dict[str, str | None],
    names: set[str],
    realizable: Callable[[list[str]], bool],
    edges: dict[tuple[str, str, str], Edge],
) -> list[list[str]]:
    """The nearest attributes (none named in NAMES) that keep a value computed from the
    walk's start, up to MAX_ENDS, none on the way to another, as paths."""
    found: list[list[str]] = []
    statements: set[tuple[str, int]] = set()  # `self.a, self.b = f(x)` is one end
    for end in parent:  # breadth-first: nearest first
        step = graph.step(end)
        if kept_in_attribute(graph, end) and step.name not in names:
            if (step.file, step.line) in statements:
                continue
            path = list(reversed(path_to(parent, end)))
            if computes(graph, path, edges) and realizable(path):
                if not any(other[-1] in path for other in found):
                    found.append(path)
                    statements.add((step.file, step.line))
                if len(found) == MAX_ENDS:
                    break
    return found


def computes(graph: FlowGraph, path: list[str], edges: dict[tuple[str, str, str], Edge]) -> bool:
    """Does PATH make a new value of the one it starts with: a formula or a return on the
    way, or an end that computes what it keeps from what arrives, by a call or an operator
    (`self.size = int(size)`)? A plain copy (`self.x = x`) does not say where the value
    ends up."""
    if any(graph.step(s).kind in CHANGING_KINDS for s in path):
        return True
    end = path[-1]
    found = value_row(graph.file(graph.step(end).file), end)
    if found is None:
        return False
    value = found[0]
    return bool(value[VALUE_CALLS] or value[VALUE_ARITHMETIC]) or len(value[VALUE_REFS]) > 1


def sure(path: list[str], edges: dict[tuple[str, str, str], Edge]) -> bool:
    """Is each step of PATH reached from the one before by a trusted edge?"""
    trusted = {(e.src, e.dst) for e in edges.values() if e.confidence >= TRUSTED}
    return all(pair in trusted for pair in zip(path, path[1:], strict=False))


def returned_out(
    graph: FlowGraph,
    parent: dict[str, str | None],
    realizable: Callable[[list[str]], bool],
    edges: dict[tuple[str, str, str], Edge],
) -> list[list[str]]:
    """Where a value no attribute keeps ends up otherwise: returned out of the tree, by a
    function no code of the tree calls (an entry point, an API), on a way along trusted
    steps that computes a new value; the nearest such return (of the first
    RETURN_CANDIDATES met), as a path."""
    looked = 0
    for end in parent:  # breadth-first: nearest first
        if graph.step(end).kind != "return" or looked == RETURN_CANDIDATES:
            continue
        path = list(reversed(path_to(parent, end)))
        if not any(graph.step(s).kind in CHANGING_KINDS for s in path[1:-1]):
            continue
        if not sure(path, edges):
            continue
        looked += 1
        tables = graph.file(graph.step(end).file)
        function = graph.resolver.function(tables.path, tables.scope_of[end])
        if function is None or next(iter(graph.callers(function[0])), None) is not None:
            continue
        if realizable(path):
            return [path]
    return []


def sink_test(graph: FlowGraph, sinks: set[str]) -> Callable[[str], bool]:
    """Is a step a sink: an attribute (not a record's field) bound to a name in SINKS?"""

    def is_sink(step_id: str) -> bool:
        step = graph.step(step_id)
        return step.name in sinks and step.kind != "field" and kept_in_attribute(graph, step_id)

    return is_sink


def source_bindings(
    graph: FlowGraph,
    seeds: list[str],
    sinks: set[str],
    edges: dict[tuple[str, str, str], Edge],
) -> list[str]:
    """The sink bindings among SEEDS, the source first: the one that reaches the most
    others in a few trusted steps (its value is copied on), in the most central module,
    that computes its value rather than copy another attribute's; among equals, the first
    bound."""
    is_sink = sink_test(graph, sinks)
    bindings = [s for s in seeds if is_sink(s)]

    def copies(binding: str) -> int:
        reached = walk(
            graph, [binding], True, SOURCE_DEPTH, edges, min_confidence=TRUSTED, stores=False
        )
        return sum(1 for other in bindings if other != binding and other in reached)

    def copied(binding: str) -> bool:
        """Does the binding only copy another name's value (`self.x = result.x`)?"""
        tables = graph.file(graph.step(binding).file)
        return len(tables.refs.get(binding, ())) == 1 and not tables.results.get(binding)

    key = {
        b: (-copies(b), -graph.centrality(b), copied(b) or updates_itself(graph, b))
        for b in bindings
    }
    return sorted(bindings, key=key.__getitem__)


def sink_goals(graph: FlowGraph, sinks: set[str]) -> list[str]:
    """The steps that bind a name in SINKS on an object: the ends a spine may reach."""
    is_sink = sink_test(graph, sinks)
    return [
        s
        for name in sinks
        for s in (
            graph.attribute_writes(name)  # the sinks, without building the other bindings
            if "." not in name
            else [s for s in graph.seeds(name) if is_sink(s)]
        )
    ]


def kept_in_attribute(graph: FlowGraph, step_id: str) -> bool:
    """A field, or an assignment to an attribute (`self.x = ...`, also when it is a formula)."""
    step = graph.step(step_id)
    if step.kind == "field":
        return True
    return "." in graph.file(step.file).bound.get(step_id, "")
