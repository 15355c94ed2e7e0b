"""Graphs as pictures: Graphviz DOT, GraphML, networkx JSON and Mermaid text, one cluster per
file, what matters bold, guesses dashed. Pure functions; only `render_with_graphviz` runs a
program.

Every writer takes a drawing graph: a networkx MultiDiGraph whose nodes carry `file` (their
cluster), `label` (lines joined by newlines) and `bold`, whose edges carry `label`, `bold` and
`dashed`, and whose graph carries `title`; any other scalar attribute is kept as it is. The
chain is one such graph (`chain_graph`); tracer/views/scopes.py builds the others. Each writer
makes the text it takes from the tree `visible` (JSON: `json_text`), so a drawing printed to a
terminal runs none of the control characters a tree's code may hold."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict

import networkx as nx

from tracer.errors import GraphvizFailed, GraphvizMissing
from tracer.graph.steps import Edge, Step, edge_reason
from tracer.trace.chains import Chain
from tracer.views.schemas import EXPORT
from tracer.views.terminal import json_text, visible

GRAPHVIZ_FORMATS = ("svg", "png")
BINARY_FORMATS = ("png",)  # svg is text (XML): it may go to a terminal or a pipe
CODE_WIDTH = 60  # the first code line is cut here so a node stays readable


def chain_graph(chain: Chain, source: str = "") -> nx.MultiDiGraph:
    """The chain as a drawing graph keyed by step id, in chain order (spine first): every
    attribute a scalar but the graph's `spine`, so each writer takes it as it is."""
    spine_index = {step_id: i for i, step_id in enumerate(chain.spine)}
    graph = nx.MultiDiGraph(
        source=source,
        param=chain.param,
        direction=chain.direction,
        spine=list(chain.spine),
        title=chain.param,
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
            label="\n".join(node_lines(step)),
            bold=step.id in spine_index,
        )
    for edge in chain.edges:
        bold = on_spine(chain, edge, spine_index)
        graph.add_edge(
            edge.src,
            edge.dst,
            key=edge.kind,
            kind=edge.kind,
            confidence=edge.confidence,
            reason=edge_reason(edge),
            on_spine=bold,
            guessed=edge.confidence < 1.0,
            label=edge_label(edge),
            bold=bold,
            dashed=edge.confidence < 1.0,
        )
    return graph


def on_spine(chain: Chain, edge: Edge, spine_index: dict[str, int]) -> bool:
    """EDGE joins two consecutive steps of the spine."""
    i = spine_index.get(edge.src)
    return i is not None and i + 1 < len(chain.spine) and chain.spine[i + 1] == edge.dst


def first_code_line(step: Step) -> str:
    line = step.code.strip().splitlines()[0].strip() if step.code.strip() else ""
    return line if len(line) <= CODE_WIDTH else line[: CODE_WIDTH - 3] + "..."


def node_lines(step: Step) -> list[str]:
    return [f"{step.kind}  {step.symbol}:{step.line}", first_code_line(step)]


def edge_label(edge: Edge) -> str:
    reason = edge_reason(edge)
    return f"{reason} (guess {edge.confidence:.1f})" if edge.confidence < 1.0 else reason


# The chain's own writers, kept for callers that hold a Chain.


def chain_to_json(chain: Chain, source: str) -> str:
    return graph_to_json(chain_graph(chain, source))


def chain_to_graphml(chain: Chain) -> str:
    return graph_to_graphml(chain_graph(chain), "step_id")


def chain_to_dot(chain: Chain) -> str:
    return graph_to_dot(chain_graph(chain))


def chain_to_mermaid(chain: Chain) -> str:
    return graph_to_mermaid(chain_graph(chain))


# Any drawing graph -------------------------------------------------------------------------


def graph_to_json(graph: nx.MultiDiGraph) -> str:
    """networkx node-link data (edges under "edges"): `nx.node_link_graph(data, edges="edges")`
    reads it back; the schema (tracer/views/schemas.py) is among the graph's attributes."""
    data = nx.node_link_data(graph, edges="edges")
    data["graph"] = {"schema": EXPORT, **data["graph"]}
    return json_text(data, indent=2)


def graph_to_graphml(graph: nx.MultiDiGraph, id_attribute: str) -> str:
    """GraphML that `nx.read_graphml` reads back: node ids n0, n1... in graph order, the
    original id kept in ID_ATTRIBUTE; a list-valued graph attribute (GraphML holds none)
    becomes its length, `KEY_length`; text made `visible` (XML holds no control character)."""
    graph = graph.copy()
    for key, value in list(graph.graph.items()):
        if isinstance(value, list | tuple):
            del graph.graph[key]
            graph.graph[f"{key}_length"] = len(value)
    for data in (graph.graph, *(d for _, d in graph.nodes(data=True))):
        shown_text(data)
    for *_, data in graph.edges(keys=True, data=True):
        shown_text(data)
    ids = node_ids(graph)
    nx.set_node_attributes(graph, {node: node for node in ids}, id_attribute)
    return "\n".join(nx.generate_graphml(nx.relabel_nodes(graph, ids))) + "\n"


