"""The command line as a user meets it: one module per command, each loading only what it
uses, `python -m tracer.cli` and the `sgtrace` script."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tracer.cli
from tracer.cli import audit, callgraph, explain, export, fetch, trace, walk
from tracer.cli.main import build_parser, main
from tracer.errors import NoReference, PackageNotFound
from tracer.sources import PackageHint, parse_remote
from tracer.sources.fetch import fetch_many
from tracer.sources.journal import JournalUnreadable
from tracer.sources.journal import checked as journal_checked
from tracer.sources.pristine import pair_for
from tracer.sources.remote import SshOptions

ROOT = Path(__file__).resolve().parents[2]
RUNNER = """
    class Runner:
        def __init__(self, fraction: float):
            self.fraction = fraction

        def size(self, total):
            self.tokens = int(total * (1 - self.fraction))
"""
HEAVY = ("textual", "networkx", "tree_sitter", "tracer.session", "tracer.graph", "tracer.index")


def small_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "runner.py").write_text(textwrap.dedent(RUNNER).lstrip())
    return root


def loaded_after(commands: list[list[str]], tmp_path: Path) -> dict[str, object]:
    """Run each command line through `main` in a fresh interpreter; the exit codes, and which
    of the HEAVY modules were loaded by then."""
    code = textwrap.dedent(
        f"""
        import json, sys
        from tracer.cli.main import main
        codes = [main(argv) for argv in {commands!r}]
        heavy = sorted(h for h in {HEAVY!r} if h in sys.modules)
        print(json.dumps({{"codes": codes, "loaded": heavy}}))
        """
    )
    env = {"SGTRACE_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_each_command_is_dispatched_to_the_run_of_its_own_module() -> None:
    parser = build_parser()
    lines = {
        trace: ["trace", "src", "name"],
        fetch: ["fetch", "host"],
        walk: ["walk", "src"],
        export: ["export", "src", "name", "-f", "dot"],
        audit: ["audit", "target"],
        explain: ["explain", "src", "--log", "x.log"],
        callgraph: ["callgraph", "src"],
    }
    for module, argv in lines.items():
        assert parser.parse_args(argv).func is module.run, argv


def test_fetch_loads_neither_the_engine_nor_the_graph(tmp_path: Path) -> None:
    # Port 1 refuses at once: the whole fetch path runs, up to the connection.
    found = loaded_after([["fetch", "ssh://127.0.0.1:1/tmp", "--connect-timeout", "5"]], tmp_path)
    assert found == {"codes": [2], "loaded": []}


def test_only_the_walk_loads_textual(tmp_path: Path) -> None:
    tree = str(small_tree(tmp_path))
    commands = [
        ["trace", tree, "Runner.fraction", "--quiet"],
        ["export", tree, "Runner.fraction", "-f", "dot", "-o", str(tmp_path / "c.dot")],
        ["callgraph", tree, "--quiet"],
    ]
    found = loaded_after(commands, tmp_path)
    assert found == {
        "codes": [0, 0, 0],
        "loaded": ["networkx", "tracer.graph", "tracer.index", "tracer.session", "tree_sitter"],
    }


@pytest.mark.parametrize(
    "program", [["-m", "tracer.cli"], ["-c", "from tracer.cli.main import entry; entry()"]]
)
def test_python_m_tracer_cli_and_the_script_run_the_same_commands(program: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, *program, "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "{trace,fetch,walk,export,audit,explain,callgraph}" in done.stdout


# -- the presets stay in the command line ------------------------------------------------


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_neither_the_engine_nor_the_walk_imports_the_command_line() -> None:
    readers = [
        path.relative_to(ROOT).as_posix()
        for folder in ("tracer", "tui")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "tracer/cli/" not in path.as_posix()
        and any(m.startswith("tracer.cli") for m in imported_modules(path))
    ]
    assert readers == []


def test_a_host_without_a_path_needs_a_package_to_look_for() -> None:
    spec = parse_remote("nowhere.invalid", bare_host=True)
    assert spec is not None
    [result] = fetch_many([spec], SshOptions(timeout=1), None, PackageHint())
    assert isinstance(result, PackageNotFound)  # said before any connection is tried
    assert str(result) == (
        "nowhere.invalid names no path, and no package is expected there: "
        "give the path: nowhere.invalid:/path/to/the/tree"
    )


def test_messages_name_the_package_of_the_hint(tmp_path: Path, capsys) -> None:
    with pytest.raises(JournalUnreadable) as empty:
        journal_checked("llm.service", "box", 0, b"", b"", PackageHint("vllm"))
    assert empty.value.hint == "check the unit name (systemctl list-units | grep -i vllm)"
    tree = str(small_tree(tmp_path))
    with pytest.raises(NoReference) as engine:
        pair_for(tree, None, None, None, None, PackageHint("vllm"))
    assert engine.value.hint == "name it: --against pypi:vllm==VERSION (or a folder)"
    # The command line hands in its presets.
    assert main(["audit", tree, "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"sgtrace: error: {tree}: {tree} is not a remote checkout or install, so its reference "
        "is not known: name it: --against pypi:sglang==VERSION (or a folder)\n"
    )


# -- the first ten minutes -----------------------------------------------------------------


def test_version_comes_from_the_package_metadata() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracer.cli", "--version"], cwd=ROOT, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "sgtrace 0.1.0\n", "")
    assert importlib.metadata.version("sgtrace") == tracer.cli.__version__


def test_version_without_metadata_falls_back_to_the_source_tree(tmp_path: Path) -> None:
    # -S: no site-packages, so no installed metadata; the tree itself is on the path.
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tracer.cli.main import entry; entry()"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (0, "sgtrace 0.1.0\n"), done.stderr
