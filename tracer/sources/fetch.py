"""Fetch a tree of Python files from a host over SSH into the content-addressed cache,
incrementally: one connection per host and ONE remote command, which first reports (tools,
git facts and a manifest of sizes and mtimes), then streams the `tar` of the files the
client asks for (those whose size or mtime changed), compressed by what pays. Every answer
is read as a hostile host might send it: capped as it grows, checked record by record, and
abandoned when the host goes silent past the idle timeout."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracer.errors import (
    PackageNotFound,
    RemotePathMissing,
    RemoteToolMissing,
    SgtraceError,
    TooManyFiles,
    TransferFailed,
)
from tracer.sources.answers import Watchdog, too_large
from tracer.sources.archive import Progress, choose_compressor, receive
from tracer.sources.blobs import BlobStore
from tracer.sources.cache import cache_root, content_hash, write_atomic
from tracer.sources.hint import PackageHint
from tracer.sources.remote import IDLE_TIMEOUT, RemoteSpec, SshOptions, probe_script
from tracer.sources.snapshot import (
    MAX_FILES,
    SMALLER_FOLDER,
    Snapshot,
    over_size_cap,
    skipped_name,
)
from tracer.sources.ssh import connect, connection_error
from tracer.sources.sshlib import asyncssh
from tracer.versions import MANIFESTS

VERSION_LINE = re.compile(r"^__version__\s*=\s*(?:\w+\s*=\s*)*['\"]([^'\"]+)['\"]", re.M)
PROBE_READ = 1 << 16  # small reads while the manifest streams, to time its arrival
MIN_TIMED_BYTES = 64 << 10  # a manifest shorter than this says nothing of the link
MAX_REPORT_BYTES = 32 << 20  # the probe's report: MAX_FILES records of long paths fit
COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1 or SHA-256


@dataclass
class Probe:
    tools: set[str] = field(default_factory=set)
    candidates: list[tuple[str, str]] = field(default_factory=list)  # (why, path)
    root: str = ""
    top: str = "."
    git_toplevel: str = ""
    git_commit: str = ""
    dirty: list[str] = field(default_factory=list)
    error: str = ""
    manifest: dict[str, tuple[int, str]] = field(default_factory=dict)  # path -> (size, mtime)
    warnings: list[str] = field(default_factory=list)  # files listed but not taken, and why


@dataclass
class FetchResult:
    spec: RemoteSpec
    snapshot: Snapshot
    probe: Probe
    fetched_files: int  # the snapshot's files that came over the connection this time
    fetched_bytes: int
    seconds: float
    compressor: str

    def facts(self) -> dict[str, object]:
        return {
            "source": self.spec.text,
            "host": self.spec.label,
            "root": self.probe.root,
            "package": self.probe.top,
            "version": self.snapshot.meta.get("version", ""),
            "git_commit": self.probe.git_commit,
            "git_modified": self.probe.dirty,
            "chosen_because": self.snapshot.meta.get("chosen_because", ""),
            "other_candidates": [p for _, p in self.probe.candidates[1:]],
            "files": len(self.snapshot.files),
            "fetched_files": self.fetched_files,
            "skipped": list(self.snapshot.warnings),  # the files not taken, and why
            "fetched_bytes": self.fetched_bytes,
            "seconds": round(self.seconds, 3),
            "compressor": self.compressor,
        }


# -- probing -------------------------------------------------------------------------------


class Report:
    """The probe's report (probe.sh: lines, the manifest's NUL-ended records and one more
    NUL, lines, `end`) as it arrives: where its parts are, each byte searched once, and
    capped at MAX_REPORT_BYTES."""

    MANIFEST = b"\nmanifest\n"

    def __init__(self, label: str) -> None:
        self.label = label
        self.data = bytearray()
        self.manifest = -1  # where the manifest's records start, once its line came
        self.trailer = -1  # where the lines after the manifest start, once its last NUL came
        self.end: int | None = None  # where the report ends, once its `end` line came
        self.searched = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > MAX_REPORT_BYTES:
            raise too_large(
                self.label,
                "the probe",
                MAX_REPORT_BYTES,
                "point at the folder that holds the package, not a whole disk",
            )
        self.scan()

    def scan(self) -> None:
        data = self.data
        if self.manifest < 0:
            found = data.find(self.MANIFEST, max(self.searched - len(self.MANIFEST), 0))
            self.searched = len(data)
            if found < 0:
                return
            self.manifest = self.searched = found + len(self.MANIFEST)
        if self.trailer < 0:
            if len(data) <= self.manifest:
                return
            if data[self.manifest] == 0:  # no file
                self.trailer = self.searched = self.manifest + 1
            else:
                found = data.find(b"\0\0", max(self.searched - 1, self.manifest))
                self.searched = len(data)
                if found < 0:
                    return
                self.trailer = self.searched = found + 2
        if data.startswith(b"end\n", self.trailer):
            self.end = self.trailer + 4
            return
        found = data.find(b"\nend\n", max(self.searched - 4, self.trailer))
        self.searched = len(data)
        if found >= 0:
            self.end = found + 5

    def probe(self) -> Probe:
        """The report, complete or cut short by an error line; a record that is not what
        probe.sh writes is a damaged or hostile host."""
        data = bytes(self.data)
        if self.end is None:  # stopped early: an error line, or the connection dropped
            return self.lines(data, Probe())
        probe = self.lines(data[: self.manifest] + data[self.trailer : self.end], Probe())
        files = data.count(b"\0", self.manifest, self.trailer - 1)
        if files > MAX_FILES:  # the rule of local trees
            raise TooManyFiles(
                f"{probe.root} on {self.label} holds {files} files, more than {MAX_FILES}, "
                "the most one tree may have",
                f"{SMALLER_FOLDER}, not a whole disk",
            )
        for record in data[self.manifest : self.trailer - 1].split(b"\0")[:-1]:
            self.record(record, probe)
        return probe

    def lines(self, text: bytes, probe: Probe) -> Probe:
        for line in text.decode("utf-8", "replace").splitlines():
            key, _, value = line.partition("\t")
            if key == "tool":
                probe.tools.add(value)
            elif key == "candidate":
                why, _, path = value.partition("\t")
                probe.candidates.append((why, path))
            elif key == "root":
                probe.root = self.absolute(value)
            elif key == "top":
                probe.top = value
            elif key == "git":
                toplevel, _, probe.git_commit = value.partition("\t")
                probe.git_toplevel = self.absolute(toplevel)
                if probe.git_commit and not COMMIT.fullmatch(probe.git_commit):
                    raise self.damaged(f"a commit that is not one: {probe.git_commit!r}")
            elif key == "dirty":
                probe.dirty.append(value)
            elif key == "error":
                probe.error = value
        return probe

    def absolute(self, path: str) -> str:
        if not path.startswith("/"):
            raise self.damaged(f"a folder that is not an absolute path: {path!r}")
        return path

    def record(self, record: bytes, probe: Probe) -> None:
        """One `size mtime path` record into PROBE's manifest, unless the rule for every
        tree skips the file (then a warning says why)."""
        size, _, rest = record.partition(b" ")
        mtime, _, raw = rest.partition(b" ")
        if not size.isdigit() or not raw:
            raise self.damaged(f"a manifest record that is not `size mtime path`: {record!r}")
        name = raw.decode("utf-8", "surrogateescape")
        path = name[2:] if name.startswith("./") else name
        if path.startswith("/") or ".." in path and ".." in path.split("/"):
            raise self.damaged(f"a file outside the tree: {name!r}")
        skipped = skipped_because(path, int(size))
        if skipped:
            probe.warnings.append(skipped)
        else:
            probe.manifest[path] = (int(size), mtime.decode("ascii", "replace"))

    def damaged(self, why: str) -> TransferFailed:
        return TransferFailed(
            f"the probe's report from {self.label} is damaged ({why})",
            "check the host: its sh, find and git should be the system's",
        )


def skipped_because(path: str, size: int) -> str | None:
    """Why a file of a host's tree is not fetched, as a warning; None if it is: the rules of
    every tree, local or on a host (its name, its size)."""
    return skipped_name(path) or over_size_cap(path, size)


async def start_probe(
    conn: asyncssh.SSHClientConnection,
    spec: RemoteSpec,
    hint: PackageHint,
    idle: float = IDLE_TIMEOUT,
) -> Probed:
    """Run probe.sh on the host and read its report (HINT: the package looked for where
    SPEC has no path); the command then waits for the list of files to send (Probed.send).
    A host silent for IDLE seconds meanwhile is given up on."""
    args = [spec.path or "", hint.name, *hint.checkout_locations]
    command = "sh -c " + shlex.quote(probe_script()) + " sgtrace-probe " + shlex.join(args)
    report = Report(spec.label)
    timed: list[tuple[float, int]] = []  # (when, bytes so far) after each read
    process = None
    try:
        with Watchdog(idle, spec.label, "probing the tree") as watchdog:
            # stderr discarded: unread, it would hold the channel's window, stall the stream.
            process = await conn.create_process(command, encoding=None, stderr=asyncssh.DEVNULL)
            while report.end is None:
                chunk = await process.stdout.read(PROBE_READ)
                if not chunk:
                    break
                watchdog.heard()
                report.add(chunk)
                timed.append((time.perf_counter(), len(report.data)))
            if report.end is None:  # stopped early: an error line, or the connection dropped
                await process.wait()
        if report.end is None and process.exit_status is None:
            raise lost_connection(spec)
        probe = checked_probe(report.probe(), spec, hint)
    except (asyncssh.Error, OSError) as exc:
        raise lost_connection(spec) from exc
    except BaseException:
        if process is not None:
            process.close()
        raise
    return Probed(probe, process, link_rate(timed, bytes(report.data)))


def link_rate(timed: list[tuple[float, int]], output: bytes) -> float | None:
    """Bytes a second the manifest came at, in OUTPUT read as TIMED says, from the end of
    the first read holding part of it (the remote wrote it in one go after `find`) to the
    read that ends it; None when too few bytes came in between to tell."""
    start = output.find(b"manifest\n") + len(b"manifest\n")
    stop = output.find(b"\0\0", start)
    first = next((t for t in timed if t[1] > start), None)
    last = next((t for t in timed if t[1] > stop >= 0), None)
    if first is None or last is None or last[1] - first[1] < MIN_TIMED_BYTES:
        return None
    return (last[1] - first[1]) / max(last[0] - first[0], 1e-6)


def checked_probe(probe: Probe, spec: RemoteSpec, hint: PackageHint) -> Probe:
    where = spec.path or "(searched)"
    if probe.error == "missing":
        raise RemotePathMissing(
            f"{where} does not exist on {spec.label}", "check the path (ls it over ssh)"
        )
    if probe.error == "nopackage":
        raise PackageNotFound(
            f"no {hint.name} found on {spec.label}: no running server, systemd unit, "
            f"importable package or checkout in {', '.join(hint.checkout_locations)}",
            f"give the path: {spec.label}:/path/to/folder-holding-{hint.name}",
        )
    if probe.error == "notar":
        raise RemoteToolMissing(f"{spec.label} has no `tar`", "install tar on the host")
    if not probe.root:
        raise TransferFailed(
            f"{spec.label} gave no answer to the probe", "check that the login shell works"
        )
    return probe


@dataclass(frozen=True, slots=True)
class Probed:
    """A probe's report, and its command still running, waiting for what to send."""

    probe: Probe
    process: asyncssh.SSHClientProcess
    link_rate: float | None  # bytes/s the manifest came at; None: too short to tell

    def send(self, compressor: str, paths: list[str]) -> None:
        """Ask for the tar of PATHS, compressed with COMPRESSOR (none: nothing to send)."""
        if paths:
            # `./`: a path starting with `-` is a path to tar, not an option.
            listing = b"".join(b"./" + p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
            self.process.stdin.write(compressor.encode() + b"\n" + listing)
        self.process.stdin.write_eof()


async def run_probe(
    conn: asyncssh.SSHClientConnection, spec: RemoteSpec, hint: PackageHint
) -> Probe:
    """The host's report alone, nothing sent."""
    probed = await start_probe(conn, spec, hint)
    probed.send("none", [])
    probed.process.close()
    return probed.probe


def lost_connection(spec: RemoteSpec) -> TransferFailed:
    return TransferFailed(f"the connection to {spec.label} was lost", "run the command again")


# -- the whole fetch -----------------------------------------------------------------------


def mirror_path(spec: RemoteSpec, probe: Probe) -> Path:
    """Where the manifest of this host's tree is kept between fetches."""
    key = content_hash(f"{spec.user}@{spec.host}:{spec.port}:{probe.root}:{probe.top}".encode())
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in spec.host)
    return cache_root() / MANIFESTS.name / f"{safe}-{key[:16]}-{MANIFESTS.version}.json"