def shown_text(data: dict[str, object]) -> None:
    """The text values of DATA made `visible`, in place."""
    for key, value in data.items():
        if isinstance(value, str):
            data[key] = visible(value)


def node_ids(graph: nx.MultiDiGraph) -> dict[str, str]:
    return {node: f"n{i}" for i, node in enumerate(graph)}


def by_file(graph: nx.MultiDiGraph) -> dict[str, list[str]]:
    """Nodes by their `file`, files sorted, nodes in graph order."""
    files: dict[str, list[str]] = defaultdict(list)
    for node, data in graph.nodes(data=True):
        files[data["file"]].append(node)
    return dict(sorted(files.items()))


# DOT -------------------------------------------------------------------------------------


def dot_string(text: str) -> str:
    """TEXT as a quoted DOT string, `visible`: backslashes doubled so Graphviz reads no
    escapes in code."""
    text = one_line(visible(text))
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def one_line(text: str) -> str:
    """TEXT with its line breaks as spaces."""
    return text.replace("\r\n", " ").replace("\n", " ")


def dot_label(lines: list[str]) -> str:
    """Left-justified lines (`\\l` ends each one)."""
    quoted = [dot_string(line)[1:-1] + "\\l" for line in lines]
    return '"' + "".join(quoted) + '"'


def graph_to_dot(graph: nx.MultiDiGraph) -> str:
    """Graphviz DOT: a cluster per file, bold nodes and edges penwidth 3, dashed ones dashed."""
    ids = node_ids(graph)
    lines = [
        "digraph chain {",
        f"  label={dot_string(graph.graph.get('title', ''))};",
        '  labelloc="t";',
        "  rankdir=TB;",
        '  node [shape=box, fontname="monospace", fontsize=10];',
        '  edge [fontname="sans-serif", fontsize=9];',
    ]
    for number, (file, nodes) in enumerate(by_file(graph).items()):
        lines.append(f"  subgraph cluster_{number} {{")
        lines.append(f"    label={dot_string(file)};")
        lines.append('    style="rounded";')
        for node in nodes:
            data = graph.nodes[node]
            width = ", penwidth=3" if data["bold"] else ""
            label = dot_label(data["label"].split("\n"))
            lines.append(f"    {ids[node]} [label={label}{width}];")
        lines.append("  }")
    for src, dst, data in graph.edges(data=True):
        style = ["penwidth=3"] if data["bold"] else []
        if data["dashed"]:
            style.append("style=dashed")
        style.append(f"label={dot_string(data['label'])}")
        lines.append(f"  {ids[src]} -> {ids[dst]} [{', '.join(style)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz_program(fmt: str) -> str:
    """The path of Graphviz's `dot`, which drawing FMT (svg or png) needs."""
    if fmt not in GRAPHVIZ_FORMATS:
        raise ValueError(f"graphviz format {fmt!r} is not one of {GRAPHVIZ_FORMATS}")
    program = shutil.which("dot")
    if program is None:
        raise GraphvizMissing(
            f"{fmt} needs the Graphviz `dot` program, not found on PATH",
            "install Graphviz: apt-get install graphviz",
        )
    return program


def render_with_graphviz(dot_text: str, fmt: str) -> bytes:
    """DOT_TEXT drawn by Graphviz `dot` as svg or png bytes."""
    program = graphviz_program(fmt)
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
    """TEXT safe inside a quoted Mermaid label: `visible`, quotes, markup and entity starts
    as codes."""
    codes = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;"}
    return "".join(codes.get(char, char) for char in one_line(visible(text)))


def graph_to_mermaid(graph: nx.MultiDiGraph) -> str:
    """`flowchart TD`: a subgraph per file, ids n0, n1..., dashed edges dotted (`-.->`), other
    bold ones thick (`==>`), bold nodes in class `bold`."""
    ids = node_ids(graph)
    lines = ["flowchart TD"]
    for number, (file, nodes) in enumerate(by_file(graph).items()):
        lines.append(f'  subgraph f{number} ["{mermaid_text(file)}"]')
        for node in nodes:
            text = graph.nodes[node]["label"].split("\n")
            label = "<br/>".join(mermaid_text(line) for line in text)
            lines.append(f'    {ids[node]}["{label}"]')
        lines.append("  end")
    for src, dst, data in graph.edges(data=True):
        if data["dashed"]:
            arrow = "-.->"  # a guess stays visible on the spine too: Mermaid has no thick dots
        elif data["bold"]:
            arrow = "==>"
        else:
            arrow = "-->"
        lines.append(f'  {ids[src]} {arrow}|"{mermaid_text(data["label"])}"| {ids[dst]}')
    bold = [ids[node] for node, data in graph.nodes(data=True) if data["bold"]]
    if bold:
        lines.append("  classDef bold stroke-width:3px")
        lines.append("  class " + ",".join(bold) + " bold")
    return "\n".join(lines) + "\n"
