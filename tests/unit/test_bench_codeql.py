"""How tests/bench/bench_codeql.py reads CodeQL's inline expectations and scores sgtrace's
answer against them: hand-written files in their style, hand-made answers, and real traces of
small programs; and the well-formedness of our own cases (tests/unit/dataflow_cases.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.bench.bench_codeql import (
    Result,
    SinkLine,
    annotation_tags,
    flow_markers,
    reached_lines,
    run_case,
    run_file,
    sink_lines,
    tallies,
)
from tests.unit.dataflow_cases import CASES, case

ANNOTATED = """\
SOURCE = "s"


def SINK(x, *, strict=False):
    pass


def SINK_F(x):
    pass


def check():
    a = SOURCE
    SINK(a)  # $ flow="SOURCE, l:-1 -> a"
    SINK(a.b)  # $ MISSING: flow
    SINK_F("other")
    SINK_F(a)  #$ SPURIOUS:flow="SOURCE -> a"  # a note that says flow
    SINK(a, strict=True)  # $ captured
    SINK(a.c)  # $ arg1 func=check
    # SINK_F(a)
"""


def test_tags_are_read_after_the_dollar_with_the_marker_before_them_until_a_plain_comment():
    assert annotation_tags('# $ flow="SOURCE, l:-1 -> x" MISSING: flow') == {
        ("", "flow"),
        ("MISSING", "flow"),
    }
    assert annotation_tags('#$ MISSING:flow="x -> d[\'a\']""') == {("MISSING", "flow")}
    assert annotation_tags('# $ arg1 SPURIOUS: bad2,bad3="arg1"') == {
        ("", "arg1"),
        ("SPURIOUS", "bad2"),
        ("SPURIOUS", "bad3"),
    }
    assert annotation_tags('#$ flow="s -> x" # flow missing here') == {("", "flow")}
    assert annotation_tags("# a plain comment about flow") == set()
    assert flow_markers("# $ SPURIOUS: captured") == {"SPURIOUS"}
    assert flow_markers("# $ arg1 func=f") == set()


def test_sink_lines_are_the_calls_with_their_expectation_and_the_sinks_first_parameters():
    lines, first = sink_lines(ANNOTATED)
    assert first == {"SINK": "x", "SINK_F": "x"}
    assert [(s.line, s.sink, s.flow_arrives, s.codeql_reaches) for s in lines] == [
        (14, "SINK", True, True),
        (15, "SINK", True, False),  # a flow CodeQL misses
        (16, "SINK_F", False, False),
        (17, "SINK_F", False, True),  # a flow CodeQL reports wrongly
        (18, "SINK", True, True),
    ]  # line 19 annotates no flow, line 20 is a comment: neither is scored
    assert {s.function for s in lines} == {"check"}
    assert lines[0].code == 'SINK(a)  # $ flow="SOURCE, l:-1 -> a"'


def node(step: str, line: int, kind: str, symbol: str, name: str, end: int = 0) -> dict:
    return {
        "id": step,
        "file": "t.py",
        "line": line,
        "end_line": end or line,
        "kind": kind,
        "symbol": symbol,
        "name": name,
    }


def test_a_line_is_reached_by_an_edge_from_a_step_on_it_into_its_sinks_first_parameter():
    lines = [
        SinkLine(15, "SINK", True, True, "check", ""),
        SinkLine(16, "SINK", True, False, "check", ""),
        SinkLine(17, "SINK_F", False, False, "check", ""),
        SinkLine(18, "SINK_F", False, True, "check", ""),
        SinkLine(19, "SINK", True, True, "check", ""),
    ]
    answer = {
        "nodes": [
            node("p", 4, "param", "SINK", "x"),
            node("q", 4, "param", "SINK", "strict"),
            node("pf", 8, "param", "SINK_F", "x"),
            node("c15", 15, "call_arg", "check", ""),
            node("c16", 16, "call_arg", "check", ""),
            node("c17", 17, "call_arg", "check", ""),
            node("c18", 18, "call_arg", "check", "", end=19),
            node("c19", 19, "call_arg", "check", "strict"),
            {**node("c20", 15, "call_arg", "check", ""), "file": "other.py"},
        ],
        "edges": [
            {"src": "c15", "dst": "p", "kind": "arg_to_param"},
            {"src": "c16", "dst": "pf", "kind": "arg_to_param"},  # SINK_F's, not line 16's sink
            {"src": "c17", "dst": "p", "kind": "arg_to_param"},  # SINK's, not line 17's
            {"src": "c18", "dst": "pf", "kind": "arg_to_param"},  # a span holding line 18
            {"src": "c19", "dst": "q", "kind": "arg_to_param"},  # not the first parameter
            {"src": "c20", "dst": "p", "kind": "arg_to_param"},  # a step of another file
        ],
    }
    assert reached_lines(answer, "t.py", lines, {"SINK": "x", "SINK_F": "x"}) == {15, 18}


def test_a_file_is_traced_alone_from_source_and_scored_line_by_line(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "tests" / "demo"
    folder.mkdir(parents=True)
    (folder / "t.py").write_text(ANNOTATED)
    result = run_file("demo", folder / "t.py", tmp_path, 100)
    assert result.error == ""
    assert [s.line for s in result.missed()] == [15]  # `a.b` holds nothing of SOURCE
    assert [s.line for s in result.false()] == [17]  # `SINK_F(a)` does receive it
    assert result.reached == {14, 17, 18}


def test_a_trace_that_fails_is_an_error_whose_flows_all_count_as_missed(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "t.py").write_text(ANNOTATED.replace('SOURCE = "s"', 'OTHER = "s"'))
    result = run_file("demo", tmp_path / "t.py", tmp_path, 100)
    assert "'SOURCE' is bound nowhere" in result.error
    assert [s.line for s in result.missed()] == [14, 15, 18]
    by_folder, total = tallies([result])
    assert (total.files, total.errors, total.flows, total.found) == (1, 1, 3, 0)
    assert (total.codeql_found, total.no_flows, total.reached, total.codeql_reached) == (2, 2, 0, 1)


def test_folders_and_the_total_sum_their_files():
    lines = (
        SinkLine(1, "SINK", True, True, "", ""),
        SinkLine(2, "SINK", True, False, "", ""),
        SinkLine(3, "SINK_F", False, True, "", ""),
    )
    results = [
        Result("a", "one.py", lines, frozenset({1, 2, 3})),
        Result("a", "two.py", lines, frozenset({1})),
        Result("b", "three.py", lines, frozenset()),
    ]
    by_folder, total = tallies(results)
    a = by_folder["a"]
    assert (a.files, a.flows, a.found, a.codeql_found, a.no_flows, a.reached) == (2, 4, 3, 2, 2, 1)
    assert (total.files, total.flows, total.found, total.no_flows, total.reached) == (3, 6, 3, 3, 1)
    assert total.codeql_reached == 3


def test_a_case_reads_its_lines_from_the_marks_ending_them():
    made = case(
        "demo",
        """
        SECRET = "s"
        sink(SECRET)  # reached
        sink("plain")  # not reached
        """,
    )
    assert made.source.startswith('SECRET = "s"\n')
    assert (made.reached, made.not_reached, made.traced) == ((2,), (3,), "SECRET")


def test_every_case_marks_calls_of_sink_reaches_something_and_names_a_bound_name():
    for each in CASES:
        tree = ast.parse(each.source)
        calls = {
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "sink"
        }
        marked = set(each.reached) | set(each.not_reached)
        assert marked <= calls, each.category
        assert each.reached, each.category
        assert f"{each.traced} = " in each.source, each.category
    assert len({each.category for each in CASES}) == len(CASES)


def test_a_case_is_scored_as_a_test_file_is(tmp_path, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    made = case(
        "demo",
        """
        SECRET = "s"


        def sink(value):
            pass


        def use():
            copy = SECRET
            sink(copy)  # reached
            sink("plain")  # not reached
        """,
    )
    result = run_case(made, Path(tmp_path / "alone"), 100)
    assert result.error == ""
    assert (result.missed(), result.false()) == ([], [])
    assert [(s.line, s.flow_arrives, s.function) for s in result.lines] == [
        (10, True, "use"),
        (11, False, "use"),
    ]
