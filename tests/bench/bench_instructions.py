"""Benchmark: instructions of one first trace on a warm cache, counted by callgrind.

    python -m tests.bench.bench_instructions [--version 0.5.23] [--name mem_fraction_static]
                                             [--against REV ...]

Wall time on a shared 2-core machine drifts by half from one minute to the next; instruction
counts of the same work repeat within about 0.1%. Each tracer (this checkout, and the code at
each git revision REV, copied with `git archive`) indexes the release on its own cache (under
the user cache's `bench-instructions/`, kept between runs: the first run of a revision fills it)
and then, in a process run under `valgrind --tool=callgrind --instr-atstart=no`, traces NAME with
the presets' sinks, the cyclic collector off; only the trace is counted (a three-line library
built here with the C compiler and valgrind's `callgrind.h` switches counting on and off
around it). Needs valgrind and a C compiler (`apt-get install valgrind gcc`).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bench.revision import tracer_at

REPO_ROOT = Path(__file__).resolve().parents[2]
TOGGLE = """#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("trace"); }
"""


def work_root() -> Path:
    from tracer.sources.cache import cache_root

    return cache_root() / "bench-instructions"


def toggle_library() -> Path:
    """The library that switches callgrind's counting, built once into the work folder."""
    library = work_root() / "toggle.so"
    if not library.exists():
        library.parent.mkdir(parents=True, exist_ok=True)
        source = library.with_suffix(".c")
        source.write_text(TOGGLE)
        built = library.with_suffix(".tmp")
        command = ["cc", "-shared", "-fPIC", "-o", str(built), str(source)]
        subprocess.run(command, check=True)
        built.replace(library)
    return library


def child(version: str, name: str, cache: Path, library: Path) -> None:
    """In the process callgrind runs: index on CACHE, then count the trace alone."""
    import ctypes
    import gc

    from tracer.cli.presets import SINKS
    from tracer.session import index_snapshot
    from tracer.sources import open_source
    from tracer.store.cache import FactCache
    from tracer.trace.chains import trace

    toggle = ctypes.CDLL(str(library))
    session = index_snapshot(open_source(f"pypi:sglang=={version}"), FactCache(cache))
    gc.disable()
    toggle.start()
    chain = trace(session.graph, name, sinks=SINKS)
    toggle.stop()
    print(f"{len(chain.steps)} steps, spine of {len(chain.spine)}")


def count(code: Path, label: str, version: str, name: str) -> tuple[int, str]:
    """Instructions of the first trace by the tracer in CODE (warm cache), and its summary."""
    cache = work_root() / f"cache-{label}-{version}"
    library = toggle_library()
    module = ["-m", "tests.bench.bench_instructions", "--child", "--version", version]
    module += ["--name", name, "--cache", str(cache), "--library", str(library)]
    # A first run fills the cache (index and the flows the trace reads), uncounted.
    subprocess.run([sys.executable, *module], cwd=code, check=True, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-instructions-") as tmp:
        out = Path(tmp) / "callgrind.%p"
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        valgrind.append(f"--callgrind-out-file={out}")
        done = subprocess.run(
            [*valgrind, sys.executable, *module], cwd=code, capture_output=True, text=True
        )
        if done.returncode != 0:
            sys.exit(f"the trace under callgrind failed ({label}):\n{done.stderr.strip()[-2000:]}")
        totals = [
            int(line.split()[1])
            for path in Path(tmp).glob("callgrind.*")
            for line in path.read_text().splitlines()
            if line.startswith("totals:")
        ]
    return max(totals, default=0), done.stdout.strip()


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--version", default="0.5.23", help="SGLang release (default 0.5.23)")
    cli.add_argument("--name", default="mem_fraction_static", help="the name traced")
    cli.add_argument("--against", action="append", default=[], metavar="REV")
    cli.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    cli.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    cli.add_argument("--library", type=Path, help=argparse.SUPPRESS)
    args = cli.parse_args()
    if args.child:
        child(args.version, args.name, args.cache, args.library)
        return
    for tool in ("valgrind", "cc"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed: apt-get install valgrind gcc")
    here = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True
    ).stdout.strip()
    rows = [(f"{here} (this checkout)", *count(REPO_ROOT, "here", args.version, args.name))]
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-instructions-code-") as tmp:
        for rev in args.against:
            code = tracer_at(rev, Path(tmp) / rev, Path(__file__))
            rows.append((rev, *count(code, rev, args.version, args.name)))
    base = rows[-1][1] if args.against else rows[0][1]
    print(f"first trace of {args.name}, sglang {args.version}, warm cache: instructions")
    for label, total, summary in rows:
        ratio = total / base if base else 0.0
        print(f"  {label:<28} {total / 1e9:7.3f} G  {ratio:5.2f}x  ({summary})")


if __name__ == "__main__":
    main()
