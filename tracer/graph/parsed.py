"""The objects made from parsed command-line flags. A flag's value lands in the field of its
dest (a `flag_to_field` edge, joined by name), but the object that holds it is not every
object of the field's class: it is the one made from the namespace the parser returns
(`args = parser.parse_args()`, then `Config(**vars(args))` or `cls(**{a: getattr(args, a)
...})`). This module finds those constructions: from the flag's `add_argument` call to its
parser, from the parser to where it parses (in the flag's function, or in the callers that
hand it the parser), and forward from the namespace to the constructor calls of the class
it reaches."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tracer.extract.facts import MODULE_SCOPE, Call
from tracer.graph.flags import FLAG_CALL, written_flags
from tracer.graph.steps import CARRYING, TRUSTED, Edge, Step
from tracer.store import step_ids

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from tracer.extract.facts import Arg
    from tracer.graph.file_steps import FileTables
    from tracer.index.index import Index
    from tracer.index.resolve import CallTarget, Resolver
    from tracer.store.facts import Facts


class FlowGraph(Protocol):
    """What the parsed flags ask of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    index: Index
    resolver: Resolver
    facts: Facts

    def file(self, path: str) -> FileTables: ...

    def step(self, step_id: str) -> Step: ...

    def edges(self, step_id: str, forward: bool) -> list[Edge]: ...

    def centrality(self, step_id: str) -> int: ...

    def mentioning(self, word: str) -> list[str]: ...

    def callers(
        self, function: str, within: set[str] | None = None
    ) -> Iterator[tuple[FileTables, int, CallTarget]]: ...

    def bindings(
        self,
        target: CallTarget,
        arg: Arg,
        siblings: tuple[Arg, ...] = (),
        keys: frozenset[str] | None = None,
    ) -> list[tuple[str, str, float]]: ...


PARSE_METHODS = ("parse_args", "parse_known_args", "parse_intermixed_args")
# Calls that make a parser's part whose flags the parser parses (`parser.add_argument_group`).
PARSER_PARTS = (
    "add_argument_group",
    "add_mutually_exclusive_group",
    "add_subparsers",  # `sub = parser.add_subparsers()`: the parser parses its commands
    "add_parser",  # `launch = sub.add_parser("launch")`: one command's parser
)
HAND_ON = 3  # callers a parser is followed up through, to where it parses
MAX_STEPS = 200  # steps expanded from one namespace to the constructions
WHOLE = frozenset({"local", "return_to_result"})  # edges that hand an object on as it is


@dataclass(frozen=True)
class FlagRoute:
    """How a flag's value gets into the object made from the parsed flags: the edges from the
    flag to the namespace the parser returns and on to the constructor's argument that reads
    it (then the field), and the steps that hold the object made (see flag_route)."""

    edges: tuple[Edge, ...]
    holders: frozenset[str]
    classes: frozenset[str]  # the classes the object made may be of
    # A holder -> the way of the object from the step taking the construction to it (the
    # constructor called in the function the namespace is handed to: `return cls(...)`, then
    # the call's result), those edges in order; none where the holder takes the construction.
    made: Mapping[str, tuple[Edge, ...]] = field(default_factory=dict)


def flag_route(graph: FlowGraph, flag_id: str, field_id: str, klass: str) -> FlagRoute | None:
    """The way of the flag FLAG_ID's value to its field FIELD_ID of KLASS through the object
    made from the namespace its parser returns, and the steps of the function that parses
    holding that object: those that take the result of the call the namespace is handed to
    (`settings = Config.from_args(args)`), or of the constructor itself. Where several
    functions parse (a package's own entry and scripts beside it), the one in the module most
    modules import. None when no such object is found."""
    return graph.remembered(
        "flag route",
        (flag_id, field_id),
        lambda: find_flag_route(graph, flag_id, field_id, klass),
    )


