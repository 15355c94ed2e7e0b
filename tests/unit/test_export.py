"""`sgtrace export`: every format read back by a real reader (networkx, Graphviz)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import subprocess

import networkx as nx
import pytest

from tests.conftest import trace
from tracer.analyses.callgraph import call_graph
from tracer.cli.main import main
from tracer.errors import GraphvizMissing
from tracer.graph.steps import Step
from tracer.trace.chains import Chain
from tracer.views.graph_formats import (
    chain_to_dot,
    chain_to_graphml,
    chain_to_json,
    chain_to_mermaid,
    graph_to_dot,
    graph_to_graphml,
    graph_to_json,
    graph_to_mermaid,
    render_with_graphviz,
)
from tracer.views.scopes import calls_around, chain_file, file_graph, spine_files

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


@pytest.fixture
def graphviz() -> None:
    if shutil.which("dot") is None:
        pytest.fail("Graphviz is not installed (.ci/run installs it)", pytrace=False)


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


def test_dot_renders_with_graphviz(chain: Chain, graphviz: None) -> None:
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


def test_cli_writes_each_format_to_a_file(
    snippet_session, write_tree, tmp_path, monkeypatch, graphviz
):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(SNIPPET)
    formats = ["dot", "graphml", "json", "mermaid", "svg", "png"]
    (tmp_path / "out").mkdir()
    for fmt in formats:
        out = tmp_path / "out" / f"chain.{fmt}"
        args = ["export", str(tree), "Runner.fraction", "-f", fmt, "-o", str(out), "--quiet"]
        assert main([*args, "--to", "tokens"]) == 0
        assert out.stat().st_size > 0
    assert nx.read_graphml(tmp_path / "out" / "chain.graphml").number_of_nodes() == 8
    assert (tmp_path / "out" / "chain.mermaid").read_text().startswith("flowchart TD\n")


def test_cli_prints_text_formats_svg_too_and_refuses_png_on_stdout(
    write_tree, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(SNIPPET)
    assert main(["export", str(tree), "Runner.fraction", "-f", "dot", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("digraph chain {")
    assert main(["export", str(tree), "Runner.fraction", "-f", "svg", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith('<?xml version="1.0"') and out.endswith("</svg>\n")
    assert out.count('class="cluster"') == 3
    assert err == ""
    assert main(["export", str(tree), "Runner.fraction", "-f", "png", "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "sgtrace: error: png is binary: write it to a file: -o chain.png\n"


def test_output_file_mode_and_a_missing_folder(write_tree, tmp_path, monkeypatch, capsys):
    """-o writes a new file with the mode any new file gets (0o666 less the umask), and
    replaces a file whole, keeping its mode; a folder that does not exist is an error before
    any work, and is not made."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(SNIPPET)
    args = ["export", str(tree), "Runner.fraction", "-f", "dot", "--quiet"]
    out = tmp_path / "chain.dot"
    out.write_text("old")
    out.chmod(0o600)
    new = tmp_path / "new.dot"
    old_umask = os.umask(0o002)
    try:
        assert main([*args, "-o", str(out)]) == 0
        assert main([*args, "-o", str(new)]) == 0
    finally:
        os.umask(old_umask)
    assert out.read_text().startswith("digraph chain {")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(new.stat().st_mode) == 0o664
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["cache", "chain.dot", "new.dot", "tree"]
    missing = tmp_path / "nowhere" / "deeper"
    assert main([*args, "-o", str(missing / "x.dot")]) == 2
    assert capsys.readouterr().err == (
        f"sgtrace: error: cannot write {missing / 'x.dot'}: the folder {missing} does not "
        f"exist: create it first (mkdir -p {missing}) or give another -o\n"
    )
    assert not (tmp_path / "nowhere").exists()
    assert main([*args, "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"sgtrace: error: cannot write {tmp_path}: it is a folder: give a file name with -o\n"
    )


def test_missing_graphviz_is_one_line_with_the_fix_before_any_indexing(
    write_tree, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(GraphvizMissing):
        render_with_graphviz("digraph {}", "svg")
    tree = write_tree(SNIPPET)
    out = tmp_path / "chain.svg"
    for fmt, output in (("svg", ["-o", str(out)]), ("svg", []), ("png", ["-o", str(out)])):
        assert main(["export", str(tree), "Runner.fraction", "-f", fmt, *output]) == 2
        assert capsys.readouterr().err == (
            f"sgtrace: error: {fmt} needs the Graphviz `dot` program, not found on PATH: "
            "install Graphviz: apt-get install graphviz\n"
        )
    assert not out.exists()
    assert not (tmp_path / "cache").exists()  # refused before the tree was indexed


# -- the call graph around the chain and a whole file's graph ------------------------------

CALLS_SNIPPET = {
    "pkg/__init__.py": "",
    "pkg/runner.py": """
        from pkg.log import note


        class Runner:
            def __init__(self, fraction: float):
                self.fraction = fraction

            def size(self, total):
                rest = total * (1 - self.fraction)
                self.tokens = int(rest)
                self.report()

            def report(self):
                note("sized")
    """,
    "pkg/log.py": """
        def note(text):
            print(text)
    """,
    "pkg/worker.py": SNIPPET["pkg/worker.py"],
    "pkg/other.py": """
        def use(cfg):
            share = cfg.fraction * 2
            cfg.size(share)
            return share
    """,
    "pkg/main.py": """
        from pkg.worker import start


        def main():
            runner = start(0.5)
            runner.size(100)
    """,
    "pkg/cli.py": """
        from pkg.main import main


        def run():
            main()


        run()
    """,
}
ON_CHAIN = {"pkg.main.main", "pkg.worker.start", "pkg.runner.Runner.__init__"}
ON_CHAIN |= {"pkg.runner.Runner.size", "pkg.other.use"}
# (caller, callee, call lines, confidence) one level each way from the chain's functions.
CALLS = [
    ("pkg.cli.run", "pkg.main.main", 5, 1.0),
    ("pkg.main.main", "pkg.runner.Runner.size", 6, 1.0),
    ("pkg.main.main", "pkg.worker.start", 5, 1.0),
    ("pkg.other.use", "pkg.runner.Runner.size", 3, 0.5),
    ("pkg.runner.Runner.size", "pkg.runner.Runner.report", 11, 1.0),
    ("pkg.worker.start", "pkg.runner.Runner.__init__", 4, 1.0),
]


@pytest.fixture
def calls_session(snippet_session):
    return snippet_session(CALLS_SNIPPET)


@pytest.fixture
def calls_chain(calls_session) -> Chain:
    return trace(calls_session.graph, "Runner.fraction", sinks=["tokens"])


def call_edges(graph: nx.MultiDiGraph, name_of=lambda node: node) -> list[tuple]:
    return sorted(
        (name_of(src), name_of(dst), int(data["label"].split()[1]), data["confidence"])
        for src, dst, data in graph.edges(data=True)
    )


def test_calls_scope_draws_callers_and_callees_around_the_chain(calls_session, calls_chain):
    drawing = calls_around(calls_session, calls_chain)
    graph = drawing.graph
    assert drawing.left_out == 0
    assert {n for n, d in graph.nodes(data=True) if d["bold"]} == ON_CHAIN
    assert set(graph) == ON_CHAIN | {"pkg.cli.run", "pkg.runner.Runner.report"}
    assert call_edges(graph) == CALLS
    guessed = [(s, d) for s, d, data in graph.edges(data=True) if data["dashed"]]
    assert guessed == [("pkg.other.use", "pkg.runner.Runner.size")]
    assert graph.edges["pkg.other.use", "pkg.runner.Runner.size", "call"]["label"] == (
        "line 3 (guess 0.5)"
    )
    assert graph.nodes["pkg.runner.Runner.size"]["file"] == "pkg/runner.py"
    assert graph.nodes["pkg.runner.Runner.size"]["label"] == "Runner.size:8"


def test_calls_scope_depth_two_reaches_module_code_and_a_callee_of_a_callee(
    calls_session, calls_chain
):
    graph = calls_around(calls_session, calls_chain, depth=2).graph
    assert set(graph) - ON_CHAIN == {
        "pkg.cli.run",
        "pkg.cli",  # the module's own code calls run()
        "pkg.runner.Runner.report",
        "pkg.log.note",
    }
    assert graph.nodes["pkg.cli"]["level"] == graph.nodes["pkg.log.note"]["level"] == 2
    assert ("pkg.cli", "pkg.cli.run", 8, 1.0) in call_edges(graph)
    assert ("pkg.runner.Runner.report", "pkg.log.note", 14, 1.0) in call_edges(graph)


def test_calls_scope_cap_keeps_the_chain_first(calls_session, calls_chain):
    drawing = calls_around(calls_session, calls_chain, max_nodes=4)
    assert drawing.left_out == 3
    assert set(drawing.graph) < ON_CHAIN


def test_calls_scope_in_every_format(calls_session, calls_chain, graphviz):
    graph = calls_around(calls_session, calls_chain).graph
    dot = graph_to_dot(graph)
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    # One cluster per file: cli, main, other, runner, worker.
    assert done.stdout.decode().count('class="cluster"') == 5
    assert dot.count("style=dashed") == 1
    back = nx.read_graphml(io.StringIO(graph_to_graphml(graph, "node_id")))
    assert call_edges(back, lambda n: back.nodes[n]["node_id"]) == CALLS
    assert {d["node_id"] for _, d in back.nodes(data=True) if d["on_chain"]} == ON_CHAIN
    data = json.loads(graph_to_json(graph))
    assert call_edges(nx.node_link_graph(data, edges="edges")) == CALLS
    lines = graph_to_mermaid(graph).splitlines()
    edges = [re.fullmatch(r"\s+(n\d+) (==>|-->|-\.->)\|\"[^\"]*\"\| (n\d+)", x) for x in lines[1:]]
    edges = [m for m in edges if m]
    assert len(edges) == len(CALLS)
    assert sorted(m[2] for m in edges) == ["-->", "-->", "-.->", "==>", "==>", "==>"]


WRAPPED_SNIPPET = {
    "pkg/__init__.py": "",
    "pkg/runner.py": """
        def timed(func):
            def wrapper(*args):
                return func(*args)

            return wrapper


        @timed
        def measure(total):
            return total


        def report(done):
            done()


        class Runner:
            def __init__(self, fraction: float):
                self.fraction = fraction

            def size(self, total):
                rest = measure(total) * (1 - self.fraction)
                self.tokens = int(rest)
                report(self.log)

            def log(self):
                pass
    """,
}


def test_calls_scope_draws_the_call_graphs_edges(snippet_session):
    """The calls drawn are `sgtrace callgraph`'s: `measure(total)` runs the wrapper `@timed`
    returns, `report(self.log)` makes report call the method it is given."""
    session = snippet_session(WRAPPED_SNIPPET)
    chain = trace(session.graph, "Runner.fraction", sinks=["tokens"])
    graph = calls_around(session, chain, depth=2).graph
    assert call_edges(graph) == [
        ("pkg.runner.Runner.size", "pkg.runner.report", 24, 1.0),
        ("pkg.runner.Runner.size", "pkg.runner.timed.wrapper", 22, 1.0),
        ("pkg.runner.report", "pkg.runner.Runner.log", 14, 1.0),
        ("pkg.runner.timed.wrapper", "pkg.runner.measure", 3, 1.0),
    ]


@pytest.mark.parametrize("snippet", [CALLS_SNIPPET, WRAPPED_SNIPPET])
def test_calls_scope_solid_edges_are_the_call_graphs_and_dashed_ones_its_guesses(
    snippet_session, snippet
):
    session = snippet_session(snippet)
    chain = trace(session.graph, "Runner.fraction", sinks=["tokens"])
    whole = call_graph(session)
    for depth in (1, 2):
        graph = calls_around(session, chain, depth=depth).graph
        for src, dst, data in graph.edges(data=True):
            assert (dst in whole[src]) is not data["dashed"], (src, dst)
            assert data["label"].endswith(")") is data["dashed"]  # "(guess 0.5)"


def test_file_scope_is_the_file_that_binds_the_name(calls_session, calls_chain):
    assert chain_file(calls_chain) == "pkg/runner.py"
    drawing = file_graph(calls_session, calls_chain, "pkg/runner.py")
    graph = drawing.graph
    assert drawing.left_out == 0
    assert {d["file"] for _, d in graph.nodes(data=True)} == {"pkg/runner.py"}
    tables = calls_session.graph.file("pkg/runner.py")
    assert set(graph) == set(tables.steps)
    lines = [(d["line"], d["kind"]) for _, d in graph.nodes(data=True)]
    assert lines == sorted(lines)
    bold = sorted((d["line"], d["kind"]) for _, d in graph.nodes(data=True) if d["bold"])
    # The chain's steps in this file: the spine from the parameter to self.tokens, and total.
    assert bold == [
        (5, "param"),
        (6, "attr_write"),
        (8, "param"),
        (9, "formula"),
        (10, "attr_write"),
    ]
    edges = sorted(
        (graph.nodes[s]["line"], graph.nodes[d]["line"], data["kind"])
        for s, d, data in graph.edges(data=True)
    )
    assert edges == [(5, 6, "local"), (6, 9, "attr"), (8, 9, "local"), (9, 10, "local")]


def test_file_scope_cap_keeps_the_chain_and_its_neighbours(calls_session, calls_chain):
    drawing = file_graph(calls_session, calls_chain, "pkg/runner.py", max_nodes=3)
    graph = drawing.graph
    assert drawing.left_out == len(calls_session.graph.file("pkg/runner.py").steps) - 3
    assert all(d["bold"] for _, d in graph.nodes(data=True))
    # The first chain steps by line: the parameter, self.fraction, and total.
    assert sorted(d["line"] for _, d in graph.nodes(data=True)) == [5, 6, 8]


def test_cli_scopes_write_every_format(write_tree, tmp_path, monkeypatch, capsys, graphviz):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(CALLS_SNIPPET)
    formats = ["dot", "graphml", "json", "mermaid", "svg", "png"]
    (tmp_path / "out").mkdir()
    for scope in ("calls", "file"):
        for fmt in formats:
            out = tmp_path / "out" / f"{scope}.{fmt}"
            args = ["export", str(tree), "Runner.fraction", "-f", fmt, "-o", str(out)]
            assert main([*args, "--to", "tokens", "--scope", scope, "--quiet"]) == 0
            assert out.stat().st_size > 0
    calls = nx.read_graphml(tmp_path / "out" / "calls.graphml")
    assert {d["node_id"] for _, d in calls.nodes(data=True)} == ON_CHAIN | {
        "pkg.cli.run",
        "pkg.runner.Runner.report",
    }
    whole = nx.read_graphml(tmp_path / "out" / "file.graphml")
    assert {d["file"] for _, d in whole.nodes(data=True)} == {"pkg/runner.py"}
    args = ["export", str(tree), "Runner.fraction", "-f", "json", "--to", "tokens"]
    assert main([*args, "--scope", "file", "--file", "pkg/main.py", "--max-nodes", "2"]) == 0
    out, err = capsys.readouterr()
    graph = nx.node_link_graph(json.loads(out), edges="edges")
    assert {d["file"] for _, d in graph.nodes(data=True)} == {"pkg/main.py"}
    assert graph.number_of_nodes() == 2
    assert err == (
        "sgtrace: drawing 2 of 3 steps of pkg/main.py, those nearest the chain "
        "(--max-nodes 3 draws them all)\n"
    )
    assert main([*args, "--scope", "file", "--file", "pkg/nope.py"]) == 2
    # The spine's files in spine order (not pkg/other.py, a file around it).
    assert capsys.readouterr().err == (
        "sgtrace: error: 'pkg/nope.py' is not a Python file of the source: give a path "
        "relative to the source root; the spine's files: pkg/main.py, pkg/worker.py, "
        "pkg/runner.py\n"
    )


def test_spine_files_name_five_and_always_the_default_one() -> None:
    steps = [
        Step(f"m{n}.py#a", "local_assign", f"m{n}.py", 1, 1, "f", "x = y", "x") for n in range(7)
    ]
    ids = tuple(s.id for s in steps)
    chain = Chain("x", "both", tuple(steps), (), ids, seeds=(ids[6],))
    assert chain_file(chain) == "m6.py"
    assert spine_files(chain) == ["m0.py", "m1.py", "m2.py", "m3.py", "m6.py", "…"]
    short = Chain("x", "both", tuple(steps[:3]), (), ids[:3], seeds=(ids[1],))
    assert spine_files(short) == ["m0.py", "m1.py", "m2.py"]


def test_options_a_scope_does_not_use_are_refused(write_tree, tmp_path, monkeypatch, capsys):
    """--file, --depth and --max-nodes shape some scopes only: elsewhere they are an error
    (exit 2, before any indexing), not silently ignored."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(CALLS_SNIPPET)
    args = ["export", str(tree), "Runner.fraction", "-f", "dot", "--quiet"]
    refused = {
        ("--file", "pkg/main.py", "--scope", "chain"): "--file does nothing with --scope "
        "chain: leave it out, or draw --scope file",
        ("--depth", "2"): "--depth does nothing with --scope chain: leave it out, or draw "
        "--scope calls",
        ("--depth", "2", "--scope", "file"): "--depth does nothing with --scope file: leave it "
        "out, or draw --scope calls",
        ("--file", "pkg/main.py", "--scope", "calls"): "--file does nothing with --scope "
        "calls: leave it out, or draw --scope file",
        ("--file", "a.py", "--depth", "2", "--max-nodes", "5", "--scope", "spine"): "--file, "
        "--depth and --max-nodes do nothing with --scope spine: leave them out, or draw "
        "--scope calls or --scope file",
    }
    for extra, error in refused.items():
        assert main([*args, *extra]) == 2
        out, err = capsys.readouterr()
        assert (out, err) == ("", f"sgtrace: error: {error}\n")
    assert not (tmp_path / "cache").exists()  # refused before the source was indexed
    for extra in (["--scope", "calls", "--depth", "2"], ["--scope", "file", "--max-nodes", "40"]):
        assert main([*args, *extra]) == 0
        assert capsys.readouterr().out.startswith("digraph")


def test_calls_and_file_scopes_on_sglang_0_5_9(release, graphviz):
    session = release("0.5.9")
    chain = trace(session.graph, "mem_fraction_static", sinks=["max_total_num_tokens"])
    calls = calls_around(session, chain).graph
    worker = "sglang.srt.managers.tp_worker.TpModelWorker"
    runner = "sglang.srt.model_executor.model_runner.ModelRunner"
    mixin = "sglang.srt.model_executor.model_runner_kv_cache_mixin.ModelRunnerKVCacheMixin"
    spine_functions = [
        "sglang.srt.server_args.ServerArgs",  # the field lives in the class body
        "sglang.srt.server_args.ServerArgs.add_cli_args",
        f"{worker}._init_model_runner",
        f"{runner}.__init__",
        f"{mixin}.profile_max_num_token",
        f"{mixin}.init_memory_pool",
    ]
    assert all(calls.nodes[name]["bold"] for name in spine_functions)
    # A caller one level up, which holds a chain step itself: it copies the KV size from
    # its `model_runner` (a property typed `-> "ModelRunner"`).
    assert calls.nodes[f"{worker}.__init__"]["bold"]
    # The objects that carry the value are followed, not every other use of them: `launch`,
    # which hands the ServerArgs record on, holds a chain step; a bench script that makes a
    # ServerArgs from its own flags is no way of this value (its module code holds none).
    assert calls.nodes["sglang.srt.entrypoints.engine._launch_subprocesses"]["bold"]
    assert not calls.nodes["sglang.bench_one_batch_server"]["bold"]
    labels = {(s, d): data["label"] for s, d, data in calls.edges(data=True)}
    assert labels[(f"{worker}.__init__", f"{worker}._init_model_runner")] == "line 247"
    assert labels[(f"{worker}._init_model_runner", f"{runner}.__init__")] == "line 330"
    assert labels[(f"{runner}.initialize", f"{mixin}.init_memory_pool")] == "line 590"
    assert labels[(f"{mixin}.init_memory_pool", f"{mixin}.profile_max_num_token")] == "line 342"
    back = nx.read_graphml(io.StringIO(graph_to_graphml(calls, "node_id")))
    assert back.number_of_nodes() == calls.number_of_nodes()
    assert back.number_of_edges() == calls.number_of_edges()

    path = chain_file(chain)
    assert path == "sglang/srt/server_args.py"
    drawing = file_graph(session, chain, path)
    whole = drawing.graph
    assert whole.number_of_nodes() == 150
    assert drawing.left_out == len(session.graph.file(path).steps) - 150 > 1000
    spine = [s for s in chain.spine if s in whole]
    assert [(whole.nodes[s]["kind"], whole.nodes[s]["line"]) for s in spine] == [
        ("cli_flag", 3138),
        ("local_assign", 5591),  # raw_args = parser.parse_args(argv)
        ("call_arg", 5592),  # ServerArgs.from_cli_args(raw_args)
        ("param", 5069),  # args
        ("call_arg", 5078),  # cls(**{attr: getattr(args, attr) for attr in attrs})
        ("field", 324),
        ("return", 5078),  # the ServerArgs made there from the parsed flags, returned
        ("return", 5592),  # ... and leaving prepare_server_args
    ]
    assert whole.edges[spine[0], spine[1], "parsed"]["bold"]
    assert all(whole.nodes[s]["bold"] for s in spine)
    mermaid = graph_to_mermaid(whole).splitlines()
    assert [line for line in mermaid if "subgraph" in line] == [f'  subgraph f0 ["{path}"]']
    for graph in (calls, whole):
        dot = graph_to_dot(graph)
        done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        files = {d["file"] for _, d in graph.nodes(data=True)}
        assert done.stdout.decode().count('class="cluster"') == len(files)
