"""Benchmark: `sgtrace trace` forward from SOURCE, scored against CodeQL's Python dataflow tests
as a user would read its answer (issue 28).

Run from the repo root, with CodeQL's test files in DIR (they are not downloaded; see below):

    python -m tests.bench.bench_codeql [--tests DIR] [--folder NAME]... [--show-misses]
                                       [--json PATH] [--against REV] [--cases]

The tests are the `.py` files of five folders of github/codeql's
`python/ql/test/library-tests/dataflow/`: fieldflow, coverage, variable-capture, match and
exceptions, laid out as DIR/FOLDER/FILE.py (DIR: --tests, else $SGTRACE_CODEQL_TESTS, else
/work/codeql-dataflow). They are another project's code, never copied into this repository.
Each defines `SOURCE = "source"`, `SINK(x)` and `SINK_F(x)` and calls a sink at most once a
line; the line's comment says what CodeQL's own analysis answers there, in its inline
expectations: `# $ flow="..."` (or `# $ captured`, the variable-capture folder's tag) where it
finds a flow, `# $ MISSING: flow` where a flow exists that it misses, `# $ SPURIOUS: flow` where
it reports one that does not exist.

Method, per test file: the file alone is written into a new folder and
`sgtrace trace FOLDER SOURCE --direction forward --json --max-depth D --branch-depth D --quiet`
runs in this process (the CLI's own `main`; its standard output is the JSON contract of
docs/DESIGN.md), with sgtrace's caches in a temporary folder that lives as long as the run. D is
1000 (`--depth`): at 5f94520 every answer is the same from --max-depth 8 and --branch-depth 16
upwards (at 8 and 8, 6 flows fewer), so nothing is cut. A trace that fails is an error, listed
by file, its lines not reached (coverage/module_level.py reads SOURCE without defining it:
"'SOURCE' is bound nowhere").

Counting rule. The lines scored hold a call `SINK(...)` or `SINK_F(...)` (found with `ast`:
definitions and commented-out calls are not calls). A line is *reached* when an edge of the
answer passes the value from a step on that line into the first parameter of that line's sink:
the edge's destination is the `param` step of the function `SINK` (or `SINK_F`) named as its
first parameter, its source a step whose `line`..`end_line` holds the line. Every reported step
and edge counts, not only the spine.
- An *annotated flow* is a SINK line whose annotation has a `flow` or `captured` tag, plain or
  after `MISSING:` (a flow arrives there at run time); CodeQL finds it when a tag is plain. A
  SINK line without such a tag would not be scored (there is none).
- A *no-flow line* is any SINK_F line (it prints "Unexpected flow" when the source arrives);
  CodeQL reaches it when a tag follows `SPURIOUS:`.
The figures: annotated flows reached ("flows found") of all, and no-flow lines reached
("SINK_F hit") of all; beside them CodeQL's own, per folder and in total. Targets (issue 28):
more flows found than CodeQL finds, and no more SINK_F lines reached than CodeQL reaches. Six
flows are out of the method's reach: five start at a literal (`x = 42`), not at SOURCE, and the
one of module_level.py.

The files (read from github/codeql's stored copies through the search tool; the commit is the
stored version's): fieldflow/test.py 863e6e6, test_dict.py 901245a, test_global.py a0ab6c4;
coverage/test.py 5644905, argumentPassing.py 6d7f6ff, datamodel.py 9907d7a, functional.py
195b70a, loops.py 494f0b7, module_level.py 36aa19b, test_builtins.py b9e523a (the version with
map, filter, enumerate and zip); variable-capture/by_value.py 78dc650, dict.py 4b95ea0,
global.py c397487, in.py 9d164d0, nonlocal.py 6d7f6ff, test_collections.py c397487,
test_fields.py 3b9eba2, test_library_calls.py 3b9eba2; match/test.py 3b9eba2; exceptions/test.py
4b95ea0. coverage/classes.py is left out: it calls no SINK or SINK_F (it checks which method a
dunder operation runs). The 20 files hold 370 annotated flows, CodeQL finding 285, and 196
SINK_F lines, CodeQL reaching 31; DIGEST is their SHA-256 (over the sorted FOLDER/FILE names
and bytes) and a run says when its files differ. At 5f94520 sgtrace finds 281 flows and reaches
117 SINK_F lines. (The figures measured from outside at the same code, 283 of 366 and 115 of 193,
were most likely taken on other versions of some files: the store holds 2 to 12 versions of
several of them, e.g. a coverage/test.py in which CodeQL also finds three generator flows.)

`--show-misses` lists each file's flows missed (-) and SINK_F lines reached (+), marking those
where CodeQL answers the same; `--against REV` runs the same benchmark on the tracer at git
revision REV (a copy of its `tracer/` and `queries/`, in a new process) and prints its figures
beside today's; `--cases` also scores our own snippets of tests/unit/dataflow_cases.py (one per
pattern missed or wrongly reached here) with the same rule, on today's code.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.bench.revision import tracer_at

if TYPE_CHECKING:
    from tests.unit.dataflow_cases import Case

REPO_ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("fieldflow", "coverage", "variable-capture", "match", "exceptions")
DEFAULT_TESTS = Path("/work/codeql-dataflow")
TESTS_VARIABLE = "SGTRACE_CODEQL_TESTS"
DIGEST = "cd4bb22cc7f2a29220953dd5635979b1ec35baf9ec16a46ceeafabed2abcf913"
DEPTH = 1000
TRACED = "SOURCE"
SINKS = ("SINK", "SINK_F")
FLOW_TAGS = frozenset({"flow", "captured"})
CASE_SINK = "sink"  # the sink of our own cases


# -- what each test file expects -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SinkLine:
    """A line calling a sink: FLOW_ARRIVES for SINK (a flow must reach it), not for SINK_F;
    CODEQL_REACHES says whether CodeQL's annotation reports a flow there."""

    line: int
    sink: str
    flow_arrives: bool
    codeql_reaches: bool
    function: str  # the def the line is in, "" at module level
    code: str


