"""Fetch a tree of Python files from a host over SSH (asyncssh), into the content-addressed
cache, incrementally: one connection per host, one probe command (tools, git facts and a
manifest of sizes and mtimes), then one `tar | zstd` stream of the files that changed."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import os
import shlex
import subprocess
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import asyncssh

from tracer import presets
from tracer.errors import (
    AuthFailed,
    ConnectionTimeout,
    HostKeyChanged,
    HostKeyUnknown,
    HostUnreachable,
    PackageNotFound,
    RemotePathMissing,
    RemoteToolMissing,
    SgtraceError,
    TransferFailed,
    UnsafeArchive,
)
from tracer.sources.cache import cache_root, content_hash, write_atomic
from tracer.sources.remote import RemoteSpec, probe_script
from tracer.sources.snapshot import MAX_FILE_BYTES, Snapshot

MAX_FILES = 50_000
MAX_TOTAL_BYTES = 2 << 30
Progress = Callable[[str, int, int, int], None]  # host, files, total files, bytes


@dataclass(frozen=True, slots=True)
class SshOptions:
    known_hosts: Path | None = None  # None: ~/.ssh/known_hosts
    config: Path | None = None  # None: ~/.ssh/config
    identities: tuple[Path, ...] = ()
    accept_new_host_key: bool = False  # like OpenSSH's StrictHostKeyChecking=accept-new
    check_host_key: bool = True  # False only when the user explicitly opts out
    timeout: float = 15.0


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


# -- connecting ----------------------------------------------------------------------------


def connect_kwargs(spec: RemoteSpec, options: SshOptions) -> dict[str, object]:
    kwargs: dict[str, object] = {"host": spec.host, "connect_timeout": options.timeout}
    if spec.port:
        kwargs["port"] = spec.port
    if spec.user:
        kwargs["username"] = spec.user
    if options.config is not None:
        kwargs["config"] = [str(options.config)]
    if options.identities:
        kwargs["client_keys"] = [str(p) for p in options.identities]
    if options.known_hosts is not None:
        # A file not made yet knows no host (asyncssh would fail to read it); accepting a
        # new key creates it.
        exists = options.known_hosts.exists()
        kwargs["known_hosts"] = (
            str(options.known_hosts) if exists else asyncssh.import_known_hosts("")
        )
    if not options.check_host_key:
        kwargs["known_hosts"] = None
    return kwargs


def known_hosts_path(options: SshOptions) -> Path:
    return options.known_hosts or Path.home() / ".ssh" / "known_hosts"


async def connect(spec: RemoteSpec, options: SshOptions) -> asyncssh.SSHClientConnection:
    """A verified connection. An unknown host key is refused unless the user said to accept
    new keys (then it is recorded); a changed key is refused always."""
    kwargs = connect_kwargs(spec, options)
    try:
        return await asyncssh.connect(**kwargs)
    except asyncssh.HostKeyNotVerifiable:
        pass
    except BaseException as exc:
        raise connection_error(spec, exc) from exc
    # Look at the key the host offers, without trusting it for anything yet.
    try:
        probe = await asyncssh.connect(**{**kwargs, "known_hosts": None})
    except BaseException as exc:
        raise connection_error(spec, exc) from exc
    key = probe.get_server_host_key()
    address = probe.get_extra_info("peername")[0]
    probe.close()
    name, port = await checked_name(kwargs)
    fingerprint = key.get_fingerprint() if key is not None else "?"
    path = known_hosts_path(options)
    if recorded_keys(path, name, address, port):
        raise HostKeyChanged(
            f"the host key of {spec.label} has CHANGED (now {fingerprint}); this may be an "
            "attack, so sgtrace refuses",
            f"if the change is expected, remove the old key with "
            f"`ssh-keygen -R {known_hosts_name(name, port)} -f {path}`",
        )
    if not options.accept_new_host_key:
        raise HostKeyUnknown(
            f"the host key of {spec.label} is not in {path} ({fingerprint})",
            "check it, then run again with --accept-new-host-key to record it",
        )
    record_key(path, known_hosts_name(name, port), key)
    try:
        return await asyncssh.connect(**{**kwargs, "known_hosts": str(path)})
    except BaseException as exc:
        raise connection_error(spec, exc) from exc


async def checked_name(kwargs: dict[str, object]) -> tuple[str, int]:
    """The name and port asyncssh looks up in known_hosts for these connect arguments: the
    ssh config's HostKeyAlias, else its HostName, else the host as given (an alias of
    ~/.ssh/config is never the name checked)."""
    # `()` as asyncssh.connect passes it: read ~/.ssh/config, take its Port.
    defaults: dict[str, object] = {"config": (), "port": ()}
    settings = await asyncssh.SSHClientConnectionOptions.construct(**{**defaults, **kwargs})
    return settings.host_key_alias or settings.host, settings.port


def known_hosts_name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def recorded_keys(path: Path, host: str, address: str, port: int) -> bool:
    if not path.exists():
        return False
    known = asyncssh.read_known_hosts(str(path))
    return any(known.match(name, address, port)[0] for name in (host, address))


def record_key(path: Path, name: str, key: asyncssh.SSHKey) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = f"{name} {key.export_public_key('openssh').decode().strip()}\n"
    old = path.read_bytes() if path.exists() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    write_atomic(path, old + line.encode())


def connection_error(spec: RemoteSpec, exc: BaseException) -> SgtraceError:
    if isinstance(exc, SgtraceError):
        return exc
    if isinstance(exc, asyncssh.PermissionDenied):
        return AuthFailed(
            f"{spec.label} refused every key offered",
            "load a key into ssh-agent, give -i KEY, or set IdentityFile in ~/.ssh/config",
        )
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return ConnectionTimeout(
            f"{spec.label} did not answer in time", "check that the host is up and reachable"
        )
    if isinstance(exc, OSError | asyncssh.Error):
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc)
        return HostUnreachable(
            f"cannot connect to {spec.label} ({reason})",
            "check the host name and port, or its Host entry in ~/.ssh/config",
        )
    return HostUnreachable(f"cannot connect to {spec.label} ({exc})", "check the host")


# -- probing -------------------------------------------------------------------------------


def parse_probe(output: bytes) -> Probe:
    head, _, manifest = output.partition(b"manifest\n")
    probe = Probe()
    for line in head.decode("utf-8", "replace").splitlines():
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
    for record in manifest.split(b"\0"):
        if not record:
            continue
        size, mtime, path = record.decode("utf-8", "surrogateescape").split(" ", 2)
        if path.startswith("./"):
            path = path[2:]
        probe.manifest[path] = (int(size), mtime)
    return probe


async def run_probe(conn: asyncssh.SSHClientConnection, spec: RemoteSpec) -> Probe:
    args = [spec.path or "", presets.PACKAGE, *presets.CHECKOUT_LOCATIONS]
    command = "sh -c " + shlex.quote(probe_script()) + " sgtrace-probe " + shlex.join(args)
    try:
        result = await conn.run(command, encoding=None, check=False)
    except (asyncssh.Error, OSError) as exc:
        raise lost_connection(spec) from exc
    if result.exit_status is None:
        raise lost_connection(spec)
    probe = parse_probe(result.stdout or b"")
    where = spec.path or "(searched)"
    if probe.error == "missing":
        raise RemotePathMissing(
            f"{where} does not exist on {spec.label}", "check the path (ls it over ssh)"
        )
    if probe.error == "nopackage":
        raise PackageNotFound(
            f"no {presets.PACKAGE} found on {spec.label}: no running server, systemd unit, "
            f"importable package or checkout in {', '.join(presets.CHECKOUT_LOCATIONS)}",
            f"give the path: {spec.label}:/path/to/folder-holding-{presets.PACKAGE}",
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


def lost_connection(spec: RemoteSpec) -> TransferFailed:
    return TransferFailed(f"the connection to {spec.label} was lost", "run the command again")


# -- transferring --------------------------------------------------------------------------


def choose_compressor(remote_tools: set[str]) -> str:
    if "zstd" in remote_tools and local_zstd():
        return "zstd"
    return "gzip" if "gzip" in remote_tools else "none"


def local_zstd() -> bool:
    from shutil import which

    return which("zstd") is not None


async def transfer(
    conn: asyncssh.SSHClientConnection,
    spec: RemoteSpec,
    root: str,
    paths: list[str],
    compressor: str,
    progress: Progress | None,
    total_files: int,
) -> tuple[bytes, int]:
    """The tar archive of PATHS under ROOT, streamed as one compressed channel, and the
    bytes received. A connection lost on the way raises TransferFailed."""
    compress = {"zstd": " | zstd -1 -q -c", "gzip": " | gzip -1 -c", "none": ""}[compressor]
    command = f"cd {shlex.quote(root)} && tar --null -T - -cf -{compress}"
    listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    try:
        process = await conn.create_process(command, encoding=None)
        process.stdin.write(listing)
        process.stdin.write_eof()
        data = await read_stream(process, spec, progress, total_files)
        await process.wait()
    except (asyncssh.Error, OSError) as exc:
        raise broken_transfer(spec) from exc
    if process.exit_status is None:
        raise broken_transfer(spec)
    return decompress(data, compressor, spec.label), len(data)


async def read_stream(
    process: asyncssh.SSHClientProcess,
    spec: RemoteSpec,
    progress: Progress | None,
    total_files: int,
) -> bytes:
    """All of PROCESS's stdout, refused past MAX_TOTAL_BYTES."""
    chunks: list[bytes] = []
    received = 0
    last = 0.0
    while True:
        chunk = await process.stdout.read(1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        received += len(chunk)
        if received > MAX_TOTAL_BYTES:
            process.close()
            raise UnsafeArchive(f"{spec.label} sent over 2 GiB", "nothing was written")
        if progress is not None and time.monotonic() - last > 0.2:
            last = time.monotonic()
            progress(spec.label, 0, total_files, received)


def broken_transfer(spec: RemoteSpec) -> TransferFailed:
    return TransferFailed(
        f"the connection to {spec.label} broke during the transfer",
        "run the command again: the cache is as it was, and the next run completes it",
    )


def decompress(data: bytes, compressor: str, label: str) -> bytes:
    """DATA as the remote compressor wrote it -> the tar archive."""
    if compressor == "zstd":
        done = subprocess.run(["zstd", "-d", "-q", "-c"], input=data, capture_output=True)
        if done.returncode != 0:
            raise TransferFailed(f"the stream from {label} is not valid zstd", "run again")
        return done.stdout
    if compressor == "gzip":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise TransferFailed(f"the stream from {label} is not valid gzip", "run again") from exc
    return data


def store_members(archive: bytes, wanted: set[str], blobs: Path, label: str) -> dict[str, str]:
    """Check every member of ARCHIVE (only WANTED regular files, no absolute paths, no `..`,
    no links or devices, sizes capped, none missing), then store each by content hash: one
    bad member and nothing is stored. Returns path -> hash."""
    return {
        name: store_blob(blobs, data)
        for name, data in checked_members(archive, wanted, label).items()
    }


def checked_members(archive: bytes, wanted: set[str], label: str) -> dict[str, bytes]:
    """Path -> bytes of every member of ARCHIVE, once each has passed store_members' checks."""
    members: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
            for member in tar:
                name = member.name[2:] if member.name.startswith("./") else member.name
                parts = PurePosixPath(name).parts
                if name.startswith("/") or ".." in parts:
                    raise UnsafeArchive(
                        f"{label} sent a member that escapes the tree: {member.name!r}",
                        "nothing was written; check the host",
                    )
                if not member.isfile():
                    raise UnsafeArchive(
                        f"{label} sent a link or special file: {member.name!r}",
                        "nothing was written; check the host",
                    )
                if name not in wanted:
                    raise UnsafeArchive(
                        f"{label} sent a file that was not asked for: {member.name!r}",
                        "nothing was written; check the host",
                    )
                total += member.size
                if member.size > MAX_FILE_BYTES * 4 or total > MAX_TOTAL_BYTES:
                    raise UnsafeArchive(f"{label} sent an oversized file", "nothing was written")
                source = tar.extractfile(member)
                members[name] = source.read() if source is not None else b""
    except tarfile.TarError as exc:
        raise TransferFailed(f"the archive from {label} is damaged ({exc})", "run again") from exc
    missing = wanted - members.keys()
    if missing:
        raise TransferFailed(
            f"{label} did not send {len(missing)} file(s), e.g. {sorted(missing)[0]} "
            "(changed or removed during the fetch?)",
            "run the command again",
        )
    return members


def store_blob(blobs: Path, data: bytes) -> str:
    digest = content_hash(data)
    path = blobs / digest[:2] / digest
    if not path.exists():
        write_atomic(path, data)
    return digest


# -- the whole fetch -----------------------------------------------------------------------


def mirror_path(spec: RemoteSpec, probe: Probe) -> Path:
    """Where the manifest of this host's tree is kept between fetches."""
    key = content_hash(f"{spec.user}@{spec.host}:{spec.port}:{probe.root}:{probe.top}".encode())
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in spec.host)
    return cache_root() / "remote" / f"{safe}-{key[:16]}.json"