def find_flag_route(graph: FlowGraph, flag_id: str, field_id: str, klass: str) -> FlagRoute | None:
    tables = graph.file(step_ids.file_of(flag_id))
    call = tables.calls[step_ids.call_of(flag_id)]
    method = call.callee.rpartition(".")[2]
    starts = parse_starts(graph, flag_id)
    family = set(graph.index.family(klass))
    if method != FLAG_CALL:
        # A generated flag's value lands in an object of the class the generator was given
        # (which may hold KLASS's fields merged into its own).
        family.update(given_classes(graph, tables, call))
    for start in entries_first(graph, starts):
        found = held_from(graph, start, family)
        if found is not None:
            path, holders = found
            first = Edge(flag_id, start, "parsed", 1.0)
            argument = path[-1].dst if path else start
            last = Edge(argument, field_id, "copied_to_field", 1.0)
            made = made_ways(graph, argument, holders)
            return FlagRoute((first, *path, last), frozenset(holders), frozenset(family), made)
    return None


def made_ways(graph: FlowGraph, argument: str, holders: set[str]) -> dict[str, tuple[Edge, ...]]:
    """From the steps taking the construction ARGUMENT is given to, forward along edges
    that carry the object whole (a local, a return to its call's result), to each of
    HOLDERS reached: the edges of the way (see FlagRoute.made), nearest first."""
    tables = graph.file(step_ids.file_of(argument))
    made = tables.consumers.get(step_ids.call_of(argument), [])
    parent: dict[str, Edge | None] = dict.fromkeys(made)
    queue = deque(made)
    ways: dict[str, tuple[Edge, ...]] = {}
    while queue and len(parent) < MAX_STEPS:
        current = queue.popleft()
        if current in holders:
            ways[current] = tuple(way_to(parent, current))
            continue
        for edge in graph.edges(current, True):
            if edge.kind in WHOLE and edge.confidence >= TRUSTED and edge.dst not in parent:
                parent[edge.dst] = edge
                queue.append(edge.dst)
    return ways


def namespace_edges(graph: FlowGraph, flag_id: str) -> list[Edge]:
    """argparse puts each flag's value in the namespace its parser returns, at the attribute
    of its dest: an edge from the flag FLAG_ID to each step taking what its parser parses,
    labelled with the dest (tracer/graph/contents.py keeps the value at `.dest` there; the
    search follows the namespace as any object, to the reads of the dest out of it)."""
    dest = graph.step(flag_id).name
    starts = entries_first(graph, parse_starts(graph, flag_id))
    return [Edge(flag_id, start, "parsed", 1.0, dest) for start in starts]


def parsed_into(graph: FlowGraph, step_id: str, dest: str) -> list[Edge]:
    """Into STEP_ID, when it takes what a parser parses (`args = parser.parse_args()`), for a
    value sought at the attribute DEST of the namespace: the edges from the flags of that
    dest its parser is given (see namespace_edges)."""
    tables = graph.file(step_ids.file_of(step_id))
    step = tables.steps[step_id]
    text = tables.lines.span(step.line, step.end_line).replace(" ", "")
    if not any(f".{method}(" in text for method in PARSE_METHODS):
        return []
    return [
        Edge(flag_id, step_id, "parsed", 1.0, dest)
        for flag_id in written_flags(graph, dest)
        if step_id in parse_starts(graph, flag_id)
    ]


def parse_starts(graph: FlowGraph, flag_id: str) -> list[str]:
    """The steps that take what the parser of the flag FLAG_ID parses (see namespaces)."""
    tables = graph.file(step_ids.file_of(flag_id))
    call = tables.calls[step_ids.call_of(flag_id)]
    head, _, method = call.callee.rpartition(".")
    if method == FLAG_CALL:  # `parser.add_argument(...)`
        names = [head]
    else:  # flags a generator makes (`add_flags(parser, Config)`): the parser is handed to it
        names = [a.value.refs[0] for a in call.args if len(a.value.refs) == 1]
    starts: list[str] = []
    for name in names:
        for parser in parser_names(graph, tables, call.scope, name, call.line):
            starts.extend(s for s in namespaces(graph, tables, call.scope, parser, HAND_ON))
    return list(dict.fromkeys(starts))


