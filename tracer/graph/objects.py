"""What the graph says of objects, as the carrier search asks it: which steps define the
object whose attribute a step reads, which steps hold an object just constructed (and of
which class), and which hold `self` in a method of a class."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Protocol

from tracer.extract.facts import Arg
from tracer.extract.values import call_of_ref
from tracer.graph.contents import Keys, step
from tracer.graph.steps import CARRYING, TRUSTED, Edge
from tracer.store import step_ids
from tracer.store.rows import (
    ASSIGN_VALUE,
    CALL_ARGS,
    CALLEE,
    VALUE_CALLS,
    VALUE_REFS,
    VALUE_SHAPE,
    Row,
    row_at,
    value_row,
)

if TYPE_CHECKING:
    from tracer.graph.contents import Contents
    from tracer.graph.file_steps import FileTables
    from tracer.graph.steps import Step
    from tracer.index.resolve import Resolver


class FlowGraph(Protocol):
    """What these questions ask of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    resolver: Resolver

    def file(self, path: str) -> FileTables: ...

    def step(self, step_id: str) -> Step: ...

    def edges(self, step_id: str, forward: bool) -> list[Edge]: ...

    def ref_sources(
        self, tables: FileTables, scope: str, step: Step, ref: str
    ) -> Iterator[Edge]: ...

    def local_definitions(self, tables: FileTables, scope: str, name: str) -> list[str]: ...

    @property
    def contents(self) -> Contents: ...


MAX_ROUTE = 40  # steps of an object's route, at most
MAX_VISITS = 400  # steps a route search may expand


# Test code (a `test` or `tests` folder, `test_*.py`, `*_test.py`, `conftest.py`) makes its own
# objects: an object's way through a package never goes through it.
TEST_CODE = re.compile(r"(^|/)(tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")
GUARD_COST = 4  # steps a call made only in a branch that has a default counts for
# The first words of an `else:` body that takes no other way: it fails or only checks.
NOTHING_ELSE = ("raise", "assert", "pass")


def route_back(
    graph: FlowGraph,
    starts: list[str],
    holds: Callable[[str], bool],
    kinds: frozenset[str] = CARRYING,
    least: float = TRUSTED,
) -> list[Edge]:
    """Backward from STARTS along edges of KINDS at least LEAST sure (by default trusted
    edges that carry a whole object; never into a formula, never through test code) to the
    nearest step that HOLDS what is sought: the route from it to a start, in forward order,
    as the edges between its steps, after a first edge (its kind "start") into the holder;
    [] when none is found within the bounds. The search carries the value's access path
    (tracer/graph/contents.py): through `f(**d)` back to where d is made only the value at
    the parameter's key is taken, out of `a, b = pair` only the element at its position. A
    holder ends it at whatever keys the value is kept there (`tops[k] = bag` holds the bag
    at k of `tops`). Nearest by steps, where a call
    made in a branch of a dispatch counts as GUARD_COST steps (see `guards`): of two
    launchers, the route through the one a server runs by default."""
    State = tuple[str, Keys]
    parent: dict[State, tuple[Edge, State] | None] = {(s, ()): None for s in starts}
    depth = dict.fromkeys(parent, 0)
    cost = dict.fromkeys(parent, 0)
    queue = [(0, i, state) for i, state in enumerate(parent)]
    order = len(queue)
    done: set[State] = set()
    visits = 0
    while queue:
        spent, _, state = heappop(queue)
        if state in done or spent > cost[state]:
            continue
        done.add(state)
        current, keys = state
        if holds(current):
            route = [Edge(current, current, "start", 1.0)]
            link = parent[state]
            while link is not None:
                route.append(link[0])
                link = parent[link[1]]
            return route
        visits += 1
        if visits > MAX_VISITS or depth[state] >= MAX_ROUTE:
            continue
        for edge in graph.edges(current, False):
            if edge.kind not in kinds or edge.confidence < least:
                continue
            # The step without its code: most sources are never shown.
            source = graph.file(step_ids.file_of(edge.src)).steps[edge.src]
            if source.kind == "formula" or TEST_CODE.search(source.file):
                continue
            reached = (
                spent + 1 + (GUARD_COST * guards(graph, source) if source.kind == "call_arg" else 0)
            )
            for ops in graph.contents.alternatives(edge):
                allowed, held = step(keys, ops, False)
                after = (edge.src, held)
                if not allowed or after in done or cost.get(after, reached + 1) <= reached:
                    continue
                parent[after] = (edge, state)
                depth[after] = depth[state] + 1
                cost[after] = reached
                heappush(queue, (reached, order, after))
                order += 1
    return []