def sink_lines(text: str) -> tuple[list[SinkLine], dict[str, str]]:
    """The scored lines of a test file's TEXT, in order, and the first parameter of each sink
    it defines (`{"SINK": "x", "SINK_F": "x"}`)."""
    tree = ast.parse(text)
    comments = line_comments(text)
    lines = text.splitlines()
    first_params = first_parameters(tree, SINKS)
    found: dict[int, SinkLine] = {}
    for function, call in sink_calls(tree):
        sink = call.func.id  # type: ignore[attr-defined]
        marked = flow_markers(comments.get(call.lineno, ""))
        if sink == "SINK" and not marked & {"", "MISSING"}:
            continue  # no flow annotated: not scored
        reaches = "" in marked if sink == "SINK" else "SPURIOUS" in marked
        code = lines[call.lineno - 1].strip()
        found.setdefault(
            call.lineno, SinkLine(call.lineno, sink, sink == "SINK", reaches, function, code)
        )
    return sorted(found.values(), key=lambda s: s.line), first_params


def first_parameters(tree: ast.Module, names: Iterable[str]) -> dict[str, str]:
    """The first parameter of each function of NAMES defined at the top of TREE."""
    wanted = set(names)
    return {
        node.name: node.args.args[0].arg
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name in wanted and node.args.args
    }


def sink_calls(tree: ast.AST, names: Iterable[str] = SINKS) -> Iterable[tuple[str, ast.Call]]:
    """Each call of a function of NAMES by its name, with the dotted name of the def it is in."""
    wanted = set(names)

    def walk(node: ast.AST, scope: str) -> Iterable[tuple[str, ast.Call]]:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Name)
                and child.func.id in wanted
            ):
                yield scope, child
            yield from walk(child, inner)

    return walk(tree, "")


def line_comments(text: str) -> dict[int, str]:
    """The comment ending each line of TEXT, by line number."""
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string
    return comments


ANNOTATION = re.compile(r"#\s*\$(.*)")
WORD = re.compile(
    r"(?P<marker>MISSING|SPURIOUS):"  # the tags after it are missed, or spurious
    r"|(?P<prose>#.*)"  # a plain comment after the expectation
    r"""|(?P<tag>[\w,-]+)(?:=(?:"[^"]*"|'[^']*'|\S*))?"""  # tag, tag=value, tag="a value"
    r"|\S"
)


def flow_markers(comment: str) -> set[str]:
    """The markers a flow tag of COMMENT stands after: "" (plain), "MISSING", "SPURIOUS"."""
    return {marker for marker, tag in annotation_tags(comment) if tag in FLOW_TAGS}