async def fetch(
    spec: RemoteSpec, options: SshOptions, progress: Progress | None, hint: PackageHint
) -> FetchResult:
    """SPEC's tree, fetched where it changed since the last fetch (HINT: the package looked
    for where SPEC has no path)."""
    if spec.path is None and not hint.name:
        raise PackageNotFound(
            f"{spec.text} names no path, and no package is expected there",
            f"give the path: {spec.label}:/path/to/the/tree",
        )
    started = time.monotonic()
    async with await connect(spec, options) as conn:
        probed = await start_probe(conn, spec, hint, options.idle_timeout)
        probe = probed.probe
        mirror = mirror_path(spec, probe)
        recorded = read_mirror(mirror)
        previous = recorded.get("files", {})
        blobs = BlobStore(cache_root() / "blobs")
        files: dict[str, str] = {}
        needed: list[str] = []
        for path, (size, mtime) in probe.manifest.items():
            kept = unchanged(previous.get(path), size, mtime, blobs)
            if kept is not None:
                files[path] = kept
            else:
                needed.append(path)
        compressor = choose_compressor(probe.tools, probed.link_rate)
        received = 0
        arrived: dict[str, str] = {}
        warnings = list(probe.warnings)
        try:
            probed.send(compressor, needed)
            if needed:
                got = await receive(
                    probed.process,
                    spec,
                    compressor,
                    set(needed),
                    blobs,
                    progress,
                    options.idle_timeout,
                )
                arrived = got.files
                files.update(arrived)
                received = got.received
                # Grown past the cap since the probe listed them: skipped as the listed ones.
                warnings += [w for path, size in got.skipped if (w := over_size_cap(path, size))]
        except (asyncssh.Error, OSError) as exc:
            raise lost_connection(spec) from exc
        finally:
            probed.process.close()
    snapshot = remote_snapshot(spec, probe, files, blobs, warnings)
    entries = {p: [probe.manifest[p][0], probe.manifest[p][1], files[p]] for p in files}
    # What was fetched, for later commands (audit): written last, so a broken run leaves none.
    record = {"root": probe.root, "source": snapshot.meta, "git_modified_files": probe.dirty}
    if {**record, "files": entries} != recorded:  # unchanged: no 0.4 MB JSON to write
        write_atomic(mirror, json.dumps({**record, "files": entries}).encode())
    # Counted as the snapshot's files are: a file skipped, or beside the package (its RECORD
    # and METADATA), is not one of them.
    fetched = sum(path in snapshot.files for path in arrived)
    if progress is not None:
        progress(spec.label, fetched, fetched, received)
    return FetchResult(
        spec=spec,
        snapshot=snapshot,
        probe=probe,
        fetched_files=fetched,
        fetched_bytes=received,
        seconds=time.monotonic() - started,
        compressor=compressor if needed else "-",
    )


