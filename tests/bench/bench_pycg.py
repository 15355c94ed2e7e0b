"""Benchmark: `sgtrace callgraph` scored against PyCG's micro-benchmark, per category.

Run from the repo root (the benchmark is downloaded once into the user cache, ~60 kB):

    python -m tests.bench.bench_pycg [--category NAME]... [--show-misses] [--json PATH]
    python -m tests.bench.bench_pycg --against REV     # beside the code at git revision REV

The benchmark is `micro-benchmark/snippets/` of the sdist of pycg 0.0.8, the only release of
PyCG whose sdist holds the snippets with their expected `callgraph.json` (0.0.4 to 0.0.7 carry
only the generated test files): 118 snippets in 18 categories, 262 expected edges. The archive
is fetched from the package index pip is configured with, checked against the SHA-256 pinned
below, and only regular files under `micro-benchmark/snippets/` are taken out of it, into
`CACHE/bench/pycg-0.0.8/` (the folder appears whole or not at all). Nothing of PyCG is run.

Each snippet folder (CATEGORY/NAME, with main.py and callgraph.json) is opened as a source and
its call graph computed in this process, `call_graph(open_session(folder))`, with fact and
stat caches in a temporary folder that lives as long as the run. Scoring follows PyCG's own
evaluation (pycg-evaluation's compare_macro_benchmark_cg.py), on edges: an edge is a pair
(caller, callee) of a graph's `{"caller": ["callee", ...]}`; a node without edges counts for
nothing. Per snippet, correct = expected & ours; summed over the snippets of a category (and
of all), precision = correct / ours and recall = correct / expected (micro-averaged: a snippet
weighs by its edges). A snippet is exact when its two sets of edges are equal (PyCG's own
tests compare whole dicts, nodes included; nodes are not scored here). A snippet whose expected
graph has no edge (6 in `imports`) is scored the same way: it adds nothing to recall, every
edge we report there counts against precision, and it is exact when we report none. A snippet
that cannot be read, indexed or scored is an error, listed by name: its expected edges (if its
callgraph.json reads) count as missed, and it is never exact.

One naming difference is undone before scoring: PyCG names modules from the folder it is given
(`--package`), sgtrace names a package folder's modules from its parent, so where a snippet
folder holds an `__init__.py` (3 in `imports`) the folder's name is taken off the front of our
names.

`--against REV` runs the same benchmark on the tracer at git revision REV (a copy of its
`tracer/` and `queries/`, in a new process) and prints its figures beside today's: the
figures the issue's targets are judged against. Targets: precision >= 0.99, recall >= 0.95
over all categories.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from tests.bench.revision import tracer_at

# Only these at the top: under --against this file runs on another revision's tracer; what
# fetches the benchmark is imported where it is used.
from tracer.analyses.callgraph import call_graph
from tracer.errors import SgtraceError
from tracer.session import open_session
from tracer.store.cache import FactCache

REPO_ROOT = Path(__file__).resolve().parents[2]
PYCG_VERSION = "0.0.8"
PYCG_SDIST_SHA256 = "644b4df4346b393ca29450223da12598a6e6ad51fcfb1c218330b774f643a6c1"
SNIPPETS = PurePosixPath("micro-benchmark", "snippets")  # inside the sdist's top folder
MAX_MEMBER_BYTES = 1 << 20  # the largest snippet file is under 2 kB
MAX_SNIPPETS_BYTES = 16 << 20
PRECISION_TARGET = 0.99
RECALL_TARGET = 0.95

Edge = tuple[str, str]


# -- scoring ---------------------------------------------------------------------------------


def edges_of(graph: Mapping[str, Iterable[str]]) -> frozenset[Edge]:
    """The (caller, callee) pairs of a graph in PyCG's format."""
    return frozenset((caller, callee) for caller, callees in graph.items() for callee in callees)


@dataclass(frozen=True, slots=True)
class Score:
    """One snippet's expected edges and ours."""

    expected: frozenset[Edge]
    ours: frozenset[Edge]

    @property
    def correct(self) -> frozenset[Edge]:
        return self.expected & self.ours

    @property
    def missing(self) -> frozenset[Edge]:
        return self.expected - self.ours

    @property
    def extra(self) -> frozenset[Edge]:
        return self.ours - self.expected

    @property
    def exact(self) -> bool:
        return self.expected == self.ours


def score(expected: Mapping[str, Iterable[str]], ours: Mapping[str, Iterable[str]]) -> Score:
    return Score(edges_of(expected), edges_of(ours))


@dataclass(frozen=True, slots=True)
class Result:
    """One snippet: its score, or why there is none (ERROR); EXPECTED is what it should find
    (kept for an error too, so its edges count as missed)."""

    category: str
    name: str
    expected: frozenset[Edge]
    score: Score | None = None
    error: str = ""
    warnings: tuple[str, ...] = ()


