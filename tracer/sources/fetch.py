"""Fetch a tree of Python files from a host over SSH into the content-addressed cache,
incrementally: one connection per host and ONE remote command, which first reports (tools,
git facts and a manifest of sizes and mtimes), then streams the `tar` of the files the
client asks for (those whose size or mtime changed), compressed by what pays."""

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
    TransferFailed,
)
from tracer.sources.archive import Progress, choose_compressor, receive
from tracer.sources.blobs import BlobStore
from tracer.sources.cache import cache_root, content_hash, write_atomic
from tracer.sources.hint import PackageHint
from tracer.sources.remote import RemoteSpec, SshOptions, probe_script
from tracer.sources.snapshot import Snapshot
from tracer.sources.ssh import connect, connection_error
from tracer.sources.sshlib import asyncssh
from tracer.versions import MANIFESTS

MAX_FILES = 50_000
VERSION_LINE = re.compile(r"^__version__\s*=\s*(?:\w+\s*=\s*)*['\"]([^'\"]+)['\"]", re.M)
PROBE_READ = 1 << 16  # small reads while the manifest streams, to time its arrival
MIN_TIMED_BYTES = 64 << 10  # a manifest shorter than this says nothing of the link


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


@dataclass
class FetchResult:
    spec: RemoteSpec
    snapshot: Snapshot
    probe: Probe
    fetched_files: int
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
            "fetched_bytes": self.fetched_bytes,
            "seconds": round(self.seconds, 3),
            "compressor": self.compressor,
        }


# -- probing -------------------------------------------------------------------------------


def parse_probe(output: bytes) -> Probe:
    """The probe's report (probe.sh: lines, the manifest's NUL records, lines), complete or
    cut short by an error line."""
    head, _, rest = output.partition(b"manifest\n")
    end = probe_end(output)
    manifest, trailer = b"", b""
    if end is not None:
        stop = rest.find(b"\0\0") + 1 if rest[:1] != b"\0" else 0
        manifest, trailer = rest[:stop], rest[stop + 1 :]
    probe = Probe()
    for line in (head + trailer).decode("utf-8", "replace").splitlines():
        key, _, value = line.partition("\t")
        if key == "tool":
            probe.tools.add(value)
        elif key == "candidate":
            why, _, path = value.partition("\t")
            probe.candidates.append((why, path))
        elif key == "root":
            probe.root = value
        elif key == "top":
            probe.top = value
        elif key == "git":
            probe.git_toplevel, _, probe.git_commit = value.partition("\t")
        elif key == "dirty":
            probe.dirty.append(value)
        elif key == "error":
            probe.error = value
    for record in manifest.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            size, mtime, path = record.split(" ", 2)
            probe.manifest[path[2:] if path.startswith("./") else path] = (int(size), mtime)
    return probe


def probe_end(output: bytes) -> int | None:
    """Where the probe's report ends in OUTPUT (after its `end` line), or None if not yet."""
    start = output.find(b"manifest\n")
    if start < 0:
        return None
    start += len(b"manifest\n")
    if len(output) <= start:
        return None
    terminator = start if output[start] == 0 else output.find(b"\0\0", start) + 1
    if terminator <= 0:
        return None
    if output.startswith(b"end\n", terminator + 1):
        return terminator + 5
    found = output.find(b"\nend\n", terminator + 1)
    return None if found < 0 else found + 5


async def start_probe(
    conn: asyncssh.SSHClientConnection, spec: RemoteSpec, hint: PackageHint
) -> Probed:
    """Run probe.sh on the host and read its report (HINT: the package looked for where
    SPEC has no path); the command then waits for the list of files to send (Probed.send)."""
    args = [spec.path or "", hint.name, *hint.checkout_locations]
    command = "sh -c " + shlex.quote(probe_script()) + " sgtrace-probe " + shlex.join(args)
    output = bytearray()
    timed: list[tuple[float, int]] = []  # (when, bytes so far) after each read
    try:
        # stderr discarded: unread, it would hold the channel's window and stall the stream.
        process = await conn.create_process(command, encoding=None, stderr=asyncssh.DEVNULL)
        while (end := probe_end(output)) is None:
            chunk = await process.stdout.read(PROBE_READ)
            if not chunk:
                break
            output += chunk
            timed.append((time.perf_counter(), len(output)))
        if end is None:  # the probe stopped early: an error line, or the connection dropped
            await process.wait()
    except (asyncssh.Error, OSError) as exc:
        raise lost_connection(spec) from exc
    if end is None and process.exit_status is None:
        raise lost_connection(spec)
    probe = checked_probe(parse_probe(bytes(output)), spec, hint)
    return Probed(probe, process, link_rate(timed, bytes(output)))


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
    if len(probe.manifest) > MAX_FILES:
        raise TransferFailed(
            f"{probe.root} on {spec.label} holds {len(probe.manifest)} files, over {MAX_FILES}",
            "point at the folder that holds the package, not a whole disk",
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
            listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
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
        probed = await start_probe(conn, spec, hint)
        probe = probed.probe
        mirror = mirror_path(spec, probe)
        recorded = read_mirror(mirror)
        previous = recorded.get("files", {})
        blobs = BlobStore(cache_root() / "blobs")
        files: dict[str, str] = {}
        needed: list[str] = []
        for path, (size, mtime) in probe.manifest.items():
            old = previous.get(path)
            if old and old[0] == size and old[1] == mtime and blobs.has(old[2]):
                files[path] = old[2]
            else:
                needed.append(path)
        compressor = choose_compressor(probe.tools, probed.link_rate)
        received = 0
        try:
            probed.send(compressor, needed)
            if needed:
                fetched, received = await receive(
                    probed.process, spec, compressor, set(needed), blobs, progress
                )
                files.update(fetched)
        except (asyncssh.Error, OSError) as exc:
            raise lost_connection(spec) from exc
        finally:
            probed.process.close()
    snapshot = remote_snapshot(spec, probe, files, blobs)
    entries = {p: [probe.manifest[p][0], probe.manifest[p][1], files[p]] for p in files}
    # What was fetched, for later commands (audit): written last, so a broken run leaves none.
    record = {"root": probe.root, "source": snapshot.meta, "git_modified_files": probe.dirty}
    if {**record, "files": entries} != recorded:  # unchanged: no 0.4 MB JSON to write
        write_atomic(mirror, json.dumps({**record, "files": entries}).encode())
    if progress is not None:
        progress(spec.label, len(needed), len(needed), received)
    return FetchResult(
        spec=spec,
        snapshot=snapshot,
        probe=probe,
        fetched_files=len(needed),
        fetched_bytes=received,
        seconds=time.monotonic() - started,
        compressor=compressor if needed else "-",
    )


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
    spec: RemoteSpec, probe: Probe, files: dict[str, str], blobs: BlobStore
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
        label=spec.text, root=Path(probe.root), files=python, meta=meta, blobs=blobs
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
