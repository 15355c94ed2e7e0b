"""Benchmark: index and trace one SGLang release, side by side with tree-sitter parsing alone.

Run from the repo root (the release is fetched once into the user cache, ~40 MB):

    python -m tests.bench.bench_index [--version 0.5.23] [--repeat N] [--json PATH]
    python -m tests.bench.bench_index --profile    # cProfile of warm index and first trace

Each phase runs in its own fresh process (`tests.bench.phases`), so neither time nor peak
memory carries over from one phase to the next. The processes run a copy of `tracer/` and
`queries/` taken at the start: a run takes minutes, and an edit made meanwhile (a new
extractor version) would otherwise empty the cache between phases. Every process first
opens the snapshot (walk the tree, hash every file); that is untimed in the phases and
reported on its own row, `open snapshot`, because a user's run pays it too.

  (a) parse       tree-sitter alone: every .py file read into memory, then only
                  `tracer.extract.parse.parser().parse(data)` timed for each. The baseline.
  (b) cold        `index_snapshot(snapshot, FactCache(empty dir))`: parse every file, extract
                  its summary, write the cache. (a) and (b) alternate in one run.
  (c) warm        the same call on the cache (b) filled, in a new process.
  (d) trace       a new process on that cache loads the index (as in (c)), then on the one
                  session: `trace(graph, "mem_fraction_static", sinks=SINKS)` (first query;
                  the files it reaches come from the fact cache), `max_total_num_tokens`
                  backward (second query), and the first query again (all edges expanded).
                  Before these, one run on a cache without flows fills them; its first
                  query is the row `first trace, flows not cached` (no target).

Seconds are the median of --repeat runs (default 1; --trace-repeat for (d), default 3); peak RSS
is `ru_maxrss`, the largest over the runs. Targets from the issue: cold index at most 2x
parse alone, warm index under 1.5 s, a trace under 0.2 s, peak memory under 1.5 GB. The
machines are noisy: read the ratio column before the seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracer.sources import open_source

REPO_ROOT = Path(__file__).resolve().parents[2]
MEMORY_TARGET_MB = 1.5 * 1024
TRACE_TARGET_S = 0.2
WARM_TARGET_S = 1.5
COLD_TARGET_RATIO = 2.0


@dataclass(frozen=True, slots=True)
class Row:
    key: str
    label: str
    target: str = ""
    # (median seconds, ratio to parse alone) -> is the time target met?
    meets: Callable[[float, float], bool] | None = None


def under_seconds(limit: float) -> Callable[[float, float], bool]:
    return lambda seconds, _ratio: seconds < limit


ROWS: tuple[Row, ...] = (
    Row("parse", "(a) tree-sitter parse alone"),
    Row("open", "    open snapshot (walk + hash)"),
    Row(
        "cold",
        "(b) cold index",
        f"<= {COLD_TARGET_RATIO:g}x (a)",
        lambda _s, ratio: ratio <= COLD_TARGET_RATIO,
    ),
    Row("warm", "(c) warm index", f"< {WARM_TARGET_S:g} s", under_seconds(WARM_TARGET_S)),
    Row("trace_load", "    warm index, trace process"),
    Row("trace_uncached", "    first trace, flows not cached"),
    Row("trace_first", "(d) first trace, warm cache", f"< {TRACE_TARGET_S:g} s",
        under_seconds(TRACE_TARGET_S)),
    Row("trace_second", "(d) second trace (backward)", f"< {TRACE_TARGET_S:g} s",
        under_seconds(TRACE_TARGET_S)),
    Row("trace_again", "(d) first trace again", f"< {TRACE_TARGET_S:g} s",
        under_seconds(TRACE_TARGET_S)),
)  # fmt: skip


@dataclass
class Samples:
    """Every run's seconds and peak RSS for one row."""

    seconds: list[float] = field(default_factory=list)
    peak_rss_mb: list[float] = field(default_factory=list)

    def add(self, measured: dict[str, float]) -> None:
        self.seconds.append(measured["seconds"])
        self.peak_rss_mb.append(measured["peak_rss_mb"])

    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class Results:
    version: str
    revision: str  # of the code measured, `git describe --always --dirty`
    samples: dict[str, Samples] = field(default_factory=dict)
    info: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # phase -> per run

    def add(self, phase: str, output: dict[str, Any], rename: dict[str, str] | None = None) -> None:
        for row, measured in output["rows"].items():
            key = (rename or {}).get(row, row)
            self.samples.setdefault(key, Samples()).add(measured)
        self.info.setdefault(phase, []).append(output["info"])

    def warnings(self) -> list[str]:
        """Runs that did not measure what they claim: a warm run that parsed, mixed code."""
        found = []
        for phase in ("warm", "trace"):
            for run, info in enumerate(self.info.get(phase, ()), 1):
                parsed = info.get("files_parsed", info["parsed_files"])
                if parsed:
                    found.append(f"{phase} run {run} parsed {parsed} files: the cache missed")
        versions = {
            tuple(sorted(info["versions"].items())) for runs in self.info.values() for info in runs
        }
        if len(versions) > 1:
            found.append("phases ran with different versions of the cached kinds")
        return found


