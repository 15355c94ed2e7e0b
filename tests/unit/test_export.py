"""`sgtrace export`: every format read back by a real reader (networkx, Graphviz)."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess

import networkx as nx
import pytest

from tests.conftest import trace
from tracer.cli import main
from tracer.errors import GraphvizMissing
from tracer.export import (
    chain_to_dot,
    chain_to_graphml,
    chain_to_json,
    chain_to_mermaid,
    render_with_graphviz,
)
from tracer.trace import Chain

SNIPPET = {
    "pkg/__init__.py": "",
    "pkg/runner.py": """
        class Runner:
            def __init__(self, fraction: float):
                self.fraction = fraction

            def size(self, total):
                rest = total * (1 - self.fraction)  # "q" <b> & {x} \\n
                self.tokens = int(rest)
    """,
    "pkg/worker.py": """
        from pkg.runner import Runner

        def start(fraction):
            return Runner(fraction=fraction)
    """,
    "pkg/other.py": """
        def use(cfg):
            share = cfg.fraction * 2
            return share
    """,
}
SPINE = [
    ("pkg/worker.py", 3, "param"),
    ("pkg/worker.py", 4, "call_arg"),
    ("pkg/runner.py", 2, "param"),
    ("pkg/runner.py", 3, "attr_write"),
    ("pkg/runner.py", 6, "formula"),
    ("pkg/runner.py", 7, "attr_write"),
]
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")


@pytest.fixture
def chain(snippet_session) -> Chain:
    session = snippet_session(SNIPPET)
    return trace(session.graph, "Runner.fraction", sinks=["tokens"])


def test_the_snippet_has_a_spine_a_side_input_and_a_guess(chain: Chain) -> None:
    steps = {s.id: s for s in chain.steps}
    assert [(steps[i].file, steps[i].line, steps[i].kind) for i in chain.spine] == SPINE
    assert len(chain.steps) == 8
    assert [e.kind for e in chain.edges if e.confidence < 1.0] == ["attr"]


def test_graphml_reads_back_with_networkx(chain: Chain) -> None:
    graph = nx.read_graphml(io.StringIO(chain_to_graphml(chain)))
    assert graph.number_of_nodes() == 8
    assert graph.number_of_edges() == len(chain.edges)
    assert all(re.fullmatch(r"n\d+", node) for node in graph)
    spine = sorted(
        (data for data in graph.nodes.values() if data["on_spine"]),
        key=lambda data: data["spine_index"],
    )
    assert [(d["file"], d["line"], d["kind"]) for d in spine] == SPINE
    assert [d["step_id"] for d in spine] == list(chain.spine)
    kinds = {data["kind"] for _, _, data in graph.edges(data=True)}
    assert {"arg_to_param", "attr", "local"} <= kinds
    guessed = [d for _, _, d in graph.edges(data=True) if d["guessed"]]
    assert [(d["kind"], d["confidence"]) for d in guessed] == [("attr", 0.5)]
    assert graph.graph["param"] == "Runner.fraction"


def test_json_is_node_link_data(chain: Chain) -> None:
    data = json.loads(chain_to_json(chain, "tree"))
    graph = nx.node_link_graph(data, edges="edges")
    assert isinstance(graph, nx.MultiDiGraph)
    assert set(graph) == {s.id for s in chain.steps}
    assert graph.graph["spine"] == list(chain.spine)
    assert graph.graph["source"] == "tree"
    first, second = chain.spine[:2]
    assert graph.nodes[first]["on_spine"] and graph.nodes[first]["kind"] == "param"
    assert [d["on_spine"] for d in graph.get_edge_data(first, second).values()] == [True]


@needs_dot
def test_dot_renders_with_graphviz(chain: Chain) -> None:
    dot = chain_to_dot(chain)
    assert dot.count("subgraph cluster_") == 3
    assert dot.count("style=dashed") == 1
    # 6 spine nodes and 5 spine edges drawn bold.
    assert dot.count("penwidth=3") == 11
    assert '\\"q\\" <b> & {x} \\\\n' in dot
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    svg = done.stdout.decode()
    assert svg.count('class="cluster"') == 3
    assert "&quot;q&quot; &lt;b&gt; &amp; {x} \\n" in svg
    assert render_with_graphviz(dot, "png").startswith(b"\x89PNG")


def test_mermaid_structure(chain: Chain) -> None:
    lines = chain_to_mermaid(chain).splitlines()
    assert lines[0] == "flowchart TD"
    subgraphs = [line.strip() for line in lines if line.strip().startswith("subgraph ")]
    assert subgraphs == [
        'subgraph f0 ["pkg/other.py"]',
        'subgraph f1 ["pkg/runner.py"]',
        'subgraph f2 ["pkg/worker.py"]',
    ]
    assert sum(line.strip() == "end" for line in lines) == 3
    declared = set(re.findall(r"^\s+(n\d+)\[\"[^\"]*\"\]$", "\n".join(lines), re.MULTILINE))
    assert len(declared) == 8
    edges = [
        re.fullmatch(r"\s+(n\d+) (==>|-->|-\.->)\|\"[^\"]*\"\| (n\d+)", line)
        for line in lines
        if "|" in line
    ]
    assert len(edges) == len(chain.edges) and all(edges)
    assert all(m[1] in declared and m[3] in declared for m in edges if m)
    arrows = [m[2] for m in edges if m]
    assert arrows.count("==>") == 5 and arrows.count("-.->") == 1
    assert any("#quot;q#quot; #lt;b#gt; #amp; {x}" in line for line in lines)


def test_cli_writes_each_format_to_a_file(snippet_session, write_tree, tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(SNIPPET)
    formats = ["dot", "graphml", "json", "mermaid"]
    formats += ["svg", "png"] if shutil.which("dot") else []
    for fmt in formats:
        out = tmp_path / "out" / f"chain.{fmt}"
        args = ["export", str(tree), "Runner.fraction", "-f", fmt, "-o", str(out), "--quiet"]
        assert main([*args, "--to", "tokens"]) == 0
        assert out.stat().st_size > 0
    assert nx.read_graphml(tmp_path / "out" / "chain.graphml").number_of_nodes() == 8
    assert (tmp_path / "out" / "chain.mermaid").read_text().startswith("flowchart TD\n")


def test_cli_prints_text_formats_and_refuses_binary_on_stdout(
    write_tree, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(SNIPPET)
    assert main(["export", str(tree), "Runner.fraction", "-f", "dot", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("digraph chain {")
    assert main(["export", str(tree), "Runner.fraction", "-f", "png", "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "sgtrace: error: png is binary: write it to a file: -o chain.png\n"


def test_missing_graphviz_is_one_line_with_the_fix(write_tree, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(GraphvizMissing):
        render_with_graphviz("digraph {}", "svg")
    tree = write_tree(SNIPPET)
    out = tmp_path / "chain.svg"
    assert main(["export", str(tree), "Runner.fraction", "-f", "svg", "-o", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("sgtrace: error: svg needs the Graphviz `dot` program")
    assert lines[-1].endswith("install Graphviz: apt-get install graphviz")
    assert not out.exists()