def given_classes(graph: FlowGraph, tables: FileTables, call: Call) -> set[str]:
    """The classes (and their families) a call is handed as arguments (`gen(parser, Config)`)."""
    found: set[str] = set()
    module = graph.index.module_of[tables.path]
    for arg in call.args:
        for ref in arg.value.refs:
            symbol = graph.index.resolve(module, ref)
            if symbol is not None and symbol.kind == "class":
                found.update(graph.index.family(symbol.name))
    return found


def entries_first(graph: FlowGraph, starts: list[str]) -> list[str]:
    """STARTS, those in the modules most modules import first; of those as central, the one
    whose parser is given the fewest flags besides (see flags_besides) first."""
    ranked = sorted(starts, key=lambda s: -graph.centrality(s))
    tied = (
        [s for s in ranked if graph.centrality(s) == graph.centrality(ranked[0])] if ranked else []
    )
    if len(tied) < 2:
        return ranked
    return sorted(tied, key=lambda s: flags_besides(graph, s)) + ranked[len(tied) :]


def flags_besides(graph: FlowGraph, start: str) -> int:
    """How many calls of START's function (a step that takes what a parser parses) give that
    parser flags (`X.add_cli_args(parser)`, `parser.add_argument(...)`): of two entries in
    modules as central, the settings' own (`launch_server.py`) gives fewer than a tool that
    adds flags of its own (`bench_latency.py`, `BenchArgs.add_cli_args(parser)`)."""
    tables = graph.file(step_ids.file_of(start))
    scope, line = tables.scope_of[start], tables.steps[start].line
    calls = [tables.calls[c] for c in range(len(tables.calls)) if tables.calls[c].scope == scope]
    parsers = {
        c.callee.rpartition(".")[0]
        for c in calls
        if c.line == line and c.callee.rpartition(".")[2] in PARSE_METHODS
    } - {""}
    count = 0
    for call in calls:
        head, _, method = call.callee.rpartition(".")
        given = any(arg.value.refs == (name,) for arg in call.args for name in parsers)
        if (head in parsers and method == FLAG_CALL) or given:
            count += 1
    return count


def parser_name(graph: FlowGraph, tables: FileTables, scope: str, name: str, line: int) -> str:
    """The name of the parser object NAME stands for in SCOPE (itself, or the parser a part
    of it such as an argument group was made from), or "" when NAME is no plain name."""
    names = parser_names(graph, tables, scope, name, line)
    return names[-1] if names else ""


def parser_names(
    graph: FlowGraph, tables: FileTables, scope: str, name: str, line: int
) -> list[str]:
    """NAME, and the names of the parsers it was made from in SCOPE, in turn (an argument
    group of `parser`, a command's parser from `subparsers`, `subparsers` from its root
    parser); [] when NAME is no plain name. Each may be the one parsed: a name bound both to
    a command's parser and to a parser of its own (`parser = sub.add_parser(...) if sub else
    ArgumentParser(...)`) is parsed as either."""
    found: list[str] = []
    for _ in range(HAND_ON + 1):
        if not name or "." in name or name in found:
            return found
        found.append(name)
        made = [
            call
            for call in calls_named(graph, tables, PARSER_PARTS)
            if call.scope == scope
            and call.line <= line
            and assigned_name(tables, scope, call.line) == name
        ]
        if not made:
            return found
        name = made[-1].callee.rpartition(".")[0]
    return found


def calls_named(graph: FlowGraph, tables: FileTables, names: tuple[str, ...]) -> list[Call]:
    """The calls of TABLES' file whose callee's last name is one of NAMES, in order."""
    callees = graph.facts.rows(tables.path).callees
    return [tables.calls[c] for c in sorted(c for n in names for c in callees.get(n, ()))]


