"""The server log `explain` and `walk --log` read: a file, standard input, a pipe, or a systemd
unit's journal on the source's host, opened as a `Log` that explain reads as it arrives, once
per pass, never whole.

Every read is bounded by the bytes actually read, never by the size a file gives (a device
says 0): a file is read from its end, at most MAX_LOG_BYTES, the same bytes at each pass; a
stream (standard input, a FIFO, `<(command)`) up to MAX_LOG_BYTES, and refused past it, since
its end cannot be had without reading all of it; it is kept in a temporary file while it is
read, since it cannot be read twice. A device or a socket is refused unopened. A stream that
stays silent is said to be waited for, so that a FIFO nothing writes to does not look like a
hang."""

from __future__ import annotations

import argparse
import codecs
import hashlib
import os
import select
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tracer.analyses.explain.logread import Log
from tracer.errors import LogUnreadable

if TYPE_CHECKING:
    from tracer.sources.remote import SshOptions

MAX_LOG_BYTES = 256 << 20  # a longer log is read from its end: the newest start is there
HEAD_BYTES = 64 << 10  # a log's first bytes, looked at (compressed? text?) before the rest
CHUNK_BYTES = 1 << 18
PATIENCE_SECONDS = 1.0  # a stream silent this long is said to be waited for
TEXT_BYTES = bytes(range(0x20, 0x100)) + b"\t\n\r\x1b\x0c\x08"  # a log's bytes, colours too
STDIN = "standard input"
GIVE_LOG = "give the server's log file, or - to read it from standard input"
NOT_A_LOG = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def open_log(args: argparse.Namespace, ssh_options: SshOptions | None) -> Log:
    """The log ARGS name, read as it arrives each time it is read: a file's end, standard input
    or a stream kept in a temporary file first (it cannot be read twice), a journal's text."""
    if args.log == "-":
        return read_open(duplicate(stdin_fd(), STDIN), STDIN)
    if args.log is not None:
        return read_path(Path(args.log).expanduser(), args.log)
    from tracer.cli.common import PACKAGE
    from tracer.sources.journal import read_journal
    from tracer.sources.remote import SshOptions, parse_remote

    remote = None if Path(args.source).expanduser().exists() else parse_remote(args.source)
    return Log.of_text(read_journal(args.journal, remote, ssh_options or SshOptions(), PACKAGE))


def read_log_text(args: argparse.Namespace, ssh_options: SshOptions | None) -> str:
    """The whole text of the log ARGS name (`walk --log`)."""
    return "".join(open_log(args, ssh_options).chunks())


def log_digest(log: Log) -> str:
    """LOG's content hash (of its text, as `content_hash` makes it), read as it arrives: what
    the fits of releases are kept by."""
    digest = hashlib.blake2b(digest_size=16)
    for chunk in log.chunks():
        digest.update(chunk.encode())
    return digest.hexdigest()


def stdin_fd() -> int:
    """Standard input's descriptor; -1 when it is closed (reading it then says so)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # None when closed; no descriptor at all
        return -1


def duplicate(fd: int, name: str) -> int:
    """A descriptor of FD's file the log may close (standard input stays open)."""
    try:
        return os.dup(fd)
    except OSError as exc:
        raise unreadable(name, exc) from None


def described(name: str) -> str:
    return name if name == STDIN else f"the log {name}"


def read_path(path: Path, name: str) -> Log:
    """The log at PATH: looked at before it is opened (a device is never opened), opened
    without blocking (a FIFO nothing writes to yet), and looked at again once open."""
    try:
        refuse_device(path.stat().st_mode, name)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise unreadable(name, exc) from None
    return read_open(fd, name)


def read_open(fd: int, name: str) -> Log:
    """The log open as FD (the log's to close): a regular file's end, or a stream (a pipe, a
    FIFO, a socket, a terminal) up to the cap, kept in a temporary file."""
    handle = os.fdopen(fd, "rb", buffering=0)
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            start = max(0, info.st_size - MAX_LOG_BYTES)
            return log_file(LogBytes(handle, start, name).measured(), name)
        if not (stat.S_ISSOCK(info.st_mode) or os.isatty(fd)):
            refuse_device(info.st_mode, name)
        return log_file(read_stream(handle, name), name)
    except OSError as exc:
        handle.close()
        raise unreadable(name, exc) from None
    except LogUnreadable:
        handle.close()
        raise


def unreadable(name: str, error: OSError) -> LogUnreadable:
    return LogUnreadable(f"cannot read {described(name)}: {error.strerror or error}", GIVE_LOG)


def refuse_device(mode: int, name: str) -> None:
    """LogUnreadable unless MODE is a regular file's or a FIFO's."""
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return
    kind = next((kind for test, kind in NOT_A_LOG if test(mode)), "not a file")
    raise LogUnreadable(f"{described(name)} is {kind}, not a log", GIVE_LOG)


