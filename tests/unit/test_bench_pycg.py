"""How tests/bench/bench_pycg.py scores a call graph against PyCG's expected one, and how it
takes the snippets out of PyCG's sdist: hand-made graphs, folders and archives."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from tests.bench.bench_pycg import (
    Result,
    edges_of,
    extract_snippets,
    pycg_names,
    run_snippet,
    score,
    tallies,
)
from tracer.errors import UnsafeArchive
from tracer.store.cache import FactCache


def test_edges_are_scored_as_caller_callee_pairs_and_nodes_without_edges_count_for_nothing():
    expected = {"main": ["main.f", "main.g"], "main.f": ["main.h"], "main.h": []}
    ours = {"main": ["main.f", "main.x"], "main.f": ["main.h"], "main.y": []}
    found = score(expected, ours)
    assert found.correct == {("main", "main.f"), ("main.f", "main.h")}
    assert found.missing == {("main", "main.g")}
    assert found.extra == {("main", "main.x")}
    assert not found.exact
    assert score({"main": ["main.f"], "main.f": []}, {"main": ["main.f"]}).exact


def scored(category: str, expected: dict[str, list[str]], ours: dict[str, list[str]]) -> Result:
    return Result(category, "snippet", edges_of(expected), score(expected, ours))


def test_categories_sum_edges_an_empty_expected_graph_adds_only_our_edges_and_errors_miss_all():
    results = [
        scored("a", {"m": ["f", "g"]}, {"m": ["f"]}),
        scored("a", {"m": []}, {"m": ["f"]}),
        scored("a", {}, {"m": []}),
        Result("b", "broken", frozenset({("m", "f")}), error="SyntaxError: ..."),
    ]
    by_category, total = tallies(results)
    a, b = by_category["a"], by_category["b"]
    assert (a.snippets, a.exact, a.errors, a.expected, a.ours, a.correct) == (3, 1, 0, 2, 2, 1)
    assert (a.precision, a.recall) == (0.5, 0.5)
    assert (b.snippets, b.exact, b.errors, b.expected, b.ours, b.correct) == (1, 0, 1, 1, 0, 0)
    assert (b.precision, b.recall) == (None, 0.0)  # no edge of ours: precision is undefined
    assert (total.expected, total.ours, total.correct, total.recall) == (3, 2, 1, 1 / 3)


def test_a_package_folder_s_name_is_taken_off_our_names_as_pycg_names_from_inside_it(tmp_path):
    graph = {"snip.main": ["snip.nested.f"], "snip": []}
    assert pycg_names(graph, tmp_path / "snip") == graph  # no __init__.py: nothing to undo
    (tmp_path / "snip").mkdir()
    (tmp_path / "snip" / "__init__.py").touch()
    assert pycg_names(graph, tmp_path / "snip") == {"main": ["nested.f"], "snip": []}
    # `from nested import f` in snip/main.py: sgtrace takes nested for another tree's package.
    graph = {"snip.main": ["nested.f"], "snip.nested.f": ["snip.nested.g"], "nested.f": []}
    assert pycg_names(graph, tmp_path / "snip") == {"main": ["nested.f"], "nested.f": ["nested.g"]}


def test_a_snippet_is_scored_on_the_real_call_graph_and_a_missing_main_is_an_error(tmp_path):
    snippet = tmp_path / "calls" / "simple"
    snippet.mkdir(parents=True)
    (snippet / "main.py").write_text("def f():\n    pass\n\ndef g():\n    f()\n\ng()\n")
    (snippet / "callgraph.json").write_text('{"main": ["main.g"], "main.g": ["main.f", "x"]}')
    result = run_snippet("calls", snippet, FactCache(tmp_path / "cache"))
    assert result.score is not None and not result.error
    assert result.score.missing == {("main.g", "x")} and not result.score.extra

    (snippet / "main.py").rename(snippet / "other.py")
    result = run_snippet("calls", snippet, FactCache(tmp_path / "cache"))
    assert (result.score, result.error) == (None, "no main.py")
    assert result.expected == {("main", "main.g"), ("main.g", "main.f"), ("main.g", "x")}


def sdist(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))
    return path


def test_only_regular_files_under_micro_benchmark_snippets_are_taken_out(tmp_path):
    link = tarfile.TarInfo("pycg-0.0.8/micro-benchmark/snippets/a/b/link.py")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    archive = sdist(
        tmp_path / "pycg-0.0.8.tar.gz",
        [
            ("pycg-0.0.8/setup.py", b"raise SystemExit"),
            ("pycg-0.0.8/micro-benchmark/base.py", b""),
            ("pycg-0.0.8/micro-benchmark/snippets/a/b/main.py", b"f()\n"),
            ("pycg-0.0.8/micro-benchmark/snippets/a/b/callgraph.json", b"{}"),
            link,
        ],
    )
    assert extract_snippets(archive, tmp_path / "out") == 2
    kept = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*"))
    assert kept == ["a", "a/b", "a/b/callgraph.json", "a/b/main.py"]


def test_a_member_that_would_leave_the_target_is_refused(tmp_path):
    member = ("pycg-0.0.8/micro-benchmark/snippets/../../../escaped.py", b"")
    archive = sdist(tmp_path / "pycg-0.0.8.tar.gz", [member])
    with pytest.raises(UnsafeArchive):
        extract_snippets(archive, tmp_path / "out" / "snippets")
    assert not (tmp_path / "escaped.py").exists()