@dataclass
class Tally:
    """Results summed over snippets: a category, or all of them."""

    snippets: int = 0
    exact: int = 0
    errors: int = 0
    expected: int = 0
    ours: int = 0
    correct: int = 0

    def add(self, result: Result) -> None:
        self.snippets += 1
        self.expected += len(result.expected)
        if result.score is None:
            self.errors += 1
            return
        self.exact += result.score.exact
        self.ours += len(result.score.ours)
        self.correct += len(result.score.correct)

    @property
    def precision(self) -> float | None:
        """correct / ours; None when we report no edge (nothing to be right or wrong about)."""
        return self.correct / self.ours if self.ours else None

    @property
    def recall(self) -> float | None:
        """correct / expected; None when no edge is expected."""
        return self.correct / self.expected if self.expected else None

    def as_json(self) -> dict[str, Any]:
        figures = {"precision": self.precision, "recall": self.recall}
        return {**self.__dict__, **figures}


def tallies(results: Iterable[Result]) -> tuple[dict[str, Tally], Tally]:
    """The tally of each category, and of all."""
    by_category: dict[str, Tally] = {}
    total = Tally()
    for result in results:
        by_category.setdefault(result.category, Tally()).add(result)
        total.add(result)
    return by_category, total


# -- the benchmark's files -------------------------------------------------------------------


def benchmark_folder() -> Path:
    """PyCG's snippets in the user cache, downloaded and taken out of the sdist on first use."""
    from tracer.sources.cache import cache_root

    home = cache_root() / "bench" / f"pycg-{PYCG_VERSION}"
    if not (home / ".complete").exists():
        home.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=home.parent, prefix=f".partial-{home.name}."))
        try:
            archive = download_sdist(work)
            extract_snippets(archive, work / "out" / "snippets")
            (work / "out" / ".complete").write_text(archive.name + "\n")
            if home.exists():  # a copy left without .complete: nobody reads it
                shutil.rmtree(home)
            try:
                (work / "out").rename(home)
            except OSError:
                if not (home / ".complete").exists():  # not another run's whole copy
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return home / "snippets"


def download_sdist(work: Path) -> Path:
    """pycg's sdist from the configured index into WORK, its hash checked on the way."""
    from tracer.errors import VersionNotFound
    from tracer.sources.pypi_config import index_settings
    from tracer.sources.pypi_http import IndexClient
    from tracer.sources.pypi_index import listed, local_url, version_key

    client = IndexClient(index_settings())
    files = []
    for index in client.settings.index_urls:
        url = index if "://" in index else local_url(index)
        files += listed(client, url.rstrip("/") + "/pycg/", False, "pycg")
    wanted = version_key(PYCG_VERSION)
    sdists = [f for f in files if f.kind == "sdist" and version_key(f.version) == wanted]
    if not sdists:
        raise VersionNotFound(
            f"pycg=={PYCG_VERSION}'s sdist is not on the package index",
            "check pip's index settings (pip config list)",
        )
    chosen = sdists[0]
    archive = work / chosen.filename
    # The pinned hash, not the index's: the figures are for these exact bytes.
    client.download(chosen.url, chosen.page, archive, ("sha256", PYCG_SDIST_SHA256))
    return archive