def annotation_tags(comment: str) -> set[tuple[str, str]]:
    """The tags of an inline expectation (`# $ flow="..." MISSING: flow`), each as (marker,
    tag) with marker "", "MISSING" or "SPURIOUS"; `a,b=v` is two tags; a `#` ends them."""
    found = ANNOTATION.search(comment)
    if found is None:
        return set()
    tags: set[tuple[str, str]] = set()
    marker = ""
    for word in WORD.finditer(found.group(1)):
        if word["marker"]:
            marker = word["marker"]
        elif word["prose"]:
            break
        elif word["tag"]:
            tags.update((marker, name) for name in word["tag"].split(","))
    return tags


# -- scoring one answer ----------------------------------------------------------------------


def reached_lines(
    answer: Mapping[str, Any], file: str, lines: Iterable[SinkLine], first_params: Mapping[str, str]
) -> frozenset[int]:
    """The LINES of FILE at which ANSWER (the trace's JSON) passes the value into the first
    parameter of the line's sink: an edge into that parameter's step from a step whose span
    holds the line."""
    nodes = {node["id"]: node for node in answer["nodes"]}
    by_sink: dict[str, list[int]] = {}
    for sink_line in lines:
        by_sink.setdefault(sink_line.sink, []).append(sink_line.line)
    reached = set()
    for edge in answer["edges"]:
        target, origin = nodes.get(edge["dst"]), nodes.get(edge["src"])
        if target is None or origin is None or target["kind"] != "param":
            continue
        sink = target["symbol"]
        if sink not in by_sink or target["name"] != first_params.get(sink):
            continue
        if origin["file"] != file:
            continue
        span = range(origin["line"], origin["end_line"] + 1)
        reached.update(line for line in by_sink[sink] if line in span)
    return frozenset(reached)


@dataclass(frozen=True, slots=True)
class Result:
    """One test file: its scored lines, those our answer reaches, or why there is no answer."""

    folder: str
    name: str
    lines: tuple[SinkLine, ...]
    reached: frozenset[int] = frozenset()
    error: str = ""

    def flows(self) -> list[SinkLine]:
        return [s for s in self.lines if s.flow_arrives]

    def no_flows(self) -> list[SinkLine]:
        return [s for s in self.lines if not s.flow_arrives]

    def missed(self) -> list[SinkLine]:
        """Annotated flows we do not reach."""
        return [s for s in self.flows() if s.line not in self.reached]

    def false(self) -> list[SinkLine]:
        """No-flow lines we reach."""
        return [s for s in self.no_flows() if s.line in self.reached]


@dataclass
class Tally:
    """Results summed over files: a folder, or all of them."""

    files: int = 0
    errors: int = 0
    flows: int = 0  # annotated flows
    found: int = 0  # ... that we reach
    codeql_found: int = 0  # ... that CodeQL finds
    no_flows: int = 0  # SINK_F lines
    reached: int = 0  # ... that we reach
    codeql_reached: int = 0  # ... that CodeQL reaches

    def add(self, result: Result) -> None:
        self.files += 1
        self.errors += bool(result.error)
        flows, no_flows = result.flows(), result.no_flows()
        self.flows += len(flows)
        self.found += len(flows) - len(result.missed())
        self.codeql_found += sum(s.codeql_reaches for s in flows)
        self.no_flows += len(no_flows)
        self.reached += len(result.false())
        self.codeql_reached += sum(s.codeql_reaches for s in no_flows)

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def tallies(results: Iterable[Result]) -> tuple[dict[str, Tally], Tally]:
    """The tally of each folder, and of all."""
    by_folder: dict[str, Tally] = {}
    total = Tally()
    for result in results:
        by_folder.setdefault(result.folder, Tally()).add(result)
        total.add(result)
    return by_folder, total


# -- running ---------------------------------------------------------------------------------


def test_files(root: Path, folders: Iterable[str]) -> list[tuple[str, Path]]:
    """(folder, file) of every `.py` file directly in ROOT/FOLDER, in order."""
    found = []
    for folder in folders:
        found += [(folder, p) for p in sorted((root / folder).glob("*.py")) if p.is_file()]
    return found