def assigned_name(tables: FileTables, scope: str, line: int) -> str | None:
    """The plain name an assignment of SCOPE at LINE binds, if one does."""
    for (where, name), steps in tables.local_defs.items():
        if where == scope and any(tables.steps[s].line == line for s in steps):
            return name
    return None


def namespaces(
    graph: FlowGraph, tables: FileTables, scope: str, parser: str, hops: int
) -> list[str]:
    """The steps that take what PARSER (a name in SCOPE) parses: in SCOPE, and when PARSER
    is a parameter, in the callers that pass it (HOPS callers up at most)."""
    found = []
    for call in calls_named(graph, tables, PARSE_METHODS):
        if call.scope == scope and call.callee.rpartition(".")[0] == parser:
            found.extend(taking(graph, tables, call.id))
    if found or hops == 0 or scope == MODULE_SCOPE:
        return found
    function = graph.resolver.function(tables.path, scope)
    if function is None:
        return found
    if returns_name(graph, tables, scope, parser):
        # `parser = make_parser(); args = parser.parse_args()`: where the callers parse.
        for caller, call_id, _ in graph.callers(function[0]):
            for step_id in taking(graph, caller, call_id):
                name = caller.bound.get(step_id, "")
                if name and "." not in name:
                    there = caller.scope_of[step_id]
                    found.extend(namespaces(graph, caller, there, name, hops - 1))
            for parse in parses_of_result(caller, call_id):  # `make_parser().parse_args()`
                found.extend(taking(graph, caller, parse))
        return found
    if parser not in {p.name for p in function[1].params}:
        # A parser made here (`parser = make_parser()`), handed to a function that parses it.
        return parsed_below(graph, tables, scope, parser, hops)
    param = step_ids.param_id(tables.path, function[1].qualname, parser)
    for caller, call_id, target in graph.callers(function[0]):
        for arg, arg_step in caller.arguments(call_id):
            binds = graph.bindings(target, arg, caller.calls[call_id].args)
            if any(dst == param for dst, _, _ in binds) and len(arg.value.refs) == 1:
                scope_there = caller.scope_of[arg_step]
                line = caller.steps[arg_step].line
                ref = parser_name(graph, caller, scope_there, arg.value.refs[0], line)
                found.extend(namespaces(graph, caller, scope_there, ref, hops - 1))
    return found


def parses_of_result(tables: FileTables, call_id: int) -> list[int]:
    """The calls that parse with the parser the call CALL_ID returns, written on its result
    (`make_parser().parse_args()`: the facts keep no name for a method of a call's result,
    so the text after the call says which method it is)."""
    call = tables.calls[call_id]
    found = []
    for other in tables.calls:
        if other.callee or other.receiver.calls != (call_id,) or other.line != call.end_line:
            continue
        text = tables.lines.span(other.line, other.end_line)
        if any(f").{method}(" in text.replace(" ", "") for method in PARSE_METHODS):
            found.append(other.id)
    return found


def parsed_below(
    graph: FlowGraph, tables: FileTables, scope: str, parser: str, hops: int
) -> list[str]:
    """Where PARSER, a name of SCOPE, is handed to a function that parses it
    (`args = parse_args_of(parser)`): the steps there that take what it parses (its
    `return parser.parse_args()`, whose result the caller then takes)."""
    found = []
    for reader in tables.local_reads.get((scope, parser), []):
        if tables.steps[reader].kind != "call_arg" or tables.elements.get(reader) is not None:
            continue
        call_id = step_ids.call_of(reader)
        for arg, arg_step in tables.arguments(call_id):
            if arg_step != reader or arg.value.refs != (parser,) or arg.star:
                continue
            for target in tables.targets[call_id]:
                if target.function is None:
                    continue
                for dst, _, _ in graph.bindings(target, arg, tables.calls[call_id].args):
                    if not step_ids.is_param(dst):
                        continue
                    callee = graph.file(step_ids.file_of(dst))
                    name = callee.steps[dst].name
                    found.extend(namespaces(graph, callee, callee.scope_of[dst], name, hops - 1))
    return found


