"""Calls and returns matched along a path: a value that enters a function through one call
leaves it through that call's result, not through the result of another call of the same
function elsewhere. The spine's search carries, with each step, the calls it entered and has
not yet left, innermost last (up to DEPTH of them: what it entered before those is forgotten,
and any caller may then take the result)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracer.graph.steps import Edge, pairs_of
from tracer.store import step_ids

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph

CallSite = tuple[str, int]  # a call: its file and its id there
Context = tuple[CallSite, ...]  # the calls entered and not yet left, innermost last
DEPTH = 8
# Edges that may stay in one function: a read of a name (in the same function only: see
# `stays`), and an argument kept in the field of the object its call makes (the object is
# made where the argument is).
FILLING = frozenset({"arg_to_field", "copied_to_field"})  # a constructor's argument into a field
SAME_FUNCTION = FILLING | {"local", "local_via_call", "store", "read"}


def after(graph: FlowGraph, edge: Edge, context: Context) -> tuple[bool, Context]:
    """Going forward along EDGE from a step reached in CONTEXT: may the value go, and in
    which context does it arrive?"""
    if edge.kind == "arg_to_param":
        site = (step_ids.file_of(edge.src), step_ids.call_of(edge.src))
        return True, (*context, site)[-DEPTH:]
    if edge.kind == "return_to_result":
        if not context:
            return True, ()
        return takes_result(graph, edge.dst, context[-1]), context[:-1]
    if edge.kind == "store" and not step_ids.is_field(edge.src):
        return out_of_calls(graph, edge, context)
    return True, context if stays(graph, edge) else ()


def out_of_calls(graph: FlowGraph, edge: Edge, context: Context) -> tuple[bool, Context]:
    """Along a `store` EDGE from a store in one function into an object held in another (a
    method's store on `self`, into its caller's object after the call, or a constructor's,
    into the call's result), from a step reached in CONTEXT: the calls entered are left up
    to the one made in the object's function; none entered (or some forgotten), any."""
    if not context or scope_of(graph, edge.src) == scope_of(graph, edge.dst):
        return True, context
    path, function = scope_of(graph, edge.dst)
    for i in range(len(context) - 1, -1, -1):
        site_path, call_id = context[i]
        if site_path == path and graph.file(path).rows.call_head(call_id)[0] == function:
            return True, context[:i]
    return len(context) >= DEPTH, ()


def stays(graph: FlowGraph, edge: Edge) -> bool:
    """Does EDGE keep the value in the function (the call) it is in? A name's read in another
    function (a closure's, a `global` or `nonlocal` name's) leaves the calls entered: any
    caller may take what that function returns."""
    if edge.kind not in SAME_FUNCTION:
        return False
    return edge.kind in FILLING or scope_of(graph, edge.src) == scope_of(graph, edge.dst)


def before(graph: FlowGraph, edge: Edge, context: Context) -> tuple[bool, Context]:
    """Going backward along EDGE to its source from a step reached in CONTEXT (the calls
    whose results it will flow out by, innermost last): may the value come from there, and
    in which context?"""
    if edge.kind == "return_to_result":
        site = result_call(graph, edge)
        return True, ((*context, site)[-DEPTH:] if site is not None else ())
    if edge.kind == "arg_to_param":
        if not context:
            return True, ()
        site = (step_ids.file_of(edge.src), step_ids.call_of(edge.src))
        return context[-1] == site, context[:-1]
    return True, context if stays(graph, edge) else ()


def agree(ahead: Context, behind: Context) -> bool:
    """May a path reached forward in context AHEAD go on as one reached backward in
    BEHIND? Yes when the calls both know of, from the innermost out, are the same."""
    return all(a == b for a, b in zip(reversed(ahead), reversed(behind), strict=False))


def takes_result(graph: FlowGraph, step_id: str, site: CallSite) -> bool:
    """Does STEP_ID take the result of the call SITE?"""
    path, call_id = site
    if step_ids.file_of(step_id) != path:
        return False
    return call_id in graph.file(path).results.get(step_id, ()) or graph.values.reads_result(
        path, call_id, step_id
    )


def result_call(graph: FlowGraph, edge: Edge) -> CallSite | None:
    """The call through which the value returned at EDGE's source reaches its destination."""
    tables = graph.file(step_ids.file_of(edge.dst))
    callee = graph.file(step_ids.file_of(edge.src))
    function = graph.resolver.function(callee.path, callee.scope_of[edge.src])
    if function is None:
        return None
    for call_id in tables.results.get(edge.dst, ()):
        if any(t.function == function[0] for t in tables.targets[call_id]):
            return (tables.path, call_id)
    return graph.values.result_call(tables.path, edge.dst, function[0])


def unmatched_return(
    graph: FlowGraph, route: list[str], edges: dict[tuple[str, str, str], Edge]
) -> int | None:
    """The position in ROUTE of the first step that takes a returned value as the result of
    another call than the one the value entered the function by (calls matched as a search
    going along the route matches them), or None when every return goes back where it came
    from."""
    return walk_contexts(graph, route, edges)[1]


def through(
    graph: FlowGraph,
    route: list[Edge],
    context: Context,
    forward: bool,
    made_in: str | None = None,
) -> tuple[bool, Context]:
    """Along an object's route (the edges from where a value is stored in it to where it is
    read, in order), from a step reached in CONTEXT: may the value go, and in which context
    does it arrive (FORWARD) or leave (backward)? The store stays in the function of MADE_IN,
    the constructor argument that filled the field, when the object is made there; the read
    stays in the function of the object's last step when it is read there."""
    for edge in route if forward else reversed(route):
        if edge.kind == "store" and not forward:
            continue  # from the object's maker back to its field: in the same call
        if edge.kind in ("store", "read"):
            ends = (made_in, edge.dst) if edge.kind == "store" else (edge.src, edge.dst)
            same = ends[0] is not None and scope_of(graph, ends[0]) == scope_of(graph, ends[1])
            context = context if same else ()
            continue
        allowed, context = (after if forward else before)(graph, edge, context)
        if not allowed:
            return False, ()
    return True, context


def scope_of(graph: FlowGraph, step_id: str) -> tuple[str, str]:
    """The file and function of a step."""
    path = step_ids.file_of(step_id)
    return path, graph.file(path).scope_of[step_id]


def contexts_along(
    graph: FlowGraph, route: list[str], edges: dict[tuple[str, str, str], Edge]
) -> list[Context]:
    """The calls each step of ROUTE is inside of, as a search going along it carries them
    (the route's objects' own routes taken into account where a value is read back out)."""
    return walk_contexts(graph, route, edges)[0]


def walk_contexts(
    graph: FlowGraph, route: list[str], edges: dict[tuple[str, str, str], Edge]
) -> tuple[list[Context], int | None]:
    """The contexts of ROUTE's steps, and the position of the first step the value may not
    reach that way (a return to another call than the one it came by), or None. A route may
    hold an object's steps already (`store` and `read` edges), or joins by name (`attr`)
    that the object's route stands behind."""
    from tracer.trace.carriers import JUMPS, carrier_edges  # carriers uses this module

    by_pair = pairs_of(edges)
    found: list[Context] = [()]
    for i, (src, dst) in enumerate(zip(route, route[1:], strict=False)):
        joined = sorted(by_pair.get((src, dst), []), key=lambda e: e.kind in JUMPS)
        context = found[-1]
        previous = route[i - 1] if i > 0 else None
        if not joined:
            found.append(())
            continue
        edge = joined[0]
        if edge.kind == "store" and previous is not None and step_ids.is_field(src):
            site = (step_ids.file_of(previous), step_ids.call_of(previous))
            fills = any(e.kind in FILLING for e in by_pair.get((previous, src), []))
            made = any(e.dst == dst and e.kind == "store" for e in graph.edges(src, True))
            if fills and made and not takes_result(graph, dst, site):
                return found, i + 1  # a field is in the object its constructor's call makes
        if edge.kind in ("store", "read"):
            maker = previous if edge.kind == "store" else src
            same = maker is not None and scope_of(graph, maker) == scope_of(graph, dst)
            found.append(context if same else ())
            continue
        if edge.kind in JUMPS and context:
            made_in = previous
            if made_in is not None and not any(
                e.kind == "arg_to_field" for e in by_pair.get((made_in, src), [])
            ):
                made_in = None
            carried = carrier_edges(graph, made_in, src, dst)
            allowed, context = (
                through(graph, carried, context, True, made_in) if carried else (True, ())
            )
        else:
            allowed, context = after(graph, edge, context)
        if not allowed:
            return found, i + 1
        found.append(context)
    return found, None