async def fetch(
    spec: RemoteSpec, options: SshOptions, progress: Progress | None = None
) -> FetchResult:
    started = time.monotonic()
    async with await connect(spec, options) as conn:
        probe = await run_probe(conn, spec)
        mirror = mirror_path(spec, probe)
        previous = load_mirror(mirror)
        blobs = cache_root() / "blobs"
        files: dict[str, str] = {}
        needed: list[str] = []
        for path, (size, mtime) in probe.manifest.items():
            old = previous.get(path)
            if (
                old
                and old[0] == size
                and old[1] == mtime
                and (blobs / old[2][:2] / old[2]).exists()
            ):
                files[path] = old[2]
            else:
                needed.append(path)
        compressor = choose_compressor(probe.tools)
        received = 0
        if needed:
            archive, received = await transfer(
                conn, spec, probe.root, needed, compressor, progress, len(probe.manifest)
            )
            files.update(store_members(archive, set(needed), blobs, spec.label))
    entries = {p: [probe.manifest[p][0], probe.manifest[p][1], files[p]] for p in files}
    write_atomic(mirror, json.dumps({"root": probe.root, "files": entries}).encode())
    if progress is not None:
        progress(spec.label, len(files), len(files), received)
    snapshot = remote_snapshot(spec, probe, files, blobs)
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
    try:
        return json.loads(path.read_bytes())["files"]
    except (OSError, ValueError, KeyError):
        return {}