def unchanged(entry: object, size: int, mtime: str, blobs: BlobStore) -> str | None:
    """The content hash the mirror ENTRY (`[size, mtime, hash]`) records, if the file still
    has that SIZE and MTIME and its blob is stored; else None (a damaged entry too)."""
    if type(entry) is not list or len(entry) != 3 or entry[0] != size or entry[1] != mtime:
        return None
    digest = entry[2]
    return digest if type(digest) is str and blobs.has(digest) else None


def load_mirror(path: Path) -> dict[str, list]:
    return read_mirror(path).get("files", {})


def read_mirror(path: Path) -> dict[str, Any]:
    """The mirror record at PATH, or {} if missing or unreadable."""
    try:
        found = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) and isinstance(found.get("files"), dict) else {}


def remote_snapshot(
    spec: RemoteSpec,
    probe: Probe,
    files: dict[str, str],
    blobs: BlobStore,
    warnings: list[str] | None = None,
) -> Snapshot:
    python = {p: h for p, h in sorted(files.items()) if p.endswith(".py")}
    if not python:
        raise RemotePathMissing(
            f"{probe.root} on {spec.label} holds no Python file",
            "point at the folder that holds the package",
        )
    meta = {
        "host": spec.label,
        "root": probe.root,
        "package": probe.top,
        "git_commit": probe.git_commit,
        "git_modified": str(len(probe.dirty)),
    }
    if probe.candidates:
        meta["chosen_because"] = probe.candidates[0][0]
    snapshot = Snapshot(
        label=spec.text,
        root=Path(probe.root),
        files=python,
        warnings=tuple(warnings or ()),
        meta=meta,
        blobs=blobs,
    )
    version = package_version(snapshot, probe.top, files, blobs)
    if version:
        snapshot.meta["version"] = version
    return snapshot