def files_digest(files: Iterable[tuple[str, Path]]) -> str:
    """SHA-256 over the sorted `FOLDER/FILE` names and bytes of FILES."""
    digest = hashlib.sha256()
    for name, path in sorted((f"{folder}/{path.name}", path) for folder, path in files):
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def sgtrace(argv: list[str]) -> tuple[int, str, str]:
    """The `sgtrace` command run in this process: its status, standard output and error."""
    from tracer.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as stop:  # argparse refusing the arguments
            status = stop.code if isinstance(stop.code, int) else 2
    return status, out.getvalue(), err.getvalue()


def run_file(folder: str, path: Path, work: Path, depth: int) -> Result:
    """PATH traced from SOURCE in a folder of its own under WORK, and scored."""
    try:
        text = path.read_text(encoding="utf-8")
        lines, first_params = sink_lines(text)
    except (OSError, SyntaxError, ValueError) as error:
        return Result(folder, path.name, (), error=f"{type(error).__name__}: {error}")
    alone = work / f"{folder}-{path.stem}"
    answer, error = traced_reach(alone, path.name, text, TRACED, depth)
    if error:
        return Result(folder, path.name, tuple(lines), error=error)
    reached = reached_lines(answer, path.name, lines, first_params)
    return Result(folder, path.name, tuple(lines), reached)


def traced_reach(alone: Path, name: str, text: str, traced: str, depth: int) -> tuple[Any, str]:
    """TEXT written as NAME, the only file of the new folder ALONE, and traced forward from
    TRACED by the sgtrace command: its JSON answer, or the last line of its error."""
    alone.mkdir()
    (alone / name).write_text(text, encoding="utf-8")
    argv = ["trace", str(alone), traced, "--direction", "forward", "--json", "--quiet"]
    argv += ["--max-depth", str(depth), "--branch-depth", str(depth)]
    status, out, err = sgtrace(argv)
    if status != 0:
        message = err.strip().splitlines()
        return None, message[-1] if message else f"status {status}"
    return json.loads(out), ""


def run_all(root: Path, folders: Iterable[str], depth: int) -> list[Result]:
    """Every test file of FOLDERS under ROOT, with caches that live as long as the run."""
    files = test_files(root, folders)
    with (
        tempfile.TemporaryDirectory(prefix="sgtrace-bench-codeql-") as tmp,
        cache_in(Path(tmp) / "cache"),
    ):
        return [run_file(folder, path, Path(tmp), depth) for folder, path in files]