# -- running phases --------------------------------------------------------------------------


def pin_code(work: Path) -> Path:
    """A copy of the tracer, its queries and the phase runner, as they are now."""
    code = work / "code"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO_ROOT / "tracer", code / "tracer", ignore=skip)
    # Installed, `queries/` is the package `tracer.queries`; in the copy it sits in place.
    shutil.copytree(REPO_ROOT / "queries", code / "tracer" / "queries", ignore=skip)
    bench = code / "tests" / "bench"
    bench.mkdir(parents=True)
    (code / "tests" / "__init__.py").touch()
    (bench / "__init__.py").touch()
    shutil.copy2(Path(__file__).with_name("phases.py"), bench / "phases.py")
    return code


def code_revision() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def run_phase(
    phase: str, version: str, work: Path, profile_out: Path | None = None
) -> dict[str, Any]:
    """Run one phase in a fresh interpreter on the code pinned under WORK, with the fact
    cache `WORK/cache`; its JSON report."""
    command = [sys.executable, "-m", "tests.bench.phases", phase]
    command += ["--version", version, "--cache", str(work / "cache")]
    if profile_out is not None:
        command += ["--profile-out", str(profile_out)]
    done = subprocess.run(command, cwd=work / "code", capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"phase {phase} failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout)


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure(version: str, repeat: int, trace_repeat: int, work: Path) -> Results:
    """All phases: (a) and (b) alternating, then (c), then (d) on the cache (b) filled."""
    results = Results(version, code_revision())
    cache = work / "cache"
    for run in range(repeat):
        say(f"run {run + 1}/{repeat}: parse alone, cold index")
        results.add("parse", run_phase("parse", version, work))
        if cache.exists():
            shutil.rmtree(cache)
        results.add("cold", run_phase("cold", version, work))
    for run in range(repeat):
        say(f"run {run + 1}/{repeat}: warm index")
        results.add("warm", run_phase("warm", version, work))
    say("trace, flows not cached yet")
    results.add("trace_uncached", run_phase("trace", version, work), {
        "trace_first": "trace_uncached",
        "trace_second": "trace_second_uncached",
        "trace_again": "trace_again_uncached",
        "trace_load": "trace_load_uncached",
    })  # fmt: skip
    for run in range(trace_repeat):
        say(f"run {run + 1}/{trace_repeat}: trace, warm cache")
        results.add("trace", run_phase("trace", version, work))
    return results


# -- reporting -------------------------------------------------------------------------------


def verdict(row: Row, seconds: float, ratio: float, peak_mb: float) -> str:
    problems = []
    if row.meets is not None and not row.meets(seconds, ratio):
        problems.append("time")
    if peak_mb >= MEMORY_TARGET_MB:
        problems.append("memory")
    if problems:
        return "NO: " + ", ".join(problems)
    return "yes" if row.meets is not None else "mem ok"


def summary(results: Results) -> dict[str, dict[str, Any]]:
    """Per row, in table order: median seconds, ratio to (a), peak RSS, target, verdict."""
    baseline = results.samples["parse"].median()
    table: dict[str, dict[str, Any]] = {}
    for row in ROWS:
        samples = results.samples.get(row.key)
        if samples is None:
            continue
        seconds = samples.median()
        ratio = seconds / baseline
        peak = max(samples.peak_rss_mb)
        table[row.key] = {
            "label": row.label.strip(),
            "seconds": seconds,
            "runs": samples.seconds,
            "ratio_to_parse": ratio,
            "peak_rss_mb": peak,
            "target": row.target,
            "met": verdict(row, seconds, ratio, peak),
        }
    return table


def table_text(results: Results, table: dict[str, dict[str, Any]]) -> str:
    parse = results.info["parse"][0]
    header = (
        f"sglang {results.version}: {parse['files']} files, {parse['bytes'] / 1e6:.1f} MB; "
        f"code {results.revision}; python {platform.python_version()}; "
        f"targets: time as shown, peak RSS < {MEMORY_TARGET_MB / 1024:g} GB"
    )
    lines = [header, ""]
    columns = f"{'phase':<36} {'seconds':>8} {'x (a)':>7} {'peak RSS MB':>12}  {'target':<12} met"
    lines += [columns, "-" * len(columns)]
    labels = {row.key: row.label for row in ROWS}
    for key, values in table.items():
        lines.append(
            f"{labels[key]:<36} {values['seconds']:>8.3f} {values['ratio_to_parse']:>7.3f} "
            f"{values['peak_rss_mb']:>12.0f}  {values['target']:<12} {values['met']}"
        )
    start = parse["start_rss_mb"]
    lines += ["", f"RSS of a phase process after imports, before any work: {start:.0f} MB"]
    cold = results.info["cold"][0]
    lines.append(f"cold index parsed {cold['parsed_files']} files")
    if cold.get("workers", 1) > 1:
        lines[-1] += (
            f" in {cold['workers']} worker processes besides its own, each at most "
            f"{cold['worker_peak_rss_mb']:.0f} MB (not in its peak RSS above)"
        )
    trace = results.info["trace"][0]
    lines.append(
        f"first trace: {trace['first_steps']} steps, spine of {trace['first_spine']}; it built "
        f"{trace.get('units_built_first', '?')} units (functions, class bodies, module code) "
        f"in {trace['files_reached_first']} files and read the flows of "
        f"{trace.get('flows_loaded_first', '?')}; both queries reached "
        f"{trace['files_reached_both']} files; {trace['files_grepped']} files read for greps"
    )
    lines += [f"WARNING: {warning}" for warning in results.warnings()]
    return "\n".join(lines)


def write_json(path: Path, results: Results, table: dict[str, dict[str, Any]]) -> None:
    report = {
        "version": results.version,
        "revision": results.revision,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "targets": {
            "cold_ratio_max": COLD_TARGET_RATIO,
            "warm_seconds_max": WARM_TARGET_S,
            "trace_seconds_max": TRACE_TARGET_S,
            "peak_rss_mb_max": MEMORY_TARGET_MB,
        },
        "rows": table,
        "info": results.info,
        "warnings": results.warnings(),
    }
    path.write_text(json.dumps(report, indent=2) + "\n")


# -- profiling -------------------------------------------------------------------------------


def profile(version: str, top: int, work: Path) -> None:
    """Fill the summary and flows caches unprofiled, then cProfile the warm index and the
    first trace (warm cache) in fresh processes; print the top functions of each."""
    print(f"sglang {version}, code {code_revision()}")
    say("filling the caches (cold index, one trace)")
    run_phase("cold", version, work)
    run_phase("trace", version, work)
    for phase, what in (("warm", "warm index"), ("trace", "first trace, warm cache")):
        out = work / f"{phase}.prof"
        say(f"profiling {what}")
        run_phase(phase, version, work, profile_out=out)
        for order in ("cumulative", "tottime"):
            print(f"\n=== {what}: top {top} by {order} ===", flush=True)
            pstats.Stats(str(out), stream=sys.stdout).sort_stats(order).print_stats(top)


# -- command line ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(
        description="Time and memory of indexing and tracing one SGLang release."
    )
    cli.add_argument("--version", default="0.5.23", help="SGLang release (default 0.5.23)")
    cli.add_argument("--repeat", type=int, default=1, help="runs of (a), (b), (c) (default 1)")
    cli.add_argument("--trace-repeat", type=int, default=3, help="runs of (d) (default 3)")
    cli.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    cli.add_argument("--profile", action="store_true", help="cProfile (c) and (d) instead")
    cli.add_argument("--top", type=int, default=10, help="functions shown per profile")
    args = cli.parse_args(argv)
    say(f"fetching sglang {args.version} into the user cache if needed")
    open_source(f"pypi:sglang=={args.version}")
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-") as tmp:
        pin_code(Path(tmp))
        if args.profile:
            profile(args.version, args.top, Path(tmp))
            return
        results = measure(args.version, args.repeat, args.trace_repeat, Path(tmp))
    table = summary(results)
    print(table_text(results, table))
    if args.json:
        write_json(args.json, results, table)


if __name__ == "__main__":
    main()
