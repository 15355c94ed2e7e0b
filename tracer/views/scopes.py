"""What else `sgtrace export` draws around a chain, as drawing graphs for
tracer/views/graph_formats.py: the call graph around it (`--scope calls`) and a whole file's
dataflow graph (`--scope file`).

Both are built from what a query reaches, never from the whole tree: the call graph of a large
release takes tens of seconds, the callers and callees of a few functions well under one.
Where a drawing would be too large to read, the nodes nearest the chain are kept (breadth
first), and the result says how many were left out."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import networkx as nx

from tracer.errors import SgtraceError
from tracer.extract.facts import MODULE_SCOPE, Call
from tracer.graph.steps import EDGE_REASONS, Step
from tracer.index.resolve import GUESS, OVERRIDE, CallTarget
from tracer.session import Session
from tracer.trace.chains import Chain
from tracer.views.graph_formats import first_code_line

GUESS_BELOW = OVERRIDE  # a call resolved with less confidence than this is a guess
# Name-only matches among several methods (confidence below one match's GUESS) are left out.
MIN_CALL_CONFIDENCE = GUESS
DEFAULT_MAX_NODES = 150  # Graphviz still lays this out in seconds, and a person can read it
MAX_CALL_LINES = 3  # call sites named on one edge's label


MAX_FILES_NAMED = 5  # files an error suggests instead of a --file that is not there
# The options that shape only some scopes, and those scopes.
SCOPE_OPTIONS = {"--file": ("file",), "--depth": ("calls",), "--max-nodes": ("calls", "file")}


class FileNotInSource(SgtraceError):
    """`--file PATH` names no Python file of the source."""


class OptionNotForScope(SgtraceError):
    """An option given with a scope that does not use it (it would be ignored)."""


def check_scope_options(scope: str, given: list[str]) -> None:
    """Refuse the options of GIVEN that SCOPE does not use, rather than ignore them."""
    unused = [o for o in given if scope not in SCOPE_OPTIONS[o]]
    if not unused:
        return
    scopes = sorted({s for o in unused for s in SCOPE_OPTIONS[o]})
    if len(unused) == 1:
        what, pronoun = f"{unused[0]} does", "it"
    else:
        what, pronoun = f"{', '.join(unused[:-1])} and {unused[-1]} do", "them"
    raise OptionNotForScope(
        f"{what} nothing with --scope {scope}",
        f"leave {pronoun} out, or draw --scope " + " or --scope ".join(scopes),
    )


@dataclass(frozen=True, slots=True)
class Drawing:
    """A drawing graph, and how many nodes the cap left out of it."""

    graph: nx.MultiDiGraph
    left_out: int


# -- the call graph around the chain ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """Code that calls: a function, a class body or a module's own code (PyCG's convention:
    module-level code is the module)."""

    name: str  # dotted from the source root: pkg.mod.Class.method, pkg.mod.Class, pkg.mod
    path: str
    scope: str  # the qualname calls are made in, MODULE_SCOPE for the module


def calls_around(
    session: Session, chain: Chain, depth: int = 1, max_nodes: int = DEFAULT_MAX_NODES
) -> Drawing:
    """The functions CHAIN's steps live in (bold), the functions calling them and the ones they
    call, DEPTH levels each way, as a drawing graph keyed by dotted name: one cluster per
    file, each call edge labelled with its call lines, dashed when it is a guess. Functions
    outside the tree are left out; at most MAX_NODES nodes, the nearest levels first."""
    chain_callers: dict[str, Caller] = {}
    for step in chain.steps:
        caller = caller_of(session, step.file, step.symbol)
        chain_callers.setdefault(caller.name, caller)
    known, level, calls = reach(session, chain_callers, depth)
    kept = sorted(known, key=lambda name: (level[name], name))[:max_nodes]
    kept_set = set(kept)
    graph = nx.MultiDiGraph(param=chain.param, scope="calls", depth=depth)
    graph.graph["title"] = f"{chain.param}: the calls around its chain"
    for name in kept:
        caller = known[name]
        line = definition_line(session, caller)
        graph.add_node(
            name,
            file=caller.path,
            line=line,
            symbol=caller.scope,
            on_chain=name in chain_callers,
            level=level[name],
            label=f"{caller.scope}:{line}" if line else caller.scope,
            bold=name in chain_callers,
        )
    for (src, dst), sites in sorted(calls.items()):
        if src not in kept_set or dst not in kept_set:
            continue
        confidence = max(c for _, c in sites)
        lines = sorted({line for line, _ in sites})
        label = "line " + ", ".join(map(str, lines[:MAX_CALL_LINES]))
        label += ", ..." if len(lines) > MAX_CALL_LINES else ""
        if confidence < GUESS_BELOW:
            label += f" (guess {confidence:.1f})"
        graph.add_edge(
            src,
            dst,
            key="call",
            kind="call",
            confidence=confidence,
            calls=len(lines),
            label=label,
            bold=src in chain_callers and dst in chain_callers,
            dashed=confidence < GUESS_BELOW,
        )
    return Drawing(graph, len(known) - len(kept))


def reach(
    session: Session, start: dict[str, Caller], depth: int
) -> tuple[dict[str, Caller], dict[str, int], dict[tuple[str, str], list[tuple[int, float]]]]:
    """From START, DEPTH levels of callers upward and of callees downward: every caller
    reached, its level (0 for START), and the call sites (line, confidence) of each edge."""
    known = dict(start)
    level = {name: 0 for name in start}
    calls: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for upward in (False, True):
        frontier = list(start)
        for distance in range(1, depth + 1):
            found: list[str] = []
            for name in frontier:
                near = callers_of if upward else callees_of
                for other, line, confidence in near(session, known[name]):
                    edge = (other.name, name) if upward else (name, other.name)
                    calls.setdefault(edge, []).append((line, confidence))
                    if other.name not in known:
                        known[other.name] = other
                        level[other.name] = distance
                        found.append(other.name)
            frontier = found
    return known, level, calls


def caller_of(session: Session, path: str, symbol: str) -> Caller:
    """The innermost function or class SYMBOL (a step's symbol) lies in, else the module."""
    module = session.index.module_of[path]
    scope = symbol
    while scope and scope != MODULE_SCOPE:
        name = f"{module}.{scope}"
        if name in session.index.functions or name in session.index.classes:
            return Caller(name, path, scope)
        scope = scope.rpartition(".")[0]
    return Caller(module, path, MODULE_SCOPE)


def callees_of(session: Session, caller: Caller) -> list[tuple[Caller, int, float]]:
    """The tree's functions CALLER's own calls may run: (callee, call line, confidence)."""
    found = []
    resolver = session.graph.resolver
    for call in session.facts.flows(caller.path).calls:
        if call.scope != caller.scope:
            continue
        for target in resolver.resolve_call(caller.path, call):
            if target.confidence < MIN_CALL_CONFIDENCE:
                continue
            callee = target_caller(session, target)
            if callee is not None:
                found.append((callee, call.line, target.confidence))
    return found


def target_caller(session: Session, target: CallTarget) -> Caller | None:
    """The function TARGET runs; the class itself for an `__init__` the class synthesizes."""
    name = target.function or target.klass
    if name is None:
        return None
    path, definition = (
        session.index.functions[name] if target.function else session.index.classes[name]
    )
    return Caller(name, path, definition.qualname)


def callers_of(session: Session, caller: Caller) -> list[tuple[Caller, int, float]]:
    """The code that calls the function CALLER: (caller, call line, confidence). A class
    body or a module is not called (a constructor's callers reach its `__init__`)."""
    if caller.name not in session.index.functions:
        return []
    found = []
    for tables, call_id, target in session.graph.callers(caller.name):
        if target.confidence < MIN_CALL_CONFIDENCE:
            continue
        call: Call = session.facts.flows(tables.path).calls[call_id]
        outer = caller_of(session, tables.path, call.scope)
        found.append((outer, call.line, target.confidence))
    return found


def definition_line(session: Session, caller: Caller) -> int:
    """The line CALLER is defined on; 0 for a module."""
    found = session.index.functions.get(caller.name) or session.index.classes.get(caller.name)
    return found[1].line if found is not None else 0


# -- a whole file's dataflow graph -------------------------------------------------------------


def chain_file(chain: Chain) -> str:
    """The file a file drawing shows by default: where the spine first binds the traced name
    (a seed), else the first spine step's file."""
    steps = {step.id: step for step in chain.steps}
    seeds = set(chain.seeds)
    first = next((s for s in chain.spine if s in seeds), chain.spine[0] if chain.spine else None)
    if first is None:
        return chain.steps[0].file
    return steps[first].file


def spine_files(chain: Chain) -> list[str]:
    """The files of CHAIN's spine in spine order, at most MAX_FILES_NAMED of them, the one a
    file drawing shows by default always among them."""
    steps = {step.id: step for step in chain.steps}
    files = list(dict.fromkeys(steps[s].file for s in chain.spine))
    named = files[:MAX_FILES_NAMED]
    if chain.steps and chain_file(chain) not in named:
        named[-1:] = [chain_file(chain)]
    return named + (["…"] if len(files) > len(named) else [])


def file_graph(
    session: Session, chain: Chain, path: str, max_nodes: int = DEFAULT_MAX_NODES
) -> Drawing:
    """Every step of PATH and the dataflow edges between them, CHAIN's steps bold, as a
    drawing graph keyed by step id in line order. Past MAX_NODES steps, the ones nearest the
    chain's steps in this graph are kept (then the first lines)."""
    if path not in session.index.module_of:
        raise FileNotInSource(
            f"{path!r} is not a Python file of the source",
            "give a path relative to the source root; the spine's files: "
            + ", ".join(spine_files(chain)),
        )
    flow = session.graph
    tables = flow.file(path)
    steps = sorted(map(tables.step, tables.steps), key=lambda s: (s.line, s.end_line, s.id))
    on_chain = {step.id for step in chain.steps if step.file == path}
    kept = nearest(session, path, steps, on_chain, max_nodes)
    edges = [
        edge
        for step in steps
        if step.id in kept
        for edge in flow.edges(step.id, True)
        if edge.dst in kept and edge.src != edge.dst
    ]
    spine = set(chain.spine)
    graph = nx.MultiDiGraph(param=chain.param, scope="file", file=path)
    graph.graph["title"] = f"{chain.param}: {path}"
    for step in steps:
        if step.id not in kept:
            continue
        graph.add_node(
            step.id,
            kind=step.kind,
            file=path,
            line=step.line,
            end_line=step.end_line,
            symbol=step.symbol,
            name=step.name,
            code=step.code,
            on_chain=step.id in on_chain,
            on_spine=step.id in spine,
            label=f"{step.kind}  {step.symbol}:{step.line}\n{first_code_line(step)}",
            bold=step.id in on_chain,
        )
    for edge in edges:
        if edge.src not in kept or edge.dst not in kept:
            continue
        reason = EDGE_REASONS.get(edge.kind, edge.kind)
        graph.add_edge(
            edge.src,
            edge.dst,
            key=edge.kind,
            kind=edge.kind,
            confidence=edge.confidence,
            label=f"{reason} (guess {edge.confidence:.1f})" if edge.confidence < 1.0 else reason,
            bold=edge.src in on_chain and edge.dst in on_chain,
            dashed=edge.confidence < 1.0,
        )
    return Drawing(graph, len(steps) - len(kept))


def nearest(
    session: Session, path: str, steps: list[Step], start: set[str], limit: int
) -> set[str]:
    """Up to LIMIT step ids of PATH: all of them when they fit; else START, then the steps
    of PATH the dataflow reaches from START either way, nearest first, then the first lines.
    Only the steps reached are expanded (a large file's every step costs seconds)."""
    if len(steps) <= limit:
        return {step.id for step in steps}
    order = {step.id: i for i, step in enumerate(steps)}
    kept = sorted(start, key=order.__getitem__)[:limit]
    seen = set(kept)
    queue = deque(kept)
    while queue and len(kept) < limit:
        step_id = queue.popleft()
        near = [e.dst for e in session.graph.edges(step_id, True)]
        near += [e.src for e in session.graph.edges(step_id, False)]
        for other in sorted((n for n in near if n in order), key=order.__getitem__):
            if other not in seen and len(kept) < limit:
                seen.add(other)
                kept.append(other)
                queue.append(other)
    kept += [step.id for step in steps if step.id not in seen][: limit - len(kept)]
    return set(kept)