@contextlib.contextmanager
def cache_in(folder: Path) -> Iterator[None]:
    """sgtrace's caches (SGTRACE_CACHE) in FOLDER for the time of the block."""
    before = os.environ.get("SGTRACE_CACHE")
    os.environ["SGTRACE_CACHE"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["SGTRACE_CACHE"]
        else:
            os.environ["SGTRACE_CACHE"] = before


def run_against(rev: str, root: Path, folders: list[str], depth: int) -> dict[str, Any]:
    """The report of this benchmark run on the tracer at git revision REV, in a new process."""
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-codeql-against-") as tmp:
        code = tracer_at(rev, Path(tmp), Path(__file__))
        out = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "tests.bench.bench_codeql", "--tests", str(root)]
        command += ["--json", str(out), "--depth", str(depth)]
        for folder in folders:
            command += ["--folder", folder]
        done = subprocess.run(command, cwd=code, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the benchmark at {rev} failed:\n{done.stderr.strip()}")
        report = json.loads(out.read_text())
        if not report["engine"].startswith(str(code.resolve())):
            sys.exit(f"the benchmark at {rev} ran the tracer in {report['engine']}, not its copy")
    return {**report, "revision": short_revision(rev)}


# -- our own cases ---------------------------------------------------------------------------


def run_cases(depth: int) -> list[Result]:
    """Each case of tests/unit/dataflow_cases.py traced and scored as a test file is, with
    caches that live as long as the run (read from this checkout, whatever the tracer)."""
    from tests.unit.dataflow_cases import CASES

    folder = tempfile.TemporaryDirectory(prefix="sgtrace-bench-codeql-cases-")
    with folder as tmp, cache_in(Path(tmp) / "cache"):
        return [run_case(case, Path(tmp) / f"case-{n}", depth) for n, case in enumerate(CASES)]


def run_case(case: Case, alone: Path, depth: int) -> Result:
    """CASE traced in the new folder ALONE and scored: its marked
    lines as SINK lines (must be reached) and SINK_F lines (must not)."""
    tree = ast.parse(case.source)
    text = case.source.splitlines()
    scopes = {call.lineno: scope for scope, call in sink_calls(tree, [CASE_SINK])}
    lines = tuple(
        SinkLine(n, CASE_SINK, n in case.reached, False, scopes.get(n, ""), text[n - 1].strip())
        for n in sorted(case.reached + case.not_reached)
    )
    answer, error = traced_reach(alone, "case.py", case.source, case.traced, depth)
    if error:
        return Result("cases", case.category, lines, error=error)
    reached = reached_lines(answer, "case.py", lines, first_parameters(tree, [CASE_SINK]))
    return Result("cases", case.category, lines, reached)


def cases_text(results: Iterable[Result]) -> str:
    """One line per case: the lines it must reach that are reached, the lines it must not
    that are, and whether it holds."""
    lines = ["", "our own cases (tests/unit/dataflow_cases.py):"]
    held = 0
    for result in results:
        flows, no_flows = result.flows(), result.no_flows()
        holds = not result.error and not result.missed() and not result.false()
        held += holds
        lines.append(
            f"  {'holds' if holds else 'fails'}  {result.name:<42} reached "
            f"{len(flows) - len(result.missed())}/{len(flows)}, wrongly reached "
            f"{len(result.false())}/{len(no_flows)}"
            + (f"; error: {result.error}" if result.error else "")
        )
    lines.append(f"  {held} of {len(lines) - 2} cases hold")
    return "\n".join(lines)


# -- the report ------------------------------------------------------------------------------


@dataclass
class Report:
    """A run's results, where they came from, and the figures at --against REV."""

    results: list[Result]
    seconds: float
    revision: str
    tests: str
    digest: str
    depth: int
    against: dict[str, Any] | None = None  # the report at --against REV, as its JSON
    by_folder: dict[str, Tally] = field(init=False)
    total: Tally = field(init=False)

    def __post_init__(self) -> None:
        self.by_folder, self.total = tallies(self.results)

    def as_json(self) -> dict[str, Any]:
        import tracer

        return {
            "tests": self.tests,
            "digest": self.digest,
            "revision": self.revision,
            "engine": str(Path(tracer.__file__).resolve().parent),
            "seconds": round(self.seconds, 2),
            "depth": self.depth,
            "folders": {f: t.as_json() for f, t in self.by_folder.items()},
            "total": self.total.as_json(),
            "files": [result_json(r) for r in self.results],
            "against": self.against,
        }


def result_json(result: Result) -> dict[str, Any]:
    def described(line: SinkLine) -> dict[str, Any]:
        return {"line": line.line, "function": line.function, "code": line.code}

    return {
        "folder": result.folder,
        "name": result.name,
        "error": result.error,
        "flows": len(result.flows()),
        "no_flows": len(result.no_flows()),
        "missed": [described(s) | {"codeql": s.codeql_reaches} for s in result.missed()],
        "false": [described(s) | {"codeql": s.codeql_reaches} for s in result.false()],
    }


def fraction(part: int, whole: int) -> str:
    return f"{part}/{whole}"


def row(label: str, tally: Mapping[str, Any], before: Mapping[str, Any] | None) -> str:
    cells = [
        f"{tally['files']:>5}",
        f"{tally['errors']:>6}",
        f"{fraction(tally['found'], tally['flows']):>11}",
        f"{fraction(tally['codeql_found'], tally['flows']):>11}",
        f"{fraction(tally['reached'], tally['no_flows']):>11}",
        f"{fraction(tally['codeql_reached'], tally['no_flows']):>11}",
    ]
    line = f"{label:<18}" + "  ".join(cells)
    if before is not None:
        was = [
            f"{fraction(before['found'], before['flows']):>11}",
            f"{fraction(before['reached'], before['no_flows']):>11}",
        ]
        line += "   |" + "  ".join(was)
    return line


def table_text(report: Report) -> str:
    data = report.as_json()
    against = report.against
    header = f"{'folder':<18}{'files':>5}  {'errors':>6}  {'flows found':>11}  {'CodeQL':>11}"
    header += f"  {'SINK_F hit':>11}  {'CodeQL':>11}"
    if against is not None:
        header += f"   |{'flows found':>11}  {'SINK_F hit':>11}"
    same = "" if report.digest == DIGEST else " (not the files this bench's docstring measured)"
    lines = [
        f"CodeQL's dataflow tests ({report.tests}, sha256 {report.digest[:12]}{same}): "
        f"{report.total.files} files; code {report.revision}; depth {report.depth}; "
        f"{report.seconds:.1f} s",
    ]
    if against is not None:
        lines.append(" " * header.index("|") + f"| at {against['revision']}")
    lines += [header, "-" * len(header)]
    for folder, tally in data["folders"].items():
        before = against["folders"].get(folder) if against else None
        lines.append(row(folder, tally, before))
    lines.append("-" * len(header))
    lines.append(row("total", data["total"], against["total"] if against else None))
    total = report.total
    found_met = "met" if total.found > total.codeql_found else "not met"
    false_met = "met" if total.reached <= total.codeql_reached else "not met"
    lines.append(
        f"targets: flows found > CodeQL's {total.codeql_found} ({found_met}), "
        f"SINK_F lines reached <= CodeQL's {total.codeql_reached} ({false_met})"
    )
    lines += [f"error: {r.folder}/{r.name}: {r.error}" for r in report.results if r.error]
    return "\n".join(lines)


def misses_text(results: Iterable[Result], codeql: bool = True) -> str:
    """Each file's annotated flows not reached (-) and SINK_F lines reached (+); with CODEQL,
    `(CodeQL too)` marks a line where CodeQL answers as we do."""
    lines = []
    for result in results:
        missed, false = result.missed(), result.false()
        if not missed and not false and not result.error:
            continue
        lines.append(
            f"\n{result.folder}/{result.name}: {len(missed)} flows missed, "
            f"{len(false)} SINK_F lines reached"
            + (f"; error: {result.error}" if result.error else "")
        )
        for sign, found, agrees in (("-", missed, False), ("+", false, True)):
            for sink_line in found:
                same = codeql and sink_line.codeql_reaches == agrees
                marker = "  (CodeQL too)" if same else ""
                where = sink_line.function or "<module>"
                lines.append(f"  {sign} {sink_line.line:>4} {where}: {sink_line.code}{marker}")
    return "\n".join(lines)


def short_revision(rev: str) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=REPO_ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or rev


def code_revision() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


# -- command line ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(
        description="`sgtrace trace SOURCE --direction forward` scored against CodeQL's Python "
        "dataflow tests."
    )
    default = Path(os.environ.get(TESTS_VARIABLE) or DEFAULT_TESTS)
    cli.add_argument(
        "--tests",
        type=Path,
        default=default,
        help=f"the folder holding {', '.join(FOLDERS)} (default ${TESTS_VARIABLE}, else "
        f"{DEFAULT_TESTS})",
    )
    cli.add_argument("--folder", action="append", choices=FOLDERS, help="only this folder")
    cli.add_argument("--show-misses", action="store_true", help="flows missed, SINK_F reached")
    cli.add_argument("--json", type=Path, help="also write the report as JSON to this file")
    cli.add_argument("--against", metavar="REV", help="also score the tracer at git REV")
    cli.add_argument("--depth", type=int, default=DEPTH, help="--max-depth and --branch-depth")
    cli.add_argument(
        "--cases", action="store_true", help="also our own cases (tests/unit/dataflow_cases.py)"
    )
    args = cli.parse_args(argv)
    folders = args.folder or list(FOLDERS)
    missing = [f for f in folders if not (args.tests / f).is_dir()]
    if missing:
        cli.error(
            f"no {', '.join(missing)} folder in {args.tests}: copy github/codeql's "
            f"python/ql/test/library-tests/dataflow/FOLDER/*.py there, or name the folder "
            f"holding them with --tests or ${TESTS_VARIABLE}"
        )
    digest = files_digest(test_files(args.tests, FOLDERS))
    start = time.perf_counter()
    results = run_all(args.tests, folders, args.depth)
    seconds = time.perf_counter() - start
    against = run_against(args.against, args.tests, folders, args.depth) if args.against else None
    report = Report(results, seconds, code_revision(), str(args.tests), digest, args.depth, against)
    print(table_text(report))
    if args.show_misses:
        print(misses_text(results))
    if args.cases:
        cases = run_cases(args.depth)
        print(cases_text(cases))
        if args.show_misses:
            print(misses_text(cases, codeql=False))
    if args.json:
        args.json.write_text(json.dumps(report.as_json(), indent=2) + "\n")


if __name__ == "__main__":
    main()