def package_version(snapshot: Snapshot, top: str, files: dict[str, str], blobs: BlobStore) -> str:
    """From `*.dist-info/METADATA`, else `__version__ = ...` in the package's `version.py`
    or `_version.py` (setuptools-scm and vcs-versioning write the latter)."""
    for path, digest in files.items():
        if path.endswith(".dist-info/METADATA"):
            for line in blobs.read(digest).decode("utf-8", "replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    prefix = f"{top}/" if top != "." else ""
    for name in ("version.py", "_version.py"):
        if f"{prefix}{name}" in snapshot.files:
            text = snapshot.read(f"{prefix}{name}").decode("utf-8", "replace")
            found = VERSION_LINE.search(text)
            if found:
                return found[1]
    return ""


def fetch_many(
    specs: list[RemoteSpec],
    options: SshOptions,
    progress: Progress | None,
    hint: PackageHint,
) -> list[FetchResult | SgtraceError]:
    """Fetch from several hosts at once; each gets its result or its error."""

    async def one(spec: RemoteSpec) -> FetchResult | SgtraceError:
        try:
            return await fetch(spec, options, progress, hint)
        except SgtraceError as error:
            return error
        except (OSError, asyncssh.Error) as exc:
            return connection_error(spec, exc)

    results: list[FetchResult | SgtraceError] = []

    async def every() -> None:
        # Kept out of the task's result: asyncio.run formats the finished task when it puts
        # the SIGINT handler back (Python 3.11), which costs 35 ms with 4,700 files in it.
        results.extend(await asyncio.gather(*(one(spec) for spec in specs)))

    asyncio.run(every())
    return results


def fetch_one(
    spec: RemoteSpec, options: SshOptions, progress: Progress | None, hint: PackageHint
) -> FetchResult:
    result = fetch_many([spec], options, progress, hint)[0]
    if isinstance(result, SgtraceError):
        raise result
    return result
