"""The tar stream of a remote tree, read off the probe's own SSH channel as it arrives:
decompressed on the way (a local `zstd -d`/`lz4 -d` process, or zlib), every member checked
(tracer/sources/tarstream.py) and stored into one new pack that is kept only if the whole
archive passed. Reading stops at the archive's end, and at the idle timeout when the host
goes silent; what it may send is capped before and after decompression."""

from __future__ import annotations

import asyncio
import subprocess
import time
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from shutil import which

from tracer.errors import TransferFailed, UnsafeArchive
from tracer.sources.answers import Watchdog
from tracer.sources.blobs import BlobStore, PackWriter
from tracer.sources.remote import IDLE_TIMEOUT, RemoteSpec
from tracer.sources.sshlib import asyncssh
from tracer.sources.tarstream import MAX_TOTAL_BYTES, TarReader

Progress = Callable[[str, int, int, int], None]  # host, files, total files, bytes
CHUNK = 1 << 18
# A link this fast (~320 Mbit/s) moves lz4's output sooner than zstd -1 makes its own on
# a few cores; slower links gain from zstd's smaller stream. The manifest is too short for
# TCP to reach full speed, so the measure errs towards slow, that is towards zstd.
FAST_LINK = 40 << 20  # bytes a second
DECOMPRESSORS = {"zstd": ("zstd", "-d", "-q", "-c"), "lz4": ("lz4", "-d", "-q", "-c")}


# -- choosing --------------------------------------------------------------------------------


def choose_compressor(remote_tools: set[str], link_rate: float | None) -> str:
    """How the remote side compresses the tar, by what pays. The stream is decompressed on
    another core while it arrives, so compression costs little: zstd (multi-threaded, 4.4x
    on Python sources) unless the link was measured fast (LINK_RATE bytes/s, from the
    probe's manifest; None: unknown), where lz4 (3x, at a fraction of the CPU) does better;
    gzip, slower than most links, only on a slow one; else none."""
    fast = link_rate is not None and link_rate >= FAST_LINK
    for name in ("lz4", "zstd") if fast else ("zstd", "lz4"):
        if name in remote_tools and which(name):
            return name
    if "gzip" in remote_tools and not fast:
        return "gzip"
    return "none"


# -- receiving -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Received:
    files: dict[str, str]  # path -> content hash, of every file stored
    skipped: list[tuple[str, int]]  # (path, size) of the files over the size cap, not read
    received: int  # bytes that came over the connection (compressed)


async def receive(
    process: asyncssh.SSHClientProcess,
    spec: RemoteSpec,
    compressor: str,
    wanted: set[str],
    blobs: BlobStore,
    progress: Progress | None,
    idle: float = IDLE_TIMEOUT,
) -> Received:
    """Store the members of the (COMPRESSOR-compressed) tar PROCESS writes, once all of
    WANTED arrived and passed the checks. Nothing is stored if any member fails; a
    connection lost raises TransferFailed, a host silent for IDLE seconds HostStalled."""
    with blobs.writer() as pack, ThreadPoolExecutor(1) as worker:
        batches = Batches(pack, worker)
        reader = TarReader(wanted, spec.label, batches.add)
        try:
            with Watchdog(idle, spec.label, "sending the files") as watchdog:
                meter = Meter(spec.label, len(wanted), progress, watchdog)
                await unpack_all(process, spec, compressor, reader, meter)
        except (asyncssh.Error, OSError) as exc:
            raise broken_transfer(spec) from exc
        finally:
            process.close()
        reader.finish()
        files = batches.digests()
        pack.commit()
    return Received(files, reader.skipped, meter.received)


async def unpack_all(
    process: asyncssh.SSHClientProcess,
    spec: RemoteSpec,
    compressor: str,
    reader: TarReader,
    meter: Meter,
) -> None:
    """The archive through READER up to its end; a stream that stops short of it is told
    apart from a connection that broke (the command then has no exit status)."""
    try:
        await unpack(process, compressor, reader, meter)
    except TransferFailed:
        # A stream that broke off reads as a damaged one: say which it was.
        if process.stdout.at_eof():
            await process.wait()
            if process.exit_status is None:
                raise broken_transfer(spec) from None
        raise
    if not reader.ended:  # the archive is whole once it ended: the status adds nothing
        await process.wait()
        if process.exit_status is None:
            raise broken_transfer(spec)


