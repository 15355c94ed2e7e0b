"""Benchmark: fetch one SGLang release over SSH with sgtrace, side by side with rsync.

Run from the repo root (needs openssh-server, openssh-client, rsync and zstd; the wheel is
downloaded once into the user cache by docker/setup-target.sh):

    python -m tests.bench.bench_fetch [--version 0.5.23] [--repeat N] [--json PATH]
    python -m tests.bench.bench_fetch --profile    # where a cold fetch spends its time

Once per run, `docker/setup-target.sh VERSION DEST --layout checkout` lays the release out
as a git checkout in a temp dir, and a loopback sshd (`tests.sshd.start_sshd`) serves it.
Every row reads the same folder, `ALIAS:DEST/python` (it holds `sglang/`), over that sshd:

  (1) sgtrace cold      the fetch into an empty cache (a fresh SGTRACE_CACHE), timed twice:
                        in-process, `fetch_one(spec, SshOptions(...))`, and as the CLI,
                        `python -m tracer.cli fetch ALIAS:PATH --ssh-config CFG --json` in a
                        new process (Python start-up and imports included; `python -m`, not
                        the `sgtrace` script, whose pyenv shim would add its own start-up).
  (2) rsync cold        `rsync -a -e "ssh -F CFG" ALIAS:PATH/ DEST/` into an empty folder; and
                        the same restricted to `--include='*/' --include='*.py' --exclude='*'`,
                        since sgtrace fetches only the .py files (and dist-info metadata).
  (3) sgtrace no change the fetch again on the cache (1) filled, nothing changed on the target.
  (4) sgtrace one edit  the fetch again after one line was appended to one .py file.
  (5) rsync no change / one edit: both rsync variants again into the folders (2) filled.

Each repeat runs the cases in turn (cold, no change, one edit), each case as rsync -a, rsync
*.py, the CLI fetch, the in-process fetch, in fresh folders and caches; seconds are the
median of --repeat runs (default 3). `recv MB` is what came over the wire: the fetch's
`fetched_bytes` (the compressed tar stream; the probe's manifest is not counted), rsync's
`Total bytes received` (its file list included). The ratio columns compare each row with
the rsync runs of the same case. Every timed run starts after `sync`, so none pays for the
writeback of the files the one before wrote. The load average is printed with the table:
other work on the machine shows in the seconds.

Targets from the issue: a cold fetch at most 0.6x `rsync -a`, a re-fetch with no change
under 0.5 s. They are judged on the CLI rows, since a user waits for the whole command (and
rsync too is timed as a process); the in-process rows show in parentheses how the fetch
itself fares. `--profile` times the pieces of one cold fetch instead (median of --repeat):
Python start-up and imports, the ssh connection, the probe, remote tar | zstd alone, the
stream over OpenSSH and over asyncssh (probe, stream, checks and pack in one command), local
decompression, tar checks, hashes and blob writes; and, as options, the stream uncompressed
and over chacha20-poly1305 instead of AES-GCM.

New interpreters (the CLI and start-up rows) cache their bytecode under the client home,
as an installed package has it, even where PYTHONDONTWRITEBYTECODE is set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

from tests.sshd import SshServer, Target, setup_target, start_sshd
from tracer.cli.common import PACKAGE
from tracer.sources.archive import receive
from tracer.sources.blobs import BlobStore
from tracer.sources.cache import cache_root, content_hash
from tracer.sources.fetch import fetch_one, run_probe, start_probe
from tracer.sources.remote import RemoteSpec, SshOptions, parse_remote
from tracer.sources.ssh import connect, connect_kwargs
from tracer.sources.tarstream import TarReader

REPO_ROOT = Path(__file__).resolve().parents[2]
COLD_TARGET_RATIO = 0.6
NOCHANGE_TARGET_S = 0.5
EDITED_FILE = "sglang/srt/server_args.py"  # relative to the fetched folder
PY_ONLY = ("--include=*/", "--include=*.py", "--exclude=*")
FETCH_IMPORTS = "import tracer.cli.main, tracer.sources.fetch"  # all that `sgtrace fetch` loads
CASES = ("cold", "nochange", "edit")
EXPECTED_FETCHED = {"nochange": 0, "edit": 1}  # files a re-fetch should move


@dataclass(frozen=True, slots=True)
class Measured:
    """One timed run: wall seconds, bytes received over the wire, files transferred."""

    seconds: float
    received_bytes: int
    files: int


@dataclass(frozen=True, slots=True)
class Row:
    key: str
    label: str
    case: str = ""  # cold, nochange or edit: which rsync rows the ratios compare against
    target: str = ""
    # (median seconds, ratio to rsync -a) -> is the target met?
    meets: Callable[[float, float], bool] | None = None
    judged: bool = True  # False: the verdict is shown in parentheses, for information


def cold_meets(_seconds: float, ratio: float) -> bool:
    return ratio <= COLD_TARGET_RATIO


def nochange_meets(seconds: float, _ratio: float) -> bool:
    return seconds < NOCHANGE_TARGET_S


COLD_TARGET = f"<= {COLD_TARGET_RATIO:g}x rsync -a"
NOCHANGE_TARGET = f"< {NOCHANGE_TARGET_S:g} s"

ROWS: tuple[Row, ...] = (
    Row("startup", "    python start-up + fetch's imports"),
    Row("rsync_all_cold", "(2) rsync -a, cold", "cold"),
    Row("rsync_py_cold", "(2) rsync -a *.py only, cold", "cold"),
    Row("sgtrace_cold_cli", "(1) sgtrace cold fetch, CLI", "cold", COLD_TARGET, cold_meets),
    Row("sgtrace_cold_inproc", "(1) sgtrace cold fetch, in-process", "cold", COLD_TARGET,
        cold_meets, judged=False),
    Row("rsync_all_nochange", "(5) rsync -a, no change", "nochange"),
    Row("rsync_py_nochange", "(5) rsync -a *.py only, no change", "nochange"),
    Row("sgtrace_nochange_cli", "(3) sgtrace re-fetch, no change, CLI", "nochange",
        NOCHANGE_TARGET, nochange_meets),
    Row("sgtrace_nochange_inproc", "(3) sgtrace re-fetch, no change, in-proc", "nochange",
        NOCHANGE_TARGET, nochange_meets, judged=False),
    Row("rsync_all_edit", "(5) rsync -a, one file edited", "edit"),
    Row("rsync_py_edit", "(5) rsync -a *.py only, one file edited", "edit"),
    Row("sgtrace_edit_cli", "(4) sgtrace re-fetch, one edit, CLI", "edit"),
    Row("sgtrace_edit_inproc", "(4) sgtrace re-fetch, one edit, in-proc", "edit"),
)  # fmt: skip


@dataclass
class Results:
    version: str
    revision: str  # of the code measured, `git describe --always --dirty`
    tree: dict[str, Any]  # what the target holds: files, bytes, .py files, .py bytes
    load: list[float] = field(default_factory=list)  # 1-minute load average, start and end
    samples: dict[str, list[Measured]] = field(default_factory=dict)
    facts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # fetch rows' facts()

    def add(self, key: str, measured: Measured, facts: dict[str, Any] | None = None) -> None:
        self.samples.setdefault(key, []).append(measured)
        if facts is not None:
            self.facts.setdefault(key, []).append(facts)

    def median(self, key: str) -> float:
        return statistics.median(m.seconds for m in self.samples[key])

    def warnings(self) -> list[str]:
        """Runs that did not measure what they claim: a fetch that moved the wrong files."""
        found = []
        for key, runs in self.facts.items():
            case = key.split("_")[1]
            for run, facts in enumerate(runs, 1):
                got, kept = facts["fetched_files"], facts["files"]
                if case == "cold" and got < kept:
                    found.append(f"{key} run {run} fetched {got} of {kept} files: not cold")
                elif case != "cold" and got != EXPECTED_FETCHED[case]:
                    want = EXPECTED_FETCHED[case]
                    found.append(f"{key} run {run} fetched {got} files, expected {want}")
        return found


# -- the target ------------------------------------------------------------------------------


def lay_out(version: str, work: Path) -> Target:
    """The release as a git checkout under WORK; the wheel comes from the user cache."""
    env = dict(os.environ)
    env.setdefault("SGTRACE_TEST_CACHE", str(cache_root()))
    env["PYTHON"] = sys.executable
    return setup_target(version, work / "target" / "sglang", layout="checkout", env=env)


def tree_size(root: Path) -> dict[str, Any]:
    """Files and bytes under ROOT, all of them and the .py files alone."""
    sizes = [(p.suffix, p.stat().st_size) for p in root.rglob("*") if p.is_file()]
    python = [size for suffix, size in sizes if suffix == ".py"]
    return {
        "files": len(sizes),
        "bytes": sum(size for _, size in sizes),
        "py_files": len(python),
        "py_bytes": sum(python),
    }


def edit_one_file(folder: Path, run: int) -> None:
    """Append one comment line to EDITED_FILE: one .py file changes size and mtime."""
    with (folder / EDITED_FILE).open("a") as out:
        out.write(f"# edited by bench_fetch, run {run}\n")


# -- the timed commands ------------------------------------------------------------------------


def run_timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Run COMMAND from the repo root; its wall seconds and stdout. Exits on failure."""
    os.sync()  # no run pays for the writeback of the one before
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr.strip()}")
    return seconds, done.stdout


