"""What else `sgtrace export` draws around a chain, as drawing graphs for
tracer/views/graph_formats.py: the call graph around it (`--scope calls`) and a whole file's
dataflow graph (`--scope file`).

This module only draws. The calls come from the call graph's engine, asked one function at a
time (tracer/analyses/calls/queries.py): the edges `sgtrace callgraph` keeps are drawn solid,
the same rules' guesses below its threshold dashed and labelled `(guess 0.5)`.
Both drawings are built from what a query reaches, never from the whole tree (the whole call
graph of a large release takes tens of seconds). Where a drawing would be too large to read,
the nodes nearest the chain are kept (breadth first), and the result says how many were left
out."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import networkx as nx

from tracer.analyses.calls.queries import CallEdge, CallQueries
from tracer.errors import SgtraceError
from tracer.graph.steps import EDGE_REASONS, Step
from tracer.index.calls.rules import MIN_CONFIDENCE
from tracer.session import Session
from tracer.trace.chains import Chain
from tracer.views.graph_formats import first_code_line

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


def calls_around(
    session: Session, chain: Chain, depth: int = 1, max_nodes: int = DEFAULT_MAX_NODES
) -> Drawing:
    """The functions CHAIN's steps live in (bold), the functions calling them and the ones they
    call, DEPTH levels each way, as a drawing graph keyed by dotted name: one cluster per
    file, each call edge labelled with its call lines. The edges are the call graph's
    (tracer/analyses/calls/queries.py): solid where `sgtrace callgraph` has them too, dashed
    and labelled `(guess 0.5)` where the rule could only guess. Functions outside the
    tree are left out; at most MAX_NODES nodes, the nearest levels first."""
    queries = CallQueries(session)
    start = list(dict.fromkeys(queries.scope_name(s.file, s.symbol) for s in chain.steps))
    on_chain = set(start)
    near = queries.around(start, depth)
    kept = sorted(near.levels, key=lambda name: (near.levels[name], name))[:max_nodes]
    graph = nx.MultiDiGraph(param=chain.param, scope="calls", depth=depth)
    graph.graph["title"] = f"{chain.param}: the calls around its chain"
    for name in kept:
        place = queries.place(name)
        assert place is not None  # `around` reaches names of the tree only
        graph.add_node(
            name,
            file=place.path,
            line=place.line,
            symbol=place.scope,
            on_chain=name in on_chain,
            level=near.levels[name],
            label=f"{place.scope}:{place.line}" if place.line else place.scope,
            bold=name in on_chain,
        )
    sites: dict[tuple[str, str], list[CallEdge]] = {}
    for edge in near.edges:
        if edge.caller in graph and edge.callee in graph:
            sites.setdefault((edge.caller, edge.callee), []).append(edge)
    for (src, dst), edges in sorted(sites.items()):
        graph.add_edge(
            src, dst, key="call", **call_edge(edges, src in on_chain and dst in on_chain)
        )
    return Drawing(graph, len(near.levels) - len(kept))


def call_edge(sites: list[CallEdge], bold: bool) -> dict[str, object]:
    """The attributes of one drawn edge for its call SITES: the lines, and the best
    confidence; a guess (no site the call graph keeps) is dashed and says so."""
    confidence = max(site.confidence for site in sites)
    lines = sorted({site.line for site in sites})
    label = "line " + ", ".join(map(str, lines[:MAX_CALL_LINES]))
    label += ", ..." if len(lines) > MAX_CALL_LINES else ""
    guess = confidence < MIN_CONFIDENCE
    if guess:
        label += f" (guess {confidence:.1f})"
    return {
        "kind": "call",
        "confidence": confidence,
        "calls": len(lines),
        "label": label,
        "bold": bold,
        "dashed": guess,
    }


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
    # The chain's own edges within the file: the ways it found through objects and namespaces.
    edges += [e for e in chain.edges if e.src in kept and e.dst in kept and e.src != e.dst]
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