def guards(graph: FlowGraph, step: Step) -> int:
    """How many branches of a dispatch hold STEP, within its function: `if`/`elif` blocks of a
    chain whose `else:` does something (a default way; an `else:` that only raises is none)."""
    lines = graph.file(step.file).lines
    if not 0 < step.line <= len(lines.raw()):
        return 0
    # Up the headers of the blocks around STEP's line to its function's `def`: a header's
    # count is that of the headers around it plus its own, kept with the file's lines.
    known = lines.guards
    met: list[tuple[int, int]] = []  # (header, own guard) of the headers not known yet
    found = 0
    header = lines.parent(step.line - 1)
    while header >= 0:
        counted = known.get(header)
        if counted is not None:
            found = counted
            break
        text = (lines.line(header + 1) or "").lstrip()
        if text.startswith(("def ", "async def ", "class ")):
            known[header] = 0
            break
        branch = text.startswith(("if ", "elif "))
        own = 1 if branch and has_default(lines.line, header + 1, lines.indent(header)) else 0
        met.append((header, own))
        header = lines.parent(header)
    for header, own in reversed(met):
        found += own
        known[header] = found
    return found


def has_default(line: Callable[[int], str | None], header: int, indent: int) -> bool:
    """Does the `if`/`elif` chain whose header is line HEADER (1-based, at INDENT; LINE gives
    a line by its number) end in an `else:` whose body does something (not only raise, check
    with `assert`, or `pass`: that is no other way the program may take)?"""
    number = header
    while (text := line(number := number + 1)) is not None:
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#") or len(text) - len(stripped) > indent:
            continue
        if len(text) - len(stripped) < indent or not stripped.startswith(("elif ", "else")):
            return False
        if stripped.startswith("else"):
            after = number
            while (body := line(after := after + 1)) is not None and (
                not body.strip() or body.strip().startswith("#")
            ):
                pass
            return not (body or "").strip().startswith(NOTHING_ELSE)
    return False


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


def splat_keys(
    graph: FlowGraph, tables: FileTables, call_id: int, arg: Arg
) -> frozenset[str] | None:
    """The constant keys a `**d` argument of call CALL_ID holds, or None when they cannot be
    known: d is bound in the call's function only to `dict(k=...)` calls or dict displays
    with constant string keys, and stored into only at constant keys (`d["k"] = v`);
    `**dict(k=...)` and `**{"k": ...}` written in the call itself say theirs."""
    if arg.star != 2:
        return None
    value = arg.value
    if value.calls or (value.shape is not None and value.shape[0] != "parts"):
        return value_keys(tables, value_row(value))
    if len(value.refs) != 1 or "." in value.refs[0]:
        return None
    name = value.refs[0]
    scope = tables.calls[call_id].scope
    keys: set[str] = set()
    for definition in graph.local_definitions(tables, scope, name):
        where = step_ids.address(definition)
        if where.kind != "a":
            return None  # a parameter: its keys come from the callers
        if tables.flows.patterns.get(where.number, ("",))[0] == "item":
            continue  # `d["k"] = v`: its key is read below
        found = value_keys(tables, row_at(tables.flows.assigns, where.number)[ASSIGN_VALUE])
        if found is None:
            return None
        keys |= found
    patterns = tables.flows.patterns
    for index, pattern in patterns.items():
        if not (pattern[0] == "item" and pattern[1] == ("name", name)):
            continue
        if row_at(tables.flows.assigns, index)[0] != scope:
            continue
        key = pattern[2]
        if not (isinstance(key, tuple) and key[0] == "const" and isinstance(key[1], str)):
            return None
        keys.add(key[1])
    return frozenset(keys) if keys else None


def value_keys(tables: FileTables, value: Row) -> frozenset[str] | None:
    """The constant keys of the dict VALUE (a Value's row) makes: a `dict(k=...)` call or a
    display `{"k": ...}`; None for anything else."""
    refs, calls, shape = value[VALUE_REFS], value[VALUE_CALLS], value[VALUE_SHAPE]
    if shape is not None and shape[0] == "dict":
        keys = [key for key, _ in shape[1]]
        if all(isinstance(k, tuple) and k[0] == "const" and isinstance(k[1], str) for k in keys):
            return frozenset(k[1] for k in keys)
        return None
    if len(calls) != 1 or refs:
        return None
    call = row_at(tables.flows.calls, calls[0])
    args = call[CALL_ARGS]
    if call[CALLEE] != "dict" or not all(a[0] and a[2] == 0 for a in args):
        return None
    return frozenset(a[0] for a in args)
