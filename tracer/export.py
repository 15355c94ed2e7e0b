"""A chain as a picture: Graphviz DOT, GraphML, networkx JSON and Mermaid text, one cluster
per file, the spine bold, guessed steps dashed. Pure functions; only `render_with_graphviz`
runs a program."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import defaultdict

import networkx as nx

from tracer.errors import GraphvizFailed, GraphvizMissing
from tracer.steps import EDGE_REASONS, Edge, Step
from tracer.trace import Chain

GRAPHVIZ_FORMATS = ("svg", "png")
CODE_WIDTH = 60  # the first code line is cut here so a node stays readable


def chain_graph(chain: Chain, source: str = "") -> nx.MultiDiGraph:
    """The chain as a networkx graph keyed by step id: every attribute a scalar, so each
    writer (GraphML included) takes it as it is."""
    spine_index = {step_id: i for i, step_id in enumerate(chain.spine)}
    graph = nx.MultiDiGraph(
        source=source, param=chain.param, direction=chain.direction, spine=list(chain.spine)
    )
    for step in chain.steps:
        graph.add_node(
            step.id,
            kind=step.kind,
            file=step.file,
            line=step.line,
            end_line=step.end_line,
            symbol=step.symbol,
            name=step.name,
            code=step.code,
            on_spine=step.id in spine_index,
            spine_index=spine_index.get(step.id, -1),
        )
    for edge in chain.edges:
        graph.add_edge(
            edge.src,
            edge.dst,
            key=edge.kind,
            kind=edge.kind,
            confidence=edge.confidence,
            reason=EDGE_REASONS.get(edge.kind, edge.kind),
            on_spine=on_spine(chain, edge, spine_index),
            guessed=edge.confidence < 1.0,
        )
    return graph


def on_spine(chain: Chain, edge: Edge, spine_index: dict[str, int]) -> bool:
    """EDGE joins two consecutive steps of the spine."""
    i = spine_index.get(edge.src)
    return i is not None and i + 1 < len(chain.spine) and chain.spine[i + 1] == edge.dst


def chain_to_json(chain: Chain, source: str) -> str:
    """networkx node-link data (edges under "edges"): `nx.node_link_graph(data, edges="edges")`
    reads it back."""
    data = nx.node_link_data(chain_graph(chain, source), edges="edges")
    return json.dumps(data, indent=2)


def chain_to_graphml(chain: Chain) -> str:
    """GraphML that `nx.read_graphml` reads back; node ids n0, n1... in chain order, the step
    id kept as the `step_id` attribute."""
    graph = chain_graph(chain)
    del graph.graph["spine"]  # GraphML holds no lists: the on_spine/spine_index attributes say it
    graph.graph["spine_length"] = len(chain.spine)
    ids = node_ids(chain)
    nx.set_node_attributes(graph, {step_id: step_id for step_id in ids}, "step_id")
    return "\n".join(nx.generate_graphml(nx.relabel_nodes(graph, ids))) + "\n"


def node_ids(chain: Chain) -> dict[str, str]:
    return {step.id: f"n{i}" for i, step in enumerate(chain.steps)}


def by_file(chain: Chain) -> dict[str, list[Step]]:
    files: dict[str, list[Step]] = defaultdict(list)
    for step in chain.steps:
        files[step.file].append(step)
    return dict(sorted(files.items()))


def first_code_line(step: Step) -> str:
    line = step.code.strip().splitlines()[0].strip() if step.code.strip() else ""
    return line if len(line) <= CODE_WIDTH else line[: CODE_WIDTH - 3] + "..."


def node_lines(step: Step) -> list[str]:
    return [f"{step.kind}  {step.symbol}:{step.line}", first_code_line(step)]


def edge_label(edge: Edge) -> str:
    reason = EDGE_REASONS.get(edge.kind, edge.kind)
    return f"{reason} (guess {edge.confidence:.1f})" if edge.confidence < 1.0 else reason


# DOT -------------------------------------------------------------------------------------


def dot_string(text: str) -> str:
    """TEXT as a quoted DOT string: backslashes doubled so Graphviz reads no escapes in code."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def dot_label(lines: list[str]) -> str:
    """Left-justified lines (`\\l` ends each one)."""
    quoted = [dot_string(line)[1:-1] + "\\l" for line in lines]
    return '"' + "".join(quoted) + '"'


