"""Benchmark: `sgtrace explain` of a long log, its time and peak memory by the log's length.

Run from the repo root (the release is fetched and indexed once into the user cache):

    python -m tests.bench.bench_log [--log NAME] [--version V] [--against REV]
                                    [--against-up-to LINES] [--timeout S] [--memory GB]
                                    [--quick] [--json PATH]

The logs are built here from a real startup log, NAME in the folder of real logs
(tests/integration/logbuild.py's REAL_LOGS; read there, never copied into the project), in
two shapes, each to 10^5 lines, to 10^6 lines and to 256 MB (the cap of a log read from its
end, tracer/cli/logs.py):

  restarts   NAME again and again, each copy's numbers of three digits or more shifted: a
             server started again and again, each copy a start of its own.
  at work    NAME once, then the server at work: NAME's lines that the release prints
             and that begin no start, in turn, their numbers changing, between the HTTP
             server's access lines.

Each log is explained as a user runs it, its release given: `sgtrace explain
pypi:sglang==V --log LOG --quiet`, in a process of its own (`python -c`, the tracer imported
from the folder it runs in: a copy of this checkout's made at the start). Runs on NAME itself
and on 10^3 lines of each shape come first, untimed, so that no row pays for fetching and
indexing the release or reading its logging calls. Seconds are wall time; peak RSS is the
process's ru_maxrss (os.wait4). `--against REV` runs the same, beside, on the tracer at git
revision REV (a copy made by tests/bench/revision.py) for logs of up to LINES lines (default
10^6: at ea669ac a 256 MB log takes many minutes and several GB); a run is stopped after
--timeout seconds (default 900) or when it asks for more than --memory GB of address space
(default 3), and shown as such.

Targets (issue 26): a 256 MB log in under a minute, and the same peak memory whatever the
length (tests/unit/test_hostile_logs.py asserts the latter on a log of 10^5 and 10^6 lines).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.bench.revision import REPO_ROOT, tracer_at
from tests.integration.logbuild import REAL_LOGS

DEFAULT_LOG = "sglang-0.4.3.post4-qwq32b-4xL4-tp4.log"
DEFAULT_VERSION = "0.4.3.post4"
MAX_LOG_BYTES = 256 << 20
ENTRY = "from tracer.cli.main import entry; entry()"
SIZES = (("1e5 lines", 10**5, 0), ("1e6 lines", 10**6, 0), ("256 MB", 0, MAX_LOG_BYTES))
QUICK = (("1e3 lines", 10**3, 0), ("1e4 lines", 10**4, 0))  # --quick: that the bench runs
PREFIX = re.compile(r"^\[(?P<time>[\d-]+ [\d:.]+)(?P<tags>(?: [A-Z]+\d+)*)\] ")
SHIFTED = re.compile(r"\d{3,}")  # counts and sizes; ranks, fractions and flags stay


@dataclass
class Run:
    code: str  # "this checkout" or the revision
    log: str
    lines: int
    mb: float
    seconds: float | None  # None: not run
    peak_mb: float | None
    status: str  # "exit 0", "exit 1", "stopped after N s", "over N GB", "not run"


# -- the logs ---------------------------------------------------------------------------------


def restarts(real: list[str]) -> Iterator[str]:
    """REAL again and again, the numbers of each copy's messages shifted."""
    for copy in itertools.count():
        yield from (shifted(line, copy) for line in real)
    raise AssertionError("unreachable")


def shifted(line: str, by: int) -> str:
    """LINE with the numbers of three digits or more of its message shifted by BY."""
    found = PREFIX.match(line)
    at = found.end() if found else 0
    return line[:at] + SHIFTED.sub(lambda number: str(int(number[0]) + by), line[at:]) + "\n"