def returns_name(graph: FlowGraph, tables: FileTables, scope: str, name: str) -> bool:
    """Does the function SCOPE return the plain name NAME (`return parser`)?"""
    rows, flows = graph.facts.rows(tables.path), graph.facts.flows(tables.path)
    return any(flows.returns[i].value.refs == (name,) for i in rows.returns_by_scope.get(scope, ()))


def taking(graph: FlowGraph, tables: FileTables, call_id: int) -> list[str]:
    """The steps that take the result of the call CALL_ID (the assignment or return it is
    written in), found from the rows of its function."""
    call = tables.calls[call_id]
    rows, flows = graph.facts.rows(tables.path), graph.facts.flows(tables.path)
    found = []
    for i in rows.assigns_by_scope.get(call.scope, ()):
        assign = flows.assigns[i]
        if any(call_id in value.calls for value in (assign.value, *assign.items)):
            found.extend(step_ids.target_id(tables.path, i, j) for j in range(len(assign.targets)))
    for i in rows.returns_by_scope.get(call.scope, ()):
        returned = flows.returns[i]
        if call_id in returned.value.calls:
            found.append(step_ids.return_id(tables.path, i))
    tables.targets[call_id]  # noqa: B018 (builds the call's unit: its steps)
    return [step_id for step_id in found if step_id in tables.steps]


def held_from(
    graph: FlowGraph, namespace: str, family: set[str]
) -> tuple[list[Edge], set[str]] | None:
    """Forward from NAMESPACE (a step that takes a parse's result) to the nearest constructor
    call of FAMILY's classes whose arguments read it: the edges from NAMESPACE to that
    argument, and the steps of NAMESPACE's function that take the object made (see
    flag_route). Formulas make new values and end a way. None when none is reached."""
    scope = graph.file(step_ids.file_of(namespace)).scope_of[namespace]
    entry: dict[str, str | None] = {namespace: None}  # step -> the call of SCOPE it went by
    parent: dict[str, Edge | None] = {namespace: None}
    queue = deque([namespace])
    expanded = 0
    while queue and expanded < MAX_STEPS:
        current = queue.popleft()
        expanded += 1
        step = graph.step(current)
        tables = graph.file(step.file)
        by = entry[current]
        if step.kind == "call_arg":
            call_id = step_ids.call_of(current)
            if by is None and tables.scope_of[current] == scope:
                by = current  # the call of SCOPE the namespace is handed to
            if any(t.klass in family for t in tables.targets[call_id]):
                assert by is not None
                holders = taking(graph, graph.file(step_ids.file_of(by)), step_ids.call_of(by))
                return way_to(parent, current), set(holders)
        if step.kind == "formula":
            continue
        for edge in graph.edges(current, True):
            if edge.confidence < TRUSTED or edge.dst in entry or not whole(graph, step, edge):
                continue
            entry[edge.dst] = by
            parent[edge.dst] = edge
            queue.append(edge.dst)
    return None


def way_to(parent: dict[str, Edge | None], step: str) -> list[Edge]:
    """The edges a forward search took to STEP (PARENT: each step's edge in), in order."""
    way = []
    while (edge := parent[step]) is not None:
        way.append(edge)
        step = edge.src
    return way[::-1]


def whole(graph: FlowGraph, step: Step, edge: Edge) -> bool:
    """Does EDGE take STEP's value whole (the namespace itself, not `args.port` read out of
    it)? A read in the same function must name it bare (`f(args)`, `getattr(args, k)`)."""
    if edge.kind not in ("local", "local_via_call"):
        return edge.kind in CARRYING
    tables = graph.file(step_ids.file_of(edge.dst))
    return step.name in tables.refs.get(edge.dst, ())
