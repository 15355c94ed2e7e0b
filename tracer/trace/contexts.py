"""Calls and returns matched along a path: a value that enters a function through one call
leaves it through that call's result, not through the result of another call of the same
function elsewhere. The spine's search carries, with each step, the call it entered last and
has not yet left (one level: what it entered before that is forgotten, and any caller may
then take the result)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracer.graph.steps import Edge
from tracer.store import step_ids

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph

CallSite = tuple[str, int]  # a call: its file and its id there
Context = CallSite | None
SAME_FUNCTION = frozenset({"local", "local_via_call"})  # edges that stay in one function


def after(graph: FlowGraph, edge: Edge, context: Context) -> tuple[bool, Context]:
    """Going forward along EDGE from a step reached in CONTEXT: may the value go, and in
    which context does it arrive?"""
    if edge.kind == "arg_to_param":
        return True, (step_ids.file_of(edge.src), step_ids.call_of(edge.src))
    if edge.kind == "return_to_result":
        return context is None or takes_result(graph, edge.dst, context), None
    return True, context if edge.kind in SAME_FUNCTION else None


def before(graph: FlowGraph, edge: Edge, context: Context) -> tuple[bool, Context]:
    """Going backward along EDGE to its source from a step reached in CONTEXT (the call
    whose result it will flow out by): may the value come from there, and in which
    context?"""
    if edge.kind == "return_to_result":
        return True, result_call(graph, edge)
    if edge.kind == "arg_to_param":
        site = (step_ids.file_of(edge.src), step_ids.call_of(edge.src))
        return context is None or context == site, None
    return True, context if edge.kind in SAME_FUNCTION else None


def agree(ahead: Context, behind: Context) -> bool:
    """May a path reached forward in context AHEAD go on as one reached backward in
    BEHIND? Yes unless both name a call and not the same one."""
    return ahead is None or behind is None or ahead == behind


def takes_result(graph: FlowGraph, step_id: str, site: CallSite) -> bool:
    """Does STEP_ID take the result of the call SITE?"""
    path, call_id = site
    if step_ids.file_of(step_id) != path:
        return False
    return call_id in graph.file(path).results.get(step_id, ())


def result_call(graph: FlowGraph, edge: Edge) -> Context:
    """The call through which the value returned at EDGE's source reaches its destination."""
    tables = graph.file(step_ids.file_of(edge.dst))
    callee = graph.file(step_ids.file_of(edge.src))
    function = graph.resolver.function(callee.path, callee.scope_of[edge.src])
    if function is None:
        return None
    for call_id in tables.results.get(edge.dst, ()):
        if any(t.function == function[0] for t in tables.targets[call_id]):
            return (tables.path, call_id)
    return None


def unmatched_return(
    graph: FlowGraph, route: list[str], edges: dict[tuple[str, str, str], Edge]
) -> int | None:
    """The position in ROUTE of the first step that takes a returned value as the result of
    another call than the one the value entered the function by (calls matched to any depth
    along the route), or None when every return goes back where it came from."""
    entered: list[CallSite] = []
    links: dict[tuple[str, str], list[str]] = {}
    for src, dst, kind in edges:
        links.setdefault((src, dst), []).append(kind)
    for i, (src, dst) in enumerate(zip(route, route[1:], strict=False), 1):
        kinds = links.get((src, dst), ())
        if "arg_to_param" in kinds:
            entered.append((step_ids.file_of(src), step_ids.call_of(src)))
        elif (
            "return_to_result" in kinds and entered and not takes_result(graph, dst, entered.pop())
        ):
            return i
    return None