def at_work(real: list[str], runtime: list[str]) -> Iterator[str]:
    """REAL once, then the server at work: the lines of RUNTIME in turn, their numbers
    changing, between the HTTP server's access lines."""
    yield from (line + "\n" for line in real)
    for n in itertools.count(1):
        if n % 4 == 0:
            yield f'INFO:     127.0.0.1:{40000 + n % 20000} - "POST /generate HTTP/1.1" 200 OK\n'
            continue
        yield shifted(runtime[n % len(runtime)], n)
    raise AssertionError("unreachable")


def runtime_lines(real: list[str], version: str) -> list[str]:
    """The lines of REAL the release's logging calls print, but for what begins a start (a
    settings print; a rank's first message, which begins one where it comes again)."""
    from tracer.analyses.explain.logread import Log
    from tracer.analyses.explain.match import TemplateFinder
    from tracer.session import open_session

    finder = TemplateFinder(open_session(f"pypi:sglang=={version}").facts)
    begun: set[str] = set()
    out = []
    for line, shape in Log.of_text("\n".join(real)).shaped():
        chosen = finder.choose(line.message, shape)
        if chosen is None or not line.ranks or "Args(" in line.message:
            continue
        if line.rank in begun:
            out.append(real[line.number - 1])
        begun.add(line.rank)
    return out


def write_log(path: Path, lines: Iterator[str], count: int, size: int) -> tuple[int, float]:
    """The first COUNT of LINES (or as many as fit in SIZE bytes) written to PATH; how many
    lines, and MB, it holds."""
    written = bytes_ = 0
    with path.open("w") as out:
        for line in lines:
            if (count and written == count) or (size and bytes_ + len(line.encode()) > size):
                break
            out.write(line)
            written += 1
            bytes_ += len(line.encode())
    return written, bytes_ / (1 << 20)


# -- running explain ----------------------------------------------------------------------------


def limited(memory_gb: float) -> Callable[[], None]:
    limit = int(memory_gb * (1 << 30))
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def explain(code: Path, version: str, log: Path, timeout: float, memory_gb: float) -> Run:
    """`sgtrace explain pypi:sglang==VERSION --log LOG` by the tracer in CODE, in a process of
    its own (a session of its own, so that stopping it stops nothing else)."""
    command = [sys.executable, "-c", ENTRY, "explain", f"pypi:sglang=={version}"]
    command += ["--log", str(log), "--quiet"]
    with tempfile.TemporaryFile() as errors:
        start = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=code,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            preexec_fn=limited(memory_gb),
            start_new_session=True,
        )
        stopped = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout and not stopped:
                os.killpg(process.pid, signal.SIGKILL)
                stopped = True
            time.sleep(0.05)
        seconds = time.monotonic() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        said = errors.read().decode(errors="replace")
    if stopped:
        state = f"stopped after {timeout:g} s"
    elif "MemoryError" in said:
        state = f"over {memory_gb:g} GB"
    elif process.returncode in (0, 1):
        state = f"exit {process.returncode}"
    else:
        last = said.strip().splitlines()[-1:] or [""]
        state = f"exit {process.returncode}: {last[0][:80]}"
    return Run("", log.name, 0, 0.0, seconds, usage.ru_maxrss / 1024, state)


def pinned(work: Path) -> Path:
    """A copy of this checkout's tracer and its queries as they are now: the runs take many
    minutes, and an edit meanwhile would mix code."""
    code = work / "this"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO_ROOT / "tracer", code / "tracer", ignore=skip)
    # Installed, `queries/` is the package `tracer.queries`; in the copy it sits in place.
    shutil.copytree(REPO_ROOT / "queries", code / "tracer" / "queries", ignore=skip)
    return code