def chain_to_dot(chain: Chain) -> str:
    """Graphviz DOT: a cluster per file, the spine bold (penwidth 3), guesses dashed."""
    ids = node_ids(chain)
    spine = set(chain.spine)
    spine_index = {step_id: i for i, step_id in enumerate(chain.spine)}
    lines = [
        "digraph chain {",
        f"  label={dot_string(chain.param)};",
        '  labelloc="t";',
        "  rankdir=TB;",
        '  node [shape=box, fontname="monospace", fontsize=10];',
        '  edge [fontname="sans-serif", fontsize=9];',
    ]
    for number, (file, steps) in enumerate(by_file(chain).items()):
        lines.append(f"  subgraph cluster_{number} {{")
        lines.append(f"    label={dot_string(file)};")
        lines.append('    style="rounded";')
        for step in steps:
            width = ", penwidth=3" if step.id in spine else ""
            lines.append(f"    {ids[step.id]} [label={dot_label(node_lines(step))}{width}];")
        lines.append("  }")
    for edge in chain.edges:
        style = ["penwidth=3"] if on_spine(chain, edge, spine_index) else []
        if edge.confidence < 1.0:
            style.append("style=dashed")
        style.append(f"label={dot_string(edge_label(edge))}")
        lines.append(f"  {ids[edge.src]} -> {ids[edge.dst]} [{', '.join(style)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_with_graphviz(dot_text: str, fmt: str) -> bytes:
    """DOT_TEXT drawn by Graphviz `dot` as svg or png bytes."""
    if fmt not in GRAPHVIZ_FORMATS:
        raise ValueError(f"graphviz format {fmt!r} is not one of {GRAPHVIZ_FORMATS}")
    program = shutil.which("dot")
    if program is None:
        raise GraphvizMissing(
            f"{fmt} needs the Graphviz `dot` program, not found on PATH",
            "install Graphviz: apt-get install graphviz",
        )
    done = subprocess.run(
        [program, f"-T{fmt}"], input=dot_text.encode(), capture_output=True, check=False
    )
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise GraphvizFailed(
            f"Graphviz dot failed: {message[0] if message else done.returncode}",
            "export -f dot and check the file with dot",
        )
    return done.stdout


# Mermaid ---------------------------------------------------------------------------------


def mermaid_text(text: str) -> str:
    """TEXT safe inside a quoted Mermaid label: quotes, markup and entity starts as codes."""
    codes = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;"}
    return "".join(codes.get(char, char) for char in text.replace("\n", " "))


def chain_to_mermaid(chain: Chain) -> str:
    """`flowchart TD`: a subgraph per file, ids n0, n1..., the spine thick (`==>`), guesses
    dotted (`-.->`)."""
    ids = node_ids(chain)
    spine = set(chain.spine)
    spine_index = {step_id: i for i, step_id in enumerate(chain.spine)}
    lines = ["flowchart TD"]
    for number, (file, steps) in enumerate(by_file(chain).items()):
        lines.append(f'  subgraph f{number} ["{mermaid_text(file)}"]')
        for step in steps:
            label = "<br/>".join(mermaid_text(line) for line in node_lines(step))
            lines.append(f'    {ids[step.id]}["{label}"]')
        lines.append("  end")
    for edge in chain.edges:
        if on_spine(chain, edge, spine_index):
            arrow = "==>"
        elif edge.confidence < 1.0:
            arrow = "-.->"
        else:
            arrow = "-->"
        label = mermaid_text(edge_label(edge))
        lines.append(f'  {ids[edge.src]} {arrow}|"{label}"| {ids[edge.dst]}')
    if spine:
        lines.append("  classDef spine stroke-width:3px")
        lines.append("  class " + ",".join(ids[s] for s in chain.spine) + " spine")
    return "\n".join(lines) + "\n"