def rsync(server: SshServer, folder: Path, dest: Path, py_only: bool) -> Measured:
    """`rsync -a` of FOLDER on the target into DEST, through the benchmark's sshd."""
    command = ["rsync", "-a", "--stats", "-e", f"ssh -F {server.ssh_config}"]
    command += PY_ONLY if py_only else ()
    command += [f"{server.alias}:{folder}/", f"{dest}/"]
    seconds, out = run_timed(command, server.client_env())
    stats = rsync_stats(out)
    return Measured(
        seconds, stats["Total bytes received"], stats["Number of regular files transferred"]
    )


def rsync_stats(output: str) -> dict[str, int]:
    """The `Name: 1,234 ...` lines of `rsync --stats` as integers."""
    stats: dict[str, int] = {}
    for line in output.splitlines():
        name, _, value = line.partition(": ")
        number = value.split(" ")[0].replace(",", "")
        if number.isdigit():
            stats[name.strip()] = int(number)
    return stats


def fetch_cli(server: SshServer, folder: Path, cache: Path) -> tuple[Measured, dict[str, Any]]:
    """`sgtrace fetch ALIAS:FOLDER --ssh-config CFG --json` as its own process, cache CACHE."""
    command = [sys.executable, "-m", "tracer.cli", "fetch", f"{server.alias}:{folder}"]
    command += ["--ssh-config", str(server.ssh_config), "--json"]
    seconds, out = run_timed(command, {**python_env(server), "SGTRACE_CACHE": str(cache)})
    facts = json.loads(out.splitlines()[-1])
    return Measured(seconds, facts["fetched_bytes"], facts["fetched_files"]), facts


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """os.environ is exactly VALUES inside the block (cache_root and HOME are read from it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def ssh_options(server: SshServer) -> SshOptions:
    return SshOptions(
        known_hosts=server.known_hosts, config=server.ssh_config, identities=(server.client_key,)
    )


def fetch_in_process(
    server: SshServer, folder: Path, cache: Path
) -> tuple[Measured, dict[str, Any]]:
    """`fetch_one` in this process, with the CLI's environment and the cache CACHE."""
    spec = parse_remote(f"{server.alias}:{folder}")
    assert spec is not None
    with environment({**server.client_env(), "SGTRACE_CACHE": str(cache)}):
        os.sync()  # as in run_timed
        start = time.perf_counter()
        result = fetch_one(spec, ssh_options(server), None, PACKAGE)
        seconds = time.perf_counter() - start
    facts = result.facts()
    return Measured(seconds, result.fetched_bytes, result.fetched_files), facts


