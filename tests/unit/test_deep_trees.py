"""Files nested deeper than any program is: one expression of 7.5 MB, brackets, calls, items,
lambdas and blocks ten thousand levels deep. A statement nested more than MAX_DEPTH levels
is read as a statement that does nothing and named in one warning for its file; the rest of
that file and every other file give their answers, in every command, in the index's own
process or in its workers, and again from the fact cache."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.unit.test_explain_snippets import LOG, TREE
from tracer.cli.main import main
from tracer.extract.flows import extract_flows
from tracer.extract.parse import MAX_DEPTH, parse
from tracer.extract.symbols import summarize
from tracer.store.workers import JOBS_ENV, PACKAGE_ROOT, receive, send

LEVELS = 10_000
RUN = "def start(fraction):\n    tokens = fraction * 2\n    return tokens\n"
SPINE = [
    " 1. param        pkg/run.py:1  start",
    " 2. formula      pkg/run.py:2  start",
    " 3. return       pkg/run.py:3  start",
]
# Statements nested LEVELS deep, each reading `fraction`, so a trace of it reads their files.
DEEP = {
    "brackets": "z = " + "(" * LEVELS + "fraction" + ")" * LEVELS,
    "lists": "w = " + "[" * LEVELS + "fraction" + "]" * LEVELS,
    "dicts": "d = " + "{1: " * LEVELS + "fraction" + "}" * LEVELS,
    "calls": "v = " + "f(" * LEVELS + "fraction" + ")" * LEVELS,
    "items": "u = fraction" + "[0]" * LEVELS,
    "attributes": "t = f(fraction)" + ".x" * LEVELS,
    "lambdas": "s = " + "lambda: " * LEVELS + "fraction",
    "negations": "n = " + "not " * LEVELS + "fraction",
    "targets": "[" * LEVELS + "fraction" + "]" * LEVELS + " = g()",
    "sums": "y = " + " + ".join(["fraction"] * LEVELS),
    "logged": 'logger.info("Load end. avail mem=%.2f GB", ' + "-" * LEVELS + "fraction)",
}


def hostile(kind: str) -> str:
    """A function whose first statement is DEEP[KIND] (line 2), its second a plain one."""
    return f"def inside(share):\n    {DEEP[kind]}\n    after = share\n"


def warning(path: str, line: int) -> str:
    return (
        f"warning: {path}: nested more than {MAX_DEPTH} levels deep at line {line}; that "
        "statement was skipped, the rest of the file was indexed"
    )


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def depth(source: bytes) -> int:
    """The depth of the tree parse() reads SOURCE as."""
    cursor = parse(source).tree.walk()
    level = deepest = 0
    while True:
        if cursor.goto_first_child():
            level += 1
            deepest = max(deepest, level)
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return deepest
            level -= 1


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", sorted(DEEP))
def test_a_statement_nested_too_deep_is_read_as_none_and_the_rest_of_its_file_whole(kind):
    source = hostile(kind).encode()
    parsed = parse(source)
    assert parsed.warnings == (
        f"nested more than {MAX_DEPTH} levels deep at line 2; that statement was skipped, "
        "the rest of the file was indexed",
    )
    assert depth(source) <= MAX_DEPTH
    summary = summarize(parsed)
    flows = extract_flows(parsed, summary)
    assert [(f.qualname, f.line, f.end_line) for f in summary.functions] == [("inside", 1, 3)]
    # Lines are where they were: the statement after the deep one is still line 3.
    assert [(a.line, a.targets[0].path, a.value.refs) for a in flows.assigns] == [
        (3, "after", ("share",))
    ]


def test_nesting_up_to_the_cap_is_read_whole_and_one_level_more_is_not():
    """The deepest file of SGLang and of a venv's site-packages is 88 levels deep: a tree
    of MAX_DEPTH levels is read as it is."""
    levels = MAX_DEPTH - 3  # under the module, its statement and the assignment
    source = f"w = {'[' * levels}fraction{']' * levels}\n".encode()
    parsed = parse(source)
    assert (parsed.warnings, depth(source)) == ((), MAX_DEPTH)
    [assign] = extract_flows(parsed, summarize(parsed)).assigns
    shape = assign.value.shape
    for _ in range(levels - 1):
        shape = shape[1][0]
    assert shape == ("list", (("name", "fraction"),))
    deeper = f"w = {'[' * (levels + 1)}fraction{']' * (levels + 1)}\n".encode()
    assert parse(deeper).warnings == (
        f"nested more than {MAX_DEPTH} levels deep at line 1; that statement was skipped, "
        "the rest of the file was indexed",
    )


def test_the_deep_statements_of_a_file_are_named_in_one_warning():
    source = "\n".join([DEEP["lists"], "kept = 1", DEEP["calls"], DEEP["sums"], ""]).encode()
    parsed = parse(source)
    assert parsed.warnings == (
        f"nested more than {MAX_DEPTH} levels deep at lines 1, 3 and 1 more; those statements "
        "were skipped, the rest of the file was indexed",
    )
    [kept] = extract_flows(parsed, summarize(parsed)).assigns
    assert (kept.line, kept.targets[0].path) == (2, "kept")


def test_blocks_nested_past_what_the_parser_reads_leave_the_file_skipped():
    """Ifs a thousand deep: the parser's own recovery nests what is left too deep again,
    so nothing of the file is read."""
    source = "".join(" " * i + "if fraction:\n" for i in range(1000)) + " " * 1000 + "pass\n"
    parsed = parse(source.encode())
    assert parsed.warnings[0] == f"nested more than {MAX_DEPTH} levels deep; skipped"
    assert summarize(parsed).functions == ()
    assert extract_flows(parsed, summarize(parsed)).uses == ()


def test_one_expression_of_7_5_mb_costs_one_warning_not_the_trace(tmp_path, monkeypatch, capsys):
    """`y = fraction + fraction + ...`, under the 8 MB cap: the trace is the clean tree's."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    long = "y = " + " + ".join(["fraction"] * 680_000) + "\nafter = 1\n"
    assert 7 << 20 < len(long) < 8 << 20
    clean = tree(tmp_path / "clean", {"pkg/__init__.py": "", "pkg/run.py": RUN})
    root = tree(tmp_path / "tree", {"pkg/__init__.py": "", "pkg/run.py": RUN, "pkg/long.py": long})
    answer = run(capsys, "trace", str(clean), "fraction", "--warnings")

    code, out, err = run(capsys, "trace", str(root), "fraction", "--warnings")

    assert (code, out.replace(str(root), str(clean))) == answer[:2]
    assert err.splitlines() == [warning("pkg/long.py", 1)]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_command_answers_on_a_tree_of_deep_files(tmp_path, monkeypatch, capsys, jobs):
    """trace, export, callgraph and explain on a tree of deep files, parsed here or in
    worker processes, then again from the cache: each answers as on the tree without them,
    and names each deep file once."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(JOBS_ENV, jobs)
    files = {rel: textwrap.dedent(text).lstrip("\n") for rel, text in TREE.items()}
    files["pkg/run.py"] = RUN
    deep = {f"pkg/deep_{kind}.py": hostile(kind) for kind in DEEP}
    deep["pkg/deep_logged.py"] = "import logging\nlogger = logging.getLogger()\n" + hostile(
        "logged"
    )
    clean = tree(tmp_path / "clean", files)
    root = tree(tmp_path / "tree", {**files, **deep})
    log = tmp_path / "server.log"
    log.write_text(LOG)
    commands = [
        ("trace", "fraction", "--to", "tokens"),
        ("export", "fraction", "--to", "tokens", "-f", "mermaid"),
        ("export", "fraction", "--scope", "calls", "-f", "dot"),
        ("explain", "--log", str(log), "--param", "fraction", "--to", "size"),
    ]
    listed = sorted(warning(path, 4 if "logged" in path else 2) for path in deep)
    told = (
        f"sgtrace: {len(deep)} file(s) had problems and were indexed in part: "
        f"{sorted(deep)[0]}, {sorted(deep)[1]} and {len(deep) - 2} more (--warnings lists them)"
    )
    for _ in ("parsed", "from the cache"):
        for command, *args in commands:
            code, out, said = run(capsys, command, str(clean), *args, "--quiet")
            answer = (code, out.replace(str(clean), "SOURCE"))
            # explain: 1, the log is 12% off its formula; trace and export: 1, the value
            # never reaches the local `tokens` (stderr says so, the tree's warnings after)
            assert code in (0, 1)
            code, out, err = run(capsys, command, str(root), *args)
            assert (code, out.replace(str(root), "SOURCE")) == answer, command
            assert err.splitlines() == [*said.splitlines(), told], command
        code, out, err = run(capsys, "callgraph", str(root), "--warnings")
        graph = json.loads(out)
        _, out, _ = run(capsys, "callgraph", str(clean))
        assert {name: graph[name] for name in json.loads(out)} == json.loads(out)
        assert sorted(err.splitlines()) == listed


def test_a_worker_that_fails_on_a_chunk_ends_quietly_for_the_index_to_report(tmp_path):
    """What a worker cannot summarize, the index's process parses again and reports once: the
    worker says nothing on stderr, it only ends its answers."""
    command = [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
        "from tracer.store.workers import serve; serve()",
    ]
    worker = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert worker.stdin is not None and worker.stdout is not None
    send(worker.stdin, ("summaries", [b"x = 1\n"]))
    assert isinstance(receive(worker.stdout), list)
    send(worker.stdin, ("summaries", ["not bytes"]))  # what no index sends: parse() fails
    assert receive(worker.stdout) is None
    worker.stdin.close()
    assert worker.wait(timeout=60) == 0
    assert worker.stderr is not None and worker.stderr.read() == b""
