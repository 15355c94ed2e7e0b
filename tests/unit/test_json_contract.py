"""`--json` (and `--format json`) is a contract: stdout holds one JSON document, named with
its schema, and nothing else; an error is one line on stderr and nothing on stdout. `--to NAME`
that the value never reaches is said on stderr and in the JSON, with exit status 1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tracer.views import schemas

TREE = {
    "pkg/__init__.py": "",
    "pkg/settings.py": """
        import argparse
        from dataclasses import dataclass


        @dataclass
        class Settings:
            fraction: float = 0.9


        def parse(argv):
            parser = argparse.ArgumentParser()
            parser.add_argument("--fraction", type=float, default=Settings.fraction)
            args = parser.parse_args(argv)
            return Settings(fraction=args.fraction)
    """,
    "pkg/runner.py": """
        from pkg.settings import Settings


        class Runner:
            def __init__(self, settings: Settings, free: float):
                self.budget = free * settings.fraction
                self.tokens = int(self.budget // 64)
    """,
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def sgtrace(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"SGTRACE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "tracer.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def document(done: subprocess.CompletedProcess[str], schema: str) -> dict:
    data = json.loads(done.stdout)  # the whole of stdout is one document
    assert data["schema"] == schema
    return data


def test_trace_json_is_one_document_with_its_schema(tree: Path, tmp_path: Path) -> None:
    done = sgtrace(tmp_path, "trace", str(tree), "Settings.fraction", "--json")
    assert done.returncode == 0, done.stderr
    data = document(done, schemas.TRACE)
    assert (data["to"], data["to_reached"]) == ([], None)
    reached = sgtrace(tmp_path, "trace", str(tree), "fraction", "--json", "--to", "tokens")
    assert (reached.returncode, reached.stderr) == (0, "")
    assert document(reached, schemas.TRACE)["to_reached"] is True


def test_a_to_never_reached_is_said_and_exits_1(tree: Path, tmp_path: Path) -> None:
    done = sgtrace(tmp_path, "trace", str(tree), "fraction", "--json", "--to", "nowhere_else")
    assert done.returncode == 1
    data = document(done, schemas.TRACE)
    assert (data["to"], data["to_reached"]) == (["nowhere_else"], False)
    assert done.stderr.splitlines() == [
        "sgtrace: fraction does not reach nowhere_else: the spine shown ends at "
        "pkg/runner.py:6 (Runner.__init__)"
    ]
    text = sgtrace(tmp_path, "trace", str(tree), "fraction", "--to", "nowhere_else")
    assert text.returncode == 1
    assert "pkg/runner.py" in text.stdout  # the spine it has, shown all the same


def test_an_error_prints_nothing_on_stdout(tree: Path, tmp_path: Path) -> None:
    for args in (
        ("trace", str(tree), "no_such_name", "--json"),
        ("trace", str(tmp_path / "nowhere"), "x", "--json"),
        ("audit", str(tree), "--format", "json"),
        ("export", str(tree), "no_such_name", "-f", "json"),
        ("callgraph", str(tmp_path / "nowhere"), "--json"),
    ):
        done = sgtrace(tmp_path, *args)
        assert done.returncode == 2, args
        assert done.stdout == "", args
        assert len(done.stderr.splitlines()) == 1, (args, done.stderr)


def test_export_json_names_its_schema_in_the_graph(tree: Path, tmp_path: Path) -> None:
    done = sgtrace(tmp_path, "export", str(tree), "fraction", "-f", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["graph"]["schema"] == schemas.EXPORT
    assert data["nodes"] and data["edges"]


def test_audit_json_is_one_document(tree: Path, tmp_path: Path) -> None:
    done = sgtrace(tmp_path, "audit", str(tree), "--against", str(tree), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = document(done, schemas.AUDIT)
    assert (data["changed"], data["errors"]) == (False, [])


def test_callgraph_json_is_pycgs_format(tree: Path, tmp_path: Path) -> None:
    done = sgtrace(tmp_path, "callgraph", str(tree), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["pkg.settings.parse"] == sorted(data["pkg.settings.parse"])
    assert "argparse.ArgumentParser.parse_args" in data["pkg.settings.parse"]


def test_a_remote_failure_is_one_line_and_no_json(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = sgtrace(tmp_path, "fetch", f"ssh://127.0.0.1:{port}/srv", "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