class LogBytes:
    """The bytes of an open regular file from START on, read again at each pass: as many as
    the first read found (a log still written to grows meanwhile), MAX_LOG_BYTES at most."""

    def __init__(self, handle: BinaryIO, start: int, name: str) -> None:
        self.handle, self.start, self.name = handle, start, name
        self.length = 0
        self.head = b""  # the first HEAD_BYTES: what the log is (compressed? text?)
        self.nuls = 0  # NUL bytes: a text holds none

    def measured(self) -> LogBytes:
        """Read through once: how long it is, its head, its NULs."""
        offset = self.start
        while self.length < MAX_LOG_BYTES:
            data = os.pread(
                self.handle.fileno(), min(CHUNK_BYTES, MAX_LOG_BYTES - self.length), offset
            )
            if not data:
                break
            if len(self.head) < HEAD_BYTES:
                self.head += data[: HEAD_BYTES - len(self.head)]
            self.nuls += data.count(b"\0")
            self.length += len(data)
            offset += len(data)
        return self

    def chunks(self) -> Iterator[bytes]:
        offset, end = self.start, self.start + self.length
        while offset < end:
            data = os.pread(self.handle.fileno(), min(CHUNK_BYTES, end - offset), offset)
            if not data:
                raise LogUnreadable(
                    f"{described(self.name)} was cut short while it was read",
                    "give a copy of the log that nothing writes to",
                )
            offset += len(data)
            yield data


def log_file(data: LogBytes, name: str) -> Log:
    """DATA read as text; a compressed or binary file is one clear error, UTF-16 is read as
    such."""
    refuse_binary(data.head, name)
    if data.head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        encoding = "utf-16"
    elif data.nuls > data.length // 100:
        raise LogUnreadable(f"{described(name)} is not text", "give the server's log as text")
    else:
        encoding = "utf-8"

    def chunks() -> Iterator[str]:
        decoder = codecs.getincrementaldecoder(encoding)("replace")
        for chunk in data.chunks():
            yield decoder.decode(chunk)
        yield decoder.decode(b"", final=True)

    return Log(chunks)


def read_stream(handle: BinaryIO, name: str) -> LogBytes:
    """All a stream sends, up to MAX_LOG_BYTES (LogUnreadable past it), kept in a temporary
    file. Its first bytes are looked at as soon as they come, so a binary stream (/dev/zero
    piped) stops at once."""
    fd = handle.fileno()
    wait_for(fd, name)
    os.set_blocking(fd, True)
    kept = keeper(name)
    data = LogBytes(kept, 0, name)
    while chunk := os.read(fd, CHUNK_BYTES):
        if data.length + len(chunk) > MAX_LOG_BYTES:
            kept.close()
            raise LogUnreadable(
                f"{described(name)} sent over {MAX_LOG_BYTES >> 20} MB, and a stream is read "
                "from its start",
                "give the log as a file (it is read from its end), or pipe in only its end: "
                f"tail -c {MAX_LOG_BYTES >> 20}M server.log | sgtrace explain SOURCE --log -",
            )
        if len(data.head) < HEAD_BYTES:
            data.head += chunk[: HEAD_BYTES - len(data.head)]
            if len(data.head) == HEAD_BYTES:
                refuse_binary(data.head, name)
        try:
            kept.write(chunk)
            kept.flush()  # read back by its descriptor
        except OSError as exc:
            kept.close()
            raise not_kept(name, exc) from None
        data.nuls += chunk.count(b"\0")
        data.length += len(chunk)
    handle.close()
    return data


def keeper(name: str) -> BinaryIO:
    """A temporary file, gone once closed, that a stream is kept in while it is read."""
    try:
        return tempfile.TemporaryFile(prefix="sgtrace-log-")
    except OSError as exc:
        raise not_kept(name, exc) from None


def not_kept(name: str, error: OSError) -> LogUnreadable:
    return LogUnreadable(
        f"cannot keep {described(name)} while it is read: {error.strerror or error}",
        f"set TMPDIR to a folder with room for {MAX_LOG_BYTES >> 20} MB, or give the log as a file",
    )


def wait_for(fd: int, name: str) -> None:
    """Return when FD has something to read (or is closed). If it stays silent for
    PATIENCE_SECONDS (a FIFO nothing writes to yet, a terminal), say on stderr what is
    waited for, then wait."""
    if select.select([fd], [], [], PATIENCE_SECONDS)[0]:
        return
    if name != STDIN:
        where = f"the FIFO {name}, for a program to write to it"
    elif os.isatty(fd):
        where = "the terminal (paste it, then Ctrl-D)"
    else:
        where = "standard input"
    print(f"sgtrace: waiting for the log on {where}; Ctrl-C stops", file=sys.stderr, flush=True)
    select.select([fd], [], [])


def refuse_binary(head: bytes, name: str) -> None:
    """LogUnreadable when a log's first bytes HEAD are compressed, or not text: more than 1%
    control bytes (random bytes hold 11%; logs none but tabs, line ends and colours)."""
    if head[:2] == b"\x1f\x8b" or head[:4] == b"\x28\xb5\x2f\xfd":
        decompress = f"zcat {name}" if name != STDIN else "zcat server.log.gz"
        raise LogUnreadable(
            f"{described(name)} is compressed",
            f"decompress it into standard input: {decompress} | sgtrace explain SOURCE --log -",
        )
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return  # UTF-16, read as such
    if len(head.translate(None, TEXT_BYTES)) > len(head) // 100:
        raise LogUnreadable(f"{described(name)} is not text", "give the server's log as text")
