"""The tar stream of a remote tree: read it off one SSH channel, decompress it, and check
every member before any is stored in the content-addressed cache."""

from __future__ import annotations

import gzip
import io
import shlex
import subprocess
import tarfile
import time
from collections.abc import Callable
from pathlib import PurePosixPath

import asyncssh

from tracer.errors import (
    TransferFailed,
    UnsafeArchive,
)
from tracer.sources.blobs import BlobStore
from tracer.sources.remote import RemoteSpec
from tracer.sources.snapshot import MAX_FILE_BYTES

MAX_TOTAL_BYTES = 2 << 30
Progress = Callable[[str, int, int, int], None]  # host, files, total files, bytes


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


def store_members(archive: bytes, wanted: set[str], blobs: BlobStore, label: str) -> dict[str, str]:
    """Check every member of ARCHIVE (only WANTED regular files, no absolute paths, no `..`,
    no links or devices, sizes capped, none missing), then store them by content hash: one
    bad member and nothing is stored. Returns path -> hash."""
    return blobs.add(checked_members(archive, wanted, label))


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