class Batches:
    """Members handed to one worker thread about a megabyte at a time, which hashes them and
    writes them to the pack (both release the GIL) while the loop decrypts; a batch, not a
    member, per hand-over: a future for each of 4,700 files costs more than the hashing."""

    SIZE = 1 << 20
    IN_FLIGHT = 8  # batches queued at most: a fast host waits for the disk, not our memory

    def __init__(self, pack: PackWriter, worker: ThreadPoolExecutor) -> None:
        self.pack = pack
        self.worker = worker
        self.batch: list[tuple[str, bytes]] = []
        self.size = 0
        self.done: list[Future[dict[str, str]]] = []

    def add(self, path: str, data: bytes) -> None:
        self.batch.append((path, data))
        self.size += len(data)
        if self.size >= self.SIZE:
            self.flush()

    def flush(self) -> None:
        if self.batch:
            if len(self.done) >= self.IN_FLIGHT:
                self.done[-self.IN_FLIGHT].result()
            self.done.append(self.worker.submit(self.store, self.batch))
            self.batch, self.size = [], 0

    def store(self, batch: list[tuple[str, bytes]]) -> dict[str, str]:
        return {path: self.pack.add(data) for path, data in batch}

    def digests(self) -> dict[str, str]:
        """Path -> content hash of every member added, once all are stored."""
        self.flush()
        return {path: digest for future in self.done for path, digest in future.result().items()}


async def unpack(
    process: asyncssh.SSHClientProcess, compressor: str, reader: TarReader, meter: Meter
) -> None:
    """PROCESS's output, decompressed, through READER up to the archive's end."""
    if compressor in DECOMPRESSORS:
        await through_process(process, DECOMPRESSORS[compressor], reader, meter)
        return
    inflate = zlib.decompressobj(wbits=31) if compressor == "gzip" else None
    try:
        while not reader.ended and (chunk := await read(process, meter)):
            if inflate is None:
                reader.feed(chunk)
            else:
                inflated(inflate, chunk, reader)
    except zlib.error as exc:
        raise not_valid("gzip", meter.label) from exc
    if inflate is not None and not inflate.eof and not reader.ended:
        raise TransferFailed(f"the stream from {meter.label} is cut short", "run again")


def inflated(inflate: zlib._Decompress, data: bytes, reader: TarReader) -> None:
    """DATA of a gzip stream through READER, a chunk of output at a time: a small piece of
    input may inflate a thousandfold."""
    while not reader.ended:
        out = inflate.decompress(data, CHUNK)
        if not out:
            return
        reader.feed(out)
        data = inflate.unconsumed_tail


async def read(process: asyncssh.SSHClientProcess, meter: Meter) -> bytes:
    chunk = await process.stdout.read(CHUNK)
    meter.count(len(chunk))
    return chunk


async def through_process(
    process: asyncssh.SSHClientProcess, command: tuple[str, ...], reader: TarReader, meter: Meter
) -> None:
    """The stream through a local decompressor process, whose output a thread feeds to
    READER: decompression and tar checks run on the other core while the loop decrypts."""
    local = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert local.stdin is not None
    loop = asyncio.get_running_loop()
    # Threads of its own: with many hosts at once, the loop's shared pool could fill with
    # readers waiting on decompressors that wait on writes queued behind them.
    with ThreadPoolExecutor(2) as threads:
        unpacking = loop.run_in_executor(threads, feed_all, local, reader)
        try:
            try:
                while not unpacking.done() and (chunk := await read(process, meter)):
                    await loop.run_in_executor(threads, local.stdin.write, chunk)
                local.stdin.close()
            except (BrokenPipeError, ConnectionResetError):
                pass  # it quit: its status, or the reader's error, says why
            await unpacking
        finally:
            if not unpacking.done():  # this side failed: end the thread's input
                local.kill()
            await asyncio.gather(unpacking, return_exceptions=True)
            status = await loop.run_in_executor(threads, local.wait)
    if status != 0 and not reader.ended:  # once the archive ended, it was stopped on purpose
        raise not_valid(command[0], meter.label)


def feed_all(local: subprocess.Popen[bytes], reader: TarReader) -> None:
    assert local.stdout is not None
    try:
        with local.stdout:
            while not reader.ended and (data := local.stdout.read1(CHUNK)):
                reader.feed(data)
    except BaseException:
        local.kill()  # else the decompressor blocks, and the writes to it with it
        raise
    if reader.ended:  # what it still has is padding, or a host that never stops
        local.kill()


def not_valid(compressor: str, label: str) -> TransferFailed:
    return TransferFailed(f"the stream from {label} is not valid {compressor}", "run again")


class Meter:
    """Bytes received, refused past MAX_TOTAL_BYTES, reported to PROGRESS every 0.2 s; each
    chunk tells WATCHDOG the host is still sending."""

    def __init__(
        self, label: str, files: int, progress: Progress | None, watchdog: Watchdog
    ) -> None:
        self.label = label
        self.files = files
        self.progress = progress
        self.watchdog = watchdog
        self.received = 0
        self.last = 0.0

    def count(self, size: int) -> None:
        self.watchdog.heard()
        self.received += size
        if self.received > MAX_TOTAL_BYTES:
            raise UnsafeArchive(f"{self.label} sent over 2 GiB", "nothing was written")
        if self.progress is not None and time.monotonic() - self.last > 0.2:
            self.last = time.monotonic()
            self.progress(self.label, 0, self.files, self.received)


def broken_transfer(spec: RemoteSpec) -> TransferFailed:
    return TransferFailed(
        f"the connection to {spec.label} broke during the transfer",
        "run the command again: the cache is as it was, and the next run completes it",
    )