def extract_snippets(archive: Path, target: Path) -> int:
    """The regular files under the sdist's micro-benchmark/snippets/ into TARGET; how many.
    A member that would leave TARGET, or too large, is an UnsafeArchive."""
    from tracer.errors import UnsafeArchive
    from tracer.sources.pypi_unpack import safe_member

    kept = total = 0
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            path = safe_member(member.name, archive.name)
            inside = PurePosixPath(*path.parts[1:])  # without the top folder, pycg-0.0.8/
            if not member.isfile() or not inside.parent.is_relative_to(SNIPPETS):
                continue
            total += member.size
            if member.size > MAX_MEMBER_BYTES or total > MAX_SNIPPETS_BYTES:
                raise UnsafeArchive(
                    f"{archive.name}: {member.name} is too large", "nothing of it was kept"
                )
            source = tar.extractfile(member)
            assert source is not None  # a regular file's
            dest = target.joinpath(*inside.relative_to(SNIPPETS).parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            with source, dest.open("xb") as out:
                out.write(source.read(MAX_MEMBER_BYTES))
            kept += 1
    return kept


def snippet_folders(root: Path, categories: list[str] | None) -> list[tuple[str, Path]]:
    """(category, folder) of every snippet under ROOT, in order; only CATEGORIES if given."""
    found = []
    for category in sorted(p for p in root.iterdir() if p.is_dir()):
        if categories and category.name not in categories:
            continue
        found += [(category.name, p) for p in sorted(category.iterdir()) if p.is_dir()]
    return found


# -- running ---------------------------------------------------------------------------------


def run_snippet(category: str, folder: Path, cache: FactCache) -> Result:
    """FOLDER's call graph scored against its callgraph.json."""
    try:
        expected = json.loads((folder / "callgraph.json").read_text())
    except (OSError, ValueError) as error:
        return Result(category, folder.name, frozenset(), error=f"callgraph.json: {error}")
    expected_edges = edges_of(expected)
    if not (folder / "main.py").is_file():
        return Result(category, folder.name, expected_edges, error="no main.py")
    try:
        session = open_session(str(folder), cache=cache)
        ours = pycg_names(call_graph(session), folder)
        warnings = tuple(session.warnings())
    except Exception as error:  # one snippet's crash is a finding, not the end of the run
        return Result(category, folder.name, expected_edges, error=crash_line(error))
    return Result(category, folder.name, expected_edges, score(expected, ours), warnings=warnings)


def crash_line(error: Exception) -> str:
    """ERROR as one line: its type and the first line of its message."""
    lines = str(error).splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def pycg_names(graph: dict[str, list[str]], folder: Path) -> dict[str, list[str]]:
    """GRAPH named as PyCG names it given FOLDER as its package: where FOLDER is itself a
    package, sgtrace's names start with its name, PyCG's do not. Two of our names may become
    one (`pkg.nested.f`, and `nested.f` imported absolutely, which sgtrace takes for another
    tree's): their callees are merged."""
    if not (folder / "__init__.py").is_file():
        return graph
    prefix = folder.name + "."
    renamed: dict[str, set[str]] = {}
    for caller, callees in graph.items():
        found = renamed.setdefault(caller.removeprefix(prefix), set())
        found.update(callee.removeprefix(prefix) for callee in callees)
    return {caller: sorted(callees) for caller, callees in renamed.items()}


def run_all(root: Path, categories: list[str] | None) -> list[Result]:
    """Every snippet under ROOT, with fact and stat caches that live as long as the run."""
    folders = snippet_folders(root, categories)
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-pycg-") as tmp:
        before = os.environ.get("SGTRACE_CACHE")
        os.environ["SGTRACE_CACHE"] = tmp  # the stat cache of each snippet folder goes here
        try:
            cache = FactCache(Path(tmp))
            return [run_snippet(category, folder, cache) for category, folder in folders]
        finally:
            if before is None:
                del os.environ["SGTRACE_CACHE"]
            else:
                os.environ["SGTRACE_CACHE"] = before


def run_against(rev: str, root: Path, categories: list[str] | None) -> dict[str, Any]:
    """The report of this benchmark run on the tracer at git revision REV, in a new process."""
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-pycg-against-") as tmp:
        code = tracer_at(rev, Path(tmp), Path(__file__))
        out = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "tests.bench.bench_pycg", "--snippets", str(root)]
        command += ["--json", str(out)]
        for category in categories or ():
            command += ["--category", category]
        done = subprocess.run(command, cwd=code, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the benchmark at {rev} failed:\n{done.stderr.strip()}")
        report = json.loads(out.read_text())
        if not report["engine"].startswith(str(code.resolve())):
            sys.exit(f"the benchmark at {rev} ran the tracer in {report['engine']}, not its copy")
    return {**report, "revision": short_revision(rev)}


# -- the report ------------------------------------------------------------------------------


@dataclass
class Report:
    results: list[Result]
    seconds: float
    revision: str
    source: str  # where the snippets came from
    against: dict[str, Any] | None = None  # the report at --against REV, as its JSON
    by_category: dict[str, Tally] = field(init=False)
    total: Tally = field(init=False)

    def __post_init__(self) -> None:
        self.by_category, self.total = tallies(self.results)

    def as_json(self) -> dict[str, Any]:
        import tracer

        return {
            "benchmark": self.source,
            "revision": self.revision,
            "engine": str(Path(tracer.__file__).resolve().parent),
            "seconds": round(self.seconds, 2),
            "targets": {"precision": PRECISION_TARGET, "recall": RECALL_TARGET},
            "categories": {c: t.as_json() for c, t in self.by_category.items()},
            "total": self.total.as_json(),
            "snippets": [result_json(r) for r in self.results],
            "against": self.against,
        }


def result_json(result: Result) -> dict[str, Any]:
    found: dict[str, Any] = {"category": result.category, "name": result.name}
    if result.score is None:
        return {**found, "error": result.error, "missing": sorted(result.expected)}
    return {
        **found,
        "exact": result.score.exact,
        "expected": len(result.score.expected),
        "ours": len(result.score.ours),
        "correct": len(result.score.correct),
        "missing": sorted(result.score.missing),
        "extra": sorted(result.score.extra),
        "warnings": list(result.warnings),
    }


COLUMNS = ("snippets", "exact", "errors", "precision", "recall", "expected", "ours", "correct")
BEFORE = ("exact", "precision", "recall")


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def row(label: str, tally: Mapping[str, Any], before: Mapping[str, Any] | None) -> str:
    cells = [
        f"{tally['snippets']:>8}",
        f"{tally['exact']:>5}",
        f"{tally['errors']:>6}",
        f"{ratio(tally['precision']):>9}",
        f"{ratio(tally['recall']):>7}",
        f"{tally['expected']:>8}",
        f"{tally['ours']:>5}",
        f"{tally['correct']:>7}",
    ]
    line = f"{label:<14}" + "  ".join(cells)
    if before is not None:
        was = [f"{before['exact']:>5}", f"{ratio(before['precision']):>9}"]
        line += "   |" + "  ".join([*was, f"{ratio(before['recall']):>7}"])
    return line


def table_text(report: Report) -> str:
    data = report.as_json()
    against = report.against
    header = f"{'category':<14}{'snippets':>8}  {'exact':>5}  {'errors':>6}  {'precision':>9}"
    header += f"  {'recall':>7}  {'expected':>8}  {'ours':>5}  {'correct':>7}"
    if against is not None:
        header += f"   |{'exact':>5}  {'precision':>9}  {'recall':>7}"
    lines = [
        f"PyCG's micro-benchmark ({report.source}): {report.total.snippets} "
        f"snippets; code {report.revision}; {report.seconds:.1f} s",
    ]
    if against is not None:
        lines.append(" " * header.index("|") + f"| at {against['revision']}")
    lines += [header, "-" * len(header)]
    for category, tally in data["categories"].items():
        before = against["categories"].get(category) if against else None
        lines.append(row(category, tally, before))
    lines.append("-" * len(header))
    lines.append(row("total", data["total"], against["total"] if against else None))
    precision, recall = report.total.precision, report.total.recall
    lines.append(
        f"targets: precision >= {PRECISION_TARGET} ({verdict(precision, PRECISION_TARGET)}), "
        f"recall >= {RECALL_TARGET} ({verdict(recall, RECALL_TARGET)})"
    )
    errors = [r for r in report.results if r.score is None]
    lines += [f"error: {r.category}/{r.name}: {r.error}" for r in errors]
    return "\n".join(lines)


def verdict(value: float | None, target: float) -> str:
    return "met" if value is not None and value >= target else "not met"


def misses_text(results: Iterable[Result]) -> str:
    """Each snippet that is not exact: its missing (-) and extra (+) edges."""
    lines = []
    for result in results:
        if result.score is None:
            lines.append(f"\n{result.category}/{result.name}: error: {result.error}")
            continue
        found = result.score
        if found.exact:
            continue
        lines.append(
            f"\n{result.category}/{result.name}: {len(found.correct)} of {len(found.expected)} "
            f"found, {len(found.extra)} extra"
        )
        lines += [f"  - {caller} -> {callee}" for caller, callee in sorted(found.missing)]
        lines += [f"  + {caller} -> {callee}" for caller, callee in sorted(found.extra)]
        lines += [f"  warning: {w}" for w in result.warnings]
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
        description="`sgtrace callgraph` scored against PyCG's micro-benchmark, per category."
    )
    cli.add_argument("--category", action="append", help="only this category (repeatable)")
    cli.add_argument("--show-misses", action="store_true", help="missing and extra edges")
    cli.add_argument("--json", type=Path, help="also write the report as JSON to this file")
    cli.add_argument("--against", metavar="REV", help="also score the tracer at git REV")
    cli.add_argument("--snippets", type=Path, help="the snippets folder (default: downloaded)")
    args = cli.parse_args(argv)
    try:
        root = args.snippets or benchmark_folder()
    except SgtraceError as error:
        sys.exit(f"sgtrace: {error.message}" + (f" ({error.hint})" if error.hint else ""))
    if args.category:
        unknown = set(args.category) - {p.name for p in root.iterdir() if p.is_dir()}
        if unknown:
            cli.error(f"no such category: {', '.join(sorted(unknown))}")
    start = time.perf_counter()
    results = run_all(root, args.category)
    seconds = time.perf_counter() - start
    against = run_against(args.against, root, args.category) if args.against else None
    source = str(args.snippets) if args.snippets else f"pycg {PYCG_VERSION}'s sdist"
    report = Report(results, seconds, code_revision(), source, against)
    print(table_text(report))
    if args.show_misses:
        print(misses_text(results))
    if args.json:
        args.json.write_text(json.dumps(report.as_json(), indent=2) + "\n")


if __name__ == "__main__":
    main()