def remote_snapshot(spec: RemoteSpec, probe: Probe, files: dict[str, str], blobs: Path) -> Snapshot:
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


def package_version(snapshot: Snapshot, top: str, files: dict[str, str], blobs: Path) -> str:
    """From `*.dist-info/METADATA`, else `version.py` of the package."""
    for path, digest in files.items():
        if path.endswith(".dist-info/METADATA"):
            for line in (blobs / digest[:2] / digest).read_text("utf-8", "replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    version_file = f"{top}/version.py" if top != "." else "version.py"
    if version_file in snapshot.files:
        text = snapshot.read(version_file).decode("utf-8", "replace")
        for line in text.splitlines():
            if line.startswith("__version__"):
                return line.split("=", 1)[1].strip().strip("'\"")
    return ""


def fetch_many(
    specs: list[RemoteSpec], options: SshOptions, progress: Progress | None = None
) -> list[FetchResult | SgtraceError]:
    """Fetch from several hosts at once; each gets its result or its error."""

    async def one(spec: RemoteSpec) -> FetchResult | SgtraceError:
        try:
            return await fetch(spec, options, progress)
        except SgtraceError as error:
            return error
        except (OSError, asyncssh.Error) as exc:
            return connection_error(spec, exc)

    async def every() -> list[FetchResult | SgtraceError]:
        return list(await asyncio.gather(*(one(spec) for spec in specs)))

    return asyncio.run(every())


def fetch_one(
    spec: RemoteSpec, options: SshOptions, progress: Progress | None = None
) -> FetchResult:
    result = fetch_many([spec], options, progress)[0]
    if isinstance(result, SgtraceError):
        raise result
    return result


def default_options() -> SshOptions:
    """Options from the environment, for commands that take a source but no SSH flags."""
    known = os.environ.get("SGTRACE_KNOWN_HOSTS")
    return SshOptions(known_hosts=Path(known) if known else None)
