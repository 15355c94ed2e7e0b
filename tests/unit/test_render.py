"""The chain as people read it (text) and as programs read it (the JSON contract in
docs/DESIGN.md)."""

from __future__ import annotations

import json

from tests.conftest import trace
from tracer.graph.steps import KINDS
from tracer.views.chain_text import chain_json, chain_text, dumps

POOL = """
    class Pool:
        def reserve(self, size):
            self.reserved = size * 2
"""

TYPED_RUN = """
    from pkg.pool import Pool


    def start(pool: Pool, size):
        pool.reserve(size)


    def report(pool):
        shown = pool.reserved
        return shown
"""

UNTYPED_RUN = """
    def start(pool, size):
        pool.reserve(size)
"""

NODE_KEYS = {"id", "file", "line", "end_line", "kind", "symbol", "code"}
EDGE_KEYS = {"src", "dst", "kind", "confidence"}


def test_text_shows_the_spine_with_reasons_and_marks_guesses_around_it(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": POOL, "pkg/run.py": TYPED_RUN})
    chain = trace(session.graph, "start.size", sinks=["reserved"])
    assert chain_text(chain, "tree").splitlines() == [
        "start.size in tree: 5 steps in 2 files, spine of 4",
        "",
        "Spine (origin first)",
        " 1. param        pkg/run.py:4  start",
        "       size",
        "    | the name is read here",
        " 2. call_arg     pkg/run.py:5  start",
        "       pool.reserve(size)",
        "    | argument bound to the parameter",
        " 3. param        pkg/pool.py:2  Pool.reserve",
        "       size",
        "    | the name is read here",
        " 4. formula      pkg/pool.py:3  Pool.reserve",
        "       self.reserved = size * 2",
        "",
        "Around the spine (other writes, reads and inputs, by file)",
        "pkg/run.py",
        "      9 local_assign shown = pool.reserved  (report)  [guess 0.5]",
    ]


def test_text_says_when_a_spine_step_is_a_guess(snippet_session):
    session = snippet_session(
        {"pkg/__init__.py": "", "pkg/pool.py": POOL, "pkg/run.py": UNTYPED_RUN}
    )
    chain = trace(session.graph, "start.size", sinks=["reserved"])
    lines = chain_text(chain, "tree").splitlines()
    assert lines[lines.index(" 2. call_arg     pkg/run.py:2  start") + 2] == (
        "    | argument bound to the parameter (guess, confidence 0.5)"
    )


def test_text_marks_an_input_joined_to_the_spine_by_a_guess(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/pool.py": POOL,
            "pkg/run.py": """
                def start(pool, size):
                    pool.reserve(size)
            """,
        }
    )
    chain = trace(session.graph, "Pool.reserve.size", sinks=["reserved"])
    around = chain_text(chain, "tree").split("Around the spine", 1)[1].splitlines()
    assert around[2] == "      2 call_arg     pool.reserve(size)  (start)  [guess 0.5]"


def test_text_is_coloured_only_when_asked(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": POOL, "pkg/run.py": TYPED_RUN})
    chain = trace(session.graph, "start.size", sinks=["reserved"])
    assert "\033[" not in chain_text(chain, "tree")
    coloured = chain_text(chain, "tree", colour=True)
    assert "\033[34mparam       \033[0m pkg/run.py:4" in coloured


def test_json_follows_the_contract(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": POOL, "pkg/run.py": TYPED_RUN})
    chain = trace(session.graph, "start.size", sinks=["reserved"])
    data = json.loads(dumps(chain, "tree"))
    assert data == chain_json(chain, "tree")
    assert data["source"] == "tree"
    assert data["param"] == "start.size"
    for node in data["nodes"]:
        assert node.keys() >= NODE_KEYS
        assert node["kind"] in KINDS
        assert 1 <= node["line"] <= node["end_line"]
        assert not node["file"].startswith("/") and "\\" not in node["file"]
    for edge in data["edges"]:
        assert edge.keys() == EDGE_KEYS
        assert 0 < edge["confidence"] <= 1.0
    ids = {node["id"] for node in data["nodes"]}
    assert len(ids) == len(data["nodes"])
    assert {e["src"] for e in data["edges"]} | {e["dst"] for e in data["edges"]} <= ids

    by_place = {(n["file"], n["line"], n["kind"]): n for n in data["nodes"]}
    assert {key: by_place[("pkg/run.py", 5, "call_arg")][key] for key in NODE_KEYS - {"id"}} == {
        "file": "pkg/run.py",
        "line": 5,
        "end_line": 5,
        "kind": "call_arg",
        "symbol": "start",
        "code": "pool.reserve(size)",
    }
    assert {key: by_place[("pkg/pool.py", 3, "formula")][key] for key in NODE_KEYS - {"id"}} == {
        "file": "pkg/pool.py",
        "line": 3,
        "end_line": 3,
        "kind": "formula",
        "symbol": "Pool.reserve",
        "code": "self.reserved = size * 2",
    }
    edges = {
        (
            next(n for n in data["nodes"] if n["id"] == e["src"])["line"],
            next(n for n in data["nodes"] if n["id"] == e["dst"])["line"],
            e["kind"],
            e["confidence"],
        )
        for e in data["edges"]
    }
    assert edges == {
        (4, 5, "local", 1.0),
        (5, 2, "arg_to_param", 1.0),
        (2, 3, "local", 1.0),
        (3, 9, "attr", 0.5),
    }


def test_json_spans_a_multi_line_statement(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                def size(free, scale):
                    budget = (
                        free
                        * scale
                    )
                    return budget
            """,
        }
    )
    chain = trace(session.graph, "size.free", direction="forward", sinks=["budget"])
    nodes = chain_json(chain, "tree")["nodes"]
    (formula,) = [n for n in nodes if n["kind"] == "formula"]
    assert (formula["line"], formula["end_line"]) == (2, 5)
    assert formula["code"] == "budget = (\n    free\n    * scale\n)"