def imported_from(code: Path) -> None:
    """Exit unless a process run in CODE imports the tracer there."""
    done = subprocess.run(
        [sys.executable, "-c", "import tracer; print(tracer.__file__)"],
        cwd=code,
        capture_output=True,
        text=True,
        check=True,
    )
    if not done.stdout.strip().startswith(str(code.resolve())):
        sys.exit(f"a process in {code} imports the tracer from {done.stdout.strip()}")


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure(args: argparse.Namespace, work: Path) -> list[Run]:
    real = (REAL_LOGS / args.log).read_text().splitlines()
    runtime = runtime_lines(real, args.version)
    shapes: dict[str, Callable[[], Iterator[str]]] = {
        "restarts": lambda: restarts(real),
        "at work": lambda: at_work(real, runtime),
    }
    codes = {"this checkout": pinned(work)}
    if args.against:
        codes[args.against] = tracer_at(args.against, work / "against", Path(__file__))
    for label, code in codes.items():
        imported_from(code)
        say(f"{label}: {args.log} itself and 10^3 lines of each shape (untimed: the release")
        say("  fetched and indexed, the logging calls the logs reach read)")
        warm = work / "warm.log"
        for lines in (iter(f"{line}\n" for line in real), *(s() for s in shapes.values())):
            write_log(warm, lines, 1000, 0)
            first = explain(code, args.version, warm, args.timeout, args.memory)
            if not first.status.startswith("exit"):
                sys.exit(f"{label} could not explain {args.log}: {first.status}")
    runs: list[Run] = []
    for shape, lines in shapes.items():
        for size_label, count, size in QUICK if args.quick else SIZES:
            log = work / f"{shape.replace(' ', '-')}-{size_label.replace(' ', '')}.log"
            written, mb = write_log(log, lines(), count, size)
            for label, code in codes.items():
                name = f"{shape}, {size_label}"
                if label != "this checkout" and written > args.against_up_to:
                    runs.append(Run(label, name, written, mb, None, None, "not run"))
                    continue
                say(f"{label}: {name} ({written} lines, {mb:.0f} MB)")
                run = explain(code, args.version, log, args.timeout, args.memory)
                run.code, run.log, run.lines, run.mb = label, name, written, mb
                runs.append(run)
            log.unlink()
    return runs


# -- the report -------------------------------------------------------------------------------


def table(runs: list[Run], args: argparse.Namespace) -> str:
    codes = list(dict.fromkeys(r.code for r in runs))
    head = f"{'log':22} {'lines':>9} {'MB':>6}" + "".join(f"  | {c:>26}" for c in codes)
    rows = [
        f"`sgtrace explain pypi:sglang=={args.version}` of logs built from {args.log}",
        f"load average {os.getloadavg()[0]:.2f}; seconds, peak RSS",
        head,
        "-" * len(head),
    ]
    for log in dict.fromkeys(r.log for r in runs):
        mine = [r for r in runs if r.log == log]
        cells = []
        for code in codes:
            run = next(r for r in mine if r.code == code)
            if run.seconds is None or run.peak_mb is None:
                cells.append(f"  | {run.status:>26}")
            else:
                shown = f"{run.seconds:7.1f} s {run.peak_mb:7.0f} MB"
                if not run.status.startswith("exit"):
                    shown = f"{run.status} ({run.peak_mb:.0f} MB)"
                cells.append(f"  | {shown:>26}")
        rows.append(f"{log:22} {mine[0].lines:>9} {mine[0].mb:>6.0f}" + "".join(cells))
    return "\n".join(rows)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--log", default=DEFAULT_LOG, help=f"the real log (default {DEFAULT_LOG})")
    cli.add_argument("--version", default=DEFAULT_VERSION, help="its release")
    cli.add_argument("--against", metavar="REV", help="also run the tracer at git REV")
    cli.add_argument("--against-up-to", type=int, default=10**6, metavar="LINES")
    cli.add_argument("--timeout", type=float, default=900.0, metavar="S")
    cli.add_argument("--memory", type=float, default=3.0, metavar="GB")
    cli.add_argument("--quick", action="store_true", help="logs of 10^3 and 10^4 lines only")
    cli.add_argument("--json", type=Path, metavar="PATH", help="also write the runs as JSON")
    args = cli.parse_args()
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-log-") as tmp:
        runs = measure(args, Path(tmp))
    print(table(runs, args))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=2) + "\n")


if __name__ == "__main__":
    main()
