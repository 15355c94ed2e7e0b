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
from tests.unit.test_robustness import BROKEN
from tracer.cli import audit, callgraph, explain, export, fetch, trace, walk
from tracer.cli.main import build_parser, main
from tracer.errors import JournalUnreadable, NoReference, PackageNotFound
from tracer.index.suggest import nearest_names
from tracer.sources import PackageHint, parse_remote
from tracer.sources.fetch import fetch_many
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
    assert engine.value.hint == (
        "name the reference: --against pypi:vllm==VERSION, --against release (the release its "
        "version file names), or a folder"
    )
    # The command line hands in its presets.
    assert main(["audit", tree, "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"sgtrace: error: {tree}: {tree} is neither a git checkout nor a pip install with a "
        "RECORD: name the reference: --against pypi:sglang==VERSION, --against release (the "
        "release its version file names), or a folder\n"
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


@pytest.mark.release
def test_a_misspelled_name_gets_the_nearest_names_the_index_knows(release, capsys) -> None:
    release("0.4.6")
    assert main(["trace", "pypi:sglang==0.4.6", "mem_fraction_statik", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "sgtrace: error: 'mem_fraction_statik' is bound nowhere in the source: "
        "did you mean mem_fraction_static?\n"
    )
    # A dotted name: its last part is matched, its owner kept.
    assert main(["trace", "pypi:sglang==0.4.6", "ServerArgs.chunked_prefil_size"]) == 2
    assert capsys.readouterr().err == (
        "sgtrace: error: 'ServerArgs.chunked_prefil_size' is bound nowhere in the source: "
        "did you mean ServerArgs.chunked_prefill_size?\n"
    )
    # The owner misspelled: the owners near it that bind the name, then the name alone.
    assert main(["trace", "pypi:sglang==0.4.6", "ServerArg.mem_fraction_static"]) == 2
    assert capsys.readouterr().err == (
        "sgtrace: error: 'ServerArg.mem_fraction_static' is bound nowhere in the source: "
        "did you mean ServerArgs.mem_fraction_static or mem_fraction_static?\n"
    )
    # Nothing near: the old advice.
    assert main(["trace", "pypi:sglang==0.4.6", "no_such_parameter_anywhere"]) == 2
    assert capsys.readouterr().err == (
        "sgtrace: error: 'no_such_parameter_anywhere' is bound nowhere in the source: "
        "check the spelling; try the attribute or parameter name alone\n"
    )


@pytest.mark.release
def test_a_field_that_moved_to_another_class_is_offered_alone(release, capsys) -> None:
    # 0.5.23 declares ServerArgs' fields in arg_groups/fields/ classes: the old owner binds
    # nothing, the name alone traces.
    release("0.5.23")
    assert main(["trace", "pypi:sglang==0.5.23", "ServerArgs.mem_fraction_static"]) == 2
    assert capsys.readouterr().err == (
        "sgtrace: error: 'ServerArgs.mem_fraction_static' is bound nowhere in the source: "
        "did you mean mem_fraction_static?\n"
    )
    assert main(["trace", "pypi:sglang==0.5.23", "mem_fraction_static", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["param"] == "mem_fraction_static"


def test_nearest_names_come_from_fields_params_and_definitions(snippet_session) -> None:
    index = snippet_session({"pkg/__init__.py": "", "pkg/runner.py": RUNNER}).index
    assert nearest_names(index, "fracton") == ["fraction"]
    assert nearest_names(index, "Runner.size.totl") == ["Runner.size.total"]
    assert nearest_names(index, "Runner.sise.total") == ["Runner.size.total", "total"]
    assert nearest_names(index, "Config.fraction") == ["fraction"]
    assert nearest_names(index, "Runnr") == ["Runner"]
    assert nearest_names(index, "size") == []  # spelled right: nothing nearer
    assert nearest_names(index, "unrelated") == []


def broken_tree(root: Path, broken: int) -> Path:
    """A package with BROKEN files that parse only in part (and one that parses whole)."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for n in range(broken):
        (root / "pkg" / f"broken{n}.py").write_bytes(BROKEN)
    return root


def test_the_indexed_in_part_warning_follows_the_result_once_and_names_the_files(
    tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    one = str(broken_tree(tmp_path / "one", 1))
    assert main(["trace", one, "After.method.b", "--json"]) == 0
    assert capsys.readouterr().err == (
        "sgtrace: 1 file(s) had problems and were indexed in part: pkg/broken0.py "
        "(--warnings lists them)\n"
    )
    four = str(broken_tree(tmp_path / "four", 4))
    assert main(["export", four, "After.method.b", "-f", "dot"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("digraph")
    assert err == (
        "sgtrace: 4 file(s) had problems and were indexed in part: pkg/broken0.py, "
        "pkg/broken1.py and 2 more (--warnings lists them)\n"
    )
    assert main(["trace", one, "After.method.b", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_a_failed_command_says_its_error_and_the_warnings_only_where_they_bear_on_it(
    tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = str(broken_tree(tmp_path / "tree", 1))
    # A name bound nowhere may be bound in a file indexed in part: the warning follows.
    assert main(["trace", tree, "After.method.bee"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "sgtrace: error: 'After.method.bee' is bound nowhere in the source: "
        "check the spelling; try the attribute or parameter name alone",
        "sgtrace: 1 file(s) had problems and were indexed in part: pkg/broken0.py "
        "(--warnings lists them)",
    ]
    # Any other error is what to act on: it comes alone.
    export = ["export", tree, "After.method.b", "-f", "dot", "--scope", "file", "--file", "x.py"]
    assert main(export) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("sgtrace: error: 'x.py' is not a Python file of the source")
    # Unless they were asked for.
    assert main([*export, "--warnings"]) == 2
    assert capsys.readouterr().err.splitlines()[1:] == [
        "warning: pkg/broken0.py: syntax error near line 4; the rest of the file was indexed"
    ]


def test_an_audit_tells_each_tree_its_warnings(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    reference = broken_tree(tmp_path / "reference", 1)
    target = broken_tree(tmp_path / "target", 2)
    assert main(["audit", str(target), "--against", str(reference)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{target} against {reference}: no traced chain changed\n")
    assert err.splitlines() == [
        f"sgtrace: {reference}: 1 file(s) had problems and were indexed in part: "
        "pkg/broken0.py (--warnings lists them)",
        f"sgtrace: {target}: 2 file(s) had problems and were indexed in part: "
        "pkg/broken0.py and pkg/broken1.py (--warnings lists them)",
    ]


@pytest.mark.parametrize("command", ["trace", "walk", "export", "explain", "callgraph"])
def test_every_command_taking_a_source_shows_its_forms_remote_ones_too(
    command: str, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per argument
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(maxsplit=1)[1] for line in lines if line.startswith("  SOURCE ")] == [
        "a folder, a .py file, pypi:NAME==VERSION (e.g. pypi:sglang==0.5.9), or a tree on a "
        "host, fetched over SSH: host:/path, user@host:/path or ssh://user@host:port/path"
    ]


def test_audit_shows_the_forms_of_its_targets(monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(maxsplit=1)[1] for line in lines if line.startswith("  TARGET ")] == [
        "a tree to audit: a host (sglang found there), host:/path, user@host:/path or "
        "ssh://user@host:port/path, a folder or pypi:NAME==VERSION"
    ]
