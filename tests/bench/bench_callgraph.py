"""Benchmark: `sgtrace callgraph` on a release, its wall time and peak memory, this checkout
beside the code at git revisions, runs alternating, one output checked.

    python -m tests.bench.bench_callgraph [--source pypi:sglang==0.5.23] [--against REV ...]
                                          [--repeat 2]

Each run is a new process (`python -m tracer.cli callgraph SOURCE --json --quiet`; each tracer
runs once untimed first, which downloads and indexes the source on the user cache: the timed
runs are warm);
its peak resident memory is its own (`os.wait4`). Every tracer's output must be byte-identical
to this checkout's: a change of memory or speed must not change the graph. The code at REV is
copied with `git archive` (tests/bench/revision.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.revision import tracer_at

REPO_ROOT = Path(__file__).resolve().parents[2]


def run(code: Path, source: str) -> tuple[float, float, str]:
    """One `sgtrace callgraph SOURCE` run with the tracer in CODE: seconds, peak MB, and the
    hash of its output."""
    command = [sys.executable, "-m", "tracer.cli", "callgraph", source, "--json", "--quiet"]
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=code, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        error = process.stderr.read().decode() if process.stderr else ""
        if process.returncode:
            raise SystemExit(f"bench_callgraph: {code}: exit {process.returncode}: {error}")
        out.seek(0)
        digest = hashlib.sha256(out.read()).hexdigest()[:16]
    return seconds, usage.ru_maxrss / 1024, digest


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    cli.add_argument("--source", default="pypi:sglang==0.5.23", help="the tree (a release)")
    cli.add_argument("--against", nargs="*", default=[], help="git revisions to compare")
    cli.add_argument("--repeat", type=int, default=2, help="runs of each tracer (default 2)")
    args = cli.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        codes = {"this checkout": REPO_ROOT}
        for rev in args.against:
            codes[rev] = tracer_at(rev, Path(tmp) / rev, Path(__file__))
        for label, code in codes.items():  # untimed: downloads, indexes, keeps the greps
            print(f"{label}: warming up", flush=True)
            run(code, args.source)
        results: dict[str, list[tuple[float, float, str]]] = {label: [] for label in codes}
        for _ in range(args.repeat):
            for label, code in codes.items():  # alternating: the machine's drift is shared
                results[label].append(run(code, args.source))
                seconds, peak, digest = results[label][-1]
                print(f"{label}: {seconds:.1f} s, {peak:.0f} MB, output {digest}", flush=True)
    mine = results["this checkout"]
    print(f"\n`sgtrace callgraph {args.source}`, {args.repeat} runs each (best, worst):")
    for label, runs in results.items():
        times = sorted(r[0] for r in runs)
        peaks = sorted(r[1] for r in runs)
        same = {r[2] for r in runs} == {mine[0][2]}
        print(
            f"  {label}: {times[0]:.1f}-{times[-1]:.1f} s, {peaks[0]:.0f}-{peaks[-1]:.0f} MB peak"
            f"{'' if same else ', OUTPUT DIFFERS'}"
        )
    for label, runs in results.items():
        if label != "this checkout":
            time_ratio = min(r[0] for r in mine) / min(r[0] for r in runs)
            peak_ratio = min(r[1] for r in mine) / min(r[1] for r in runs)
            print(f"  this checkout / {label}: time {time_ratio:.2f}x, peak {peak_ratio:.2f}x")


if __name__ == "__main__":
    main()