def python_env(server: SshServer) -> dict[str, str]:
    """The client's environment for a new interpreter, its bytecode cached (in the server's
    client home) as an installed package has it, even where PYTHONDONTWRITEBYTECODE is set."""
    env = {**server.client_env(), "PYTHONPYCACHEPREFIX": str(server.client_home / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def python_startup(server: SshServer) -> Measured:
    """A new interpreter that imports what `sgtrace fetch` imports, then stops: the fixed
    cost of the CLI rows."""
    seconds, _ = run_timed([sys.executable, "-c", FETCH_IMPORTS], python_env(server))
    return Measured(seconds, 0, 0)


# -- one run -----------------------------------------------------------------------------------


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure_run(server: SshServer, target: Target, run: int, work: Path, results: Results) -> None:
    """One repeat of every row, in fresh rsync folders and fresh caches under WORK."""
    folder = target.package_root
    places = {name: work / name for name in ("all", "py", "cli", "inproc")}
    for place in places.values():
        place.mkdir(parents=True)
    results.add("startup", python_startup(server))

    def rsyncs(case: str) -> None:
        results.add(f"rsync_all_{case}", rsync(server, folder, places["all"], py_only=False))
        results.add(f"rsync_py_{case}", rsync(server, folder, places["py"], py_only=True))

    def fetches(case: str) -> None:
        results.add(f"sgtrace_{case}_cli", *fetch_cli(server, folder, places["cli"]))
        results.add(f"sgtrace_{case}_inproc", *fetch_in_process(server, folder, places["inproc"]))

    for case in CASES:
        say(f"run {run}: {case}")
        if case == "edit":
            edit_one_file(folder, run)
        rsyncs(case)
        fetches(case)


@contextmanager
def served_release(version: str, work: Path) -> Iterator[tuple[SshServer, Target]]:
    """The release laid out under WORK and a loopback sshd serving it, until the block ends."""
    say(f"laying out sglang {version} as a checkout (setup-target.sh)")
    target = lay_out(version, work)
    server = start_sshd(work / "sshd")
    try:
        python_startup(server)  # compiles and caches the bytecode, untimed
        yield server, target
    finally:
        server.stop()


def measure(version: str, repeat: int, work: Path) -> Results:
    """Every row, REPEAT times. The run folders stay until the end: deleting thousands of
    files between runs slows the next run's writes on some disks."""
    with served_release(version, work) as (server, target):
        results = Results(version, code_revision(), tree_size(target.package_root))
        results.load.append(os.getloadavg()[0])
        for run in range(1, repeat + 1):
            measure_run(server, target, run, work / f"run-{run}", results)
        results.load.append(os.getloadavg()[0])
    return results


def code_revision() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


# -- reporting -------------------------------------------------------------------------------


def ratios(results: Results, row: Row, seconds: float) -> tuple[float | None, float | None]:
    """ROW's median seconds over rsync -a's and over rsync *.py's, in the same case."""
    if not row.case:
        return None, None
    return (
        seconds / results.median(f"rsync_all_{row.case}"),
        seconds / results.median(f"rsync_py_{row.case}"),
    )


def verdict(row: Row, seconds: float, ratio: float | None) -> str:
    if row.meets is None or ratio is None:
        return ""
    met = "yes" if row.meets(seconds, ratio) else "NO"
    return met if row.judged else f"({met})"


def summary(results: Results) -> dict[str, dict[str, Any]]:
    """Per row, in table order: median seconds, the runs, ratios, MB received, verdict."""
    table: dict[str, dict[str, Any]] = {}
    for row in ROWS:
        runs = results.samples.get(row.key)
        if not runs:
            continue
        seconds = results.median(row.key)
        to_all, to_py = ratios(results, row, seconds)
        moved = bool(row.case)  # the start-up row moves nothing
        table[row.key] = {
            "label": row.label.strip(),
            "seconds": seconds,
            "runs": [m.seconds for m in runs],
            "ratio_to_rsync": to_all,
            "ratio_to_rsync_py": to_py,
            "received_bytes": statistics.median(m.received_bytes for m in runs) if moved else None,
            "files": statistics.median(m.files for m in runs) if moved else None,
            "target": row.target,
            "met": verdict(row, seconds, to_all),
        }
    return table


def number(value: float | None, width: int, digits: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def table_text(results: Results, table: dict[str, dict[str, Any]]) -> str:
    tree = results.tree
    header = (
        f"sglang {results.version} checkout over loopback sshd: {tree['files']} files, "
        f"{tree['bytes'] / 1e6:.1f} MB ({tree['py_files']} .py, {tree['py_bytes'] / 1e6:.1f} MB); "
        f"code {results.revision}; python {platform.python_version()}; "
        f"median of {len(results.samples['startup'])} run(s); "
        f"load {' -> '.join(f'{load:.2f}' for load in results.load)}"
    )
    columns = (
        f"{'case':<44} {'seconds':>8} {'x rsync':>8} {'x rs.py':>8} {'recv MB':>8} "
        f"{'files':>6}  {'target':<17} met"
    )
    lines = [header, "", columns, "-" * len(columns)]
    labels = {row.key: row.label for row in ROWS}
    for key, values in table.items():
        received = values["received_bytes"]
        lines.append(
            f"{labels[key]:<44} {values['seconds']:>8.3f} "
            f"{number(values['ratio_to_rsync'], 8, 3)} {number(values['ratio_to_rsync_py'], 8, 3)} "
            f"{number(None if received is None else received / 1e6, 8, 2)} "
            f"{number(values['files'], 6, 0)}  {values['target']:<17} {values['met']}"
        )
    lines += [
        "",
        "x rsync / x rs.py: over `rsync -a` / `rsync -a` *.py only, in the same case.",
        "Targets are judged on the CLI rows (a whole process, as rsync is); in-process in ( ).",
    ]
    cold = results.facts.get("sgtrace_cold_inproc", [{}])[0]
    if cold:
        lines.append(
            f"cold fetch: {cold['files']} .py files kept, {cold['fetched_files']} fetched, "
            f"compressor {cold['compressor']}, git {str(cold['git_commit'])[:12]}"
        )
    lines += [f"WARNING: {warning}" for warning in results.warnings()]
    return "\n".join(lines)


def write_json(path: Path, results: Results, table: dict[str, dict[str, Any]]) -> None:
    report = {
        "version": results.version,
        "revision": results.revision,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "tree": results.tree,
        "load_average": results.load,
        "targets": {
            "cold_ratio_to_rsync_max": COLD_TARGET_RATIO,
            "nochange_seconds_max": NOCHANGE_TARGET_S,
            "judged_on": "cli",
        },
        "rows": table,
        "facts": results.facts,
        "warnings": results.warnings(),
    }
    path.write_text(json.dumps(report, indent=2) + "\n")


# -- profiling ---------------------------------------------------------------------------------

# The probe's selection of .py files (tracer/sources/probe.sh), as a NUL-separated list.
FIND_PY = (
    r"find sglang \( -name __pycache__ -o \( -name '.?*' ! -name . \) \) -prune -o "
    r"-type f -name '*.py' -print0"
)
TAR_ZSTD = f"{FIND_PY} | tar --null -T - -cf - | zstd -1 -q -c"


def shell_stages(server: SshServer, folder: Path) -> dict[str, str]:
    """Label -> shell command: the fixed cost of a process, OpenSSH's connection, and the
    remote pipeline alone (the target is this machine) and streamed over OpenSSH."""
    ssh = f"ssh -F {server.ssh_config} {server.alias}"
    remote = f"cd {folder} && {TAR_ZSTD}"
    return {
        "python start-up alone (python -c pass)": f"{sys.executable} -c pass",
        "python start-up + fetch's imports": f"{sys.executable} -c '{FETCH_IMPORTS}'",
        "OpenSSH: ssh ALIAS true (connect, auth, one exec)": f"{ssh} true",
        "target alone: find | tar | wc -c": f"cd {folder} && {FIND_PY} | tar --null -T - -cf - "
        "| wc -c",
        "target alone: find | tar | zstd -1 | wc -c": f"{remote} | wc -c",
        "OpenSSH: tar | zstd -1 streamed, | wc -c here": f"{ssh} '{remote}' | wc -c",
        "OpenSSH: tar | zstd -1 streamed, | zstd -d here": f"{ssh} '{remote}' | zstd -d -q -c "
        "| wc -c",
        "OpenSSH: tar streamed uncompressed, | wc -c": f"{ssh} 'cd {folder} && {FIND_PY} "
        "| tar --null -T - -cf -' | wc -c",
    }


def time_shell(command: str, env: dict[str, str]) -> float:
    os.sync()
    start = time.perf_counter()
    subprocess.run(["bash", "-c", command], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


class Laps:
    """Seconds of consecutive stretches of work, by label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.start = time.perf_counter()

    def lap(self, label: str) -> None:
        now = time.perf_counter()
        self.seconds[label] = now - self.start
        self.start = now

    def restart(self) -> None:
        """Start the next lap now, after `sync` (no lap pays for an earlier one's writes)."""
        os.sync()
        self.start = time.perf_counter()


async def stream(
    conn: asyncssh.SSHClientConnection, spec: RemoteSpec, compressor: str, blobs: Path
) -> list[str]:
    """One probe-and-send command: every file of the tree, sent with COMPRESSOR, checked and
    stored into a blob store at BLOBS (what fetch does, less the mirror)."""
    probed = await start_probe(conn, spec, PACKAGE)
    paths = list(probed.probe.manifest)
    probed.send(compressor, paths)
    await receive(probed.process, spec, compressor, set(paths), BlobStore(blobs), None)
    return paths


async def stream_stages(spec: RemoteSpec, options: SshOptions, laps: Laps, work: Path) -> None:
    """The network side of one cold fetch, stage by stage, with the library's own functions;
    then the same files uncompressed, and over chacha20-poly1305 instead of AES-GCM."""
    laps.restart()
    async with await connect(spec, options) as conn:
        laps.lap("asyncssh: connect (key exchange, auth)")
        await run_probe(conn, spec, PACKAGE)
        laps.lap("asyncssh: probe alone (tools, git status, manifest)")
        laps.restart()
        await stream(conn, spec, "zstd", work / "zstd")
        laps.lap("asyncssh: probe + zstd stream, checked, stored")
        laps.restart()
        await stream(conn, spec, "none", work / "none")
        laps.lap("  option: the same uncompressed")
    kwargs = {**connect_kwargs(spec, options), "encryption_algs": ["chacha20-poly1305@openssh.com"]}
    async with asyncssh.connect(**kwargs) as conn:
        laps.restart()
        await stream(conn, spec, "none", work / "chacha")
        laps.lap("  option: the same uncompressed, chacha20-poly1305")


def local_stages(folder: Path, blobs: Path, laps: Laps) -> None:
    """The local side of one cold fetch, on the tar of the tree's .py files made here:
    decompression, tar checks, hashes, one pack written."""
    listing = subprocess.run(["bash", "-c", FIND_PY], cwd=folder, capture_output=True).stdout
    archive = subprocess.run(
        ["tar", "--null", "-T", "-", "-cf", "-"], cwd=folder, input=listing, capture_output=True
    ).stdout
    wanted = {p.decode() for p in listing.split(b"\0") if p}
    compressed = subprocess.run(["zstd", "-1", "-q", "-c"], input=archive, capture_output=True)
    laps.restart()
    subprocess.run(["zstd", "-d", "-q", "-c"], input=compressed.stdout, capture_output=True)
    laps.lap("local: zstd -d alone (overlapped in the stream)")
    members: dict[str, bytes] = {}
    reader = TarReader(wanted, "profile", members.__setitem__)
    for start in range(0, len(archive), 1 << 18):
        reader.feed(archive[start : start + (1 << 18)])
    reader.finish()
    laps.lap("local: tar parse + checks (TarReader)")
    for data in members.values():
        content_hash(data)
    laps.lap("local: blake2b of every file")
    laps.restart()
    BlobStore(blobs).add(members)
    laps.lap("local: blob store (one pack file and its index)")


def profile_once(server: SshServer, folder: Path, work: Path) -> dict[str, float]:
    """Every stage once, with fresh blob folders under WORK."""
    env = python_env(server)
    seconds = {
        label: time_shell(command, env) for label, command in shell_stages(server, folder).items()
    }
    spec = parse_remote(f"{server.alias}:{folder}")
    assert spec is not None
    laps = Laps()
    with environment({**env, "SGTRACE_CACHE": str(work / "cache")}):
        asyncio.run(stream_stages(spec, ssh_options(server), laps, work / "streams"))
        local_stages(folder, work / "blobs", laps)
        laps.restart()
        fetch_one(spec, ssh_options(server), None, PACKAGE)
        laps.lap("whole: fetch_one, cold, in-process")
    return seconds | laps.seconds


def profile(version: str, repeat: int, work: Path) -> dict[str, list[float]]:
    """Label -> seconds of each run, for REPEAT runs of every stage."""
    runs: dict[str, list[float]] = {}
    with served_release(version, work) as (server, target):
        for run in range(1, repeat + 1):
            say(f"profile run {run}/{repeat}")
            for label, seconds in profile_once(
                server, target.package_root, work / f"p{run}"
            ).items():
                runs.setdefault(label, []).append(seconds)
    return runs


def profile_text(version: str, runs: dict[str, list[float]]) -> str:
    count = len(next(iter(runs.values())))
    lines = [f"where a cold fetch of sglang {version} spends its time (median of {count} run(s))"]
    columns = f"{'stage':<58} {'seconds':>8}  runs"
    lines += ["", columns, "-" * (len(columns) + 20)]
    for label, seconds in runs.items():
        each = " ".join(f"{s:.3f}" for s in seconds)
        lines.append(f"{label:<58} {statistics.median(seconds):>8.3f}  {each}")
    return "\n".join(lines)


# -- command line ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(
        description="Time sgtrace's SSH fetch of one SGLang release against rsync."
    )
    cli.add_argument("--version", default="0.5.23", help="SGLang release (default 0.5.23)")
    cli.add_argument("--repeat", type=int, default=3, help="runs of every row (default 3)")
    cli.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    cli.add_argument("--profile", action="store_true", help="time the stages of a cold fetch")
    args = cli.parse_args(argv)
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="sgtrace-bench-fetch-") as tmp:
            runs = profile(args.version, args.repeat, Path(tmp))
        print(profile_text(args.version, runs))
        if args.json:
            args.json.write_text(json.dumps({"version": args.version, "stages": runs}, indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-fetch-") as tmp:
        results = measure(args.version, args.repeat, Path(tmp))
    table = summary(results)
    print(table_text(results, table))
    if args.json:
        write_json(args.json, results, table)


if __name__ == "__main__":
    main()
