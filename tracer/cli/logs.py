"""The server log `explain` and `walk --log` read: a file, standard input, a pipe, or a systemd
unit's journal on the source's host.

Every read is bounded by the bytes actually read, never by the size a file gives (a device
says 0): a file is read from its end, at most MAX_LOG_BYTES; a stream (standard input, a
FIFO, `<(command)`) up to MAX_LOG_BYTES, and refused past it, since its end cannot be had
without reading all of it. A device or a socket is refused unopened. A stream that stays
silent is said to be waited for, so that a FIFO nothing writes to does not look like a hang."""

from __future__ import annotations

import argparse
import os
import select
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.errors import LogUnreadable
from tracer.sources.snapshot import read_at_most

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


def read_log_text(args: argparse.Namespace, ssh_options: SshOptions | None) -> str:
    if args.log == "-":
        return log_text(read_open(stdin_fd(), STDIN), STDIN)
    if args.log is not None:
        return log_text(read_path(Path(args.log).expanduser(), args.log), args.log)
    from tracer.cli.common import PACKAGE
    from tracer.sources.journal import read_journal
    from tracer.sources.remote import SshOptions, parse_remote

    remote = None if Path(args.source).expanduser().exists() else parse_remote(args.source)
    return read_journal(args.journal, remote, ssh_options or SshOptions(), PACKAGE)


def stdin_fd() -> int:
    """Standard input's descriptor; -1 when it is closed (reading it then says so)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # None when closed; no descriptor at all
        return -1


def described(name: str) -> str:
    return name if name == STDIN else f"the log {name}"


def read_path(path: Path, name: str) -> bytes:
    """The log at PATH: looked at before it is opened (a device is never opened), opened
    without blocking (a FIFO nothing writes to yet), and looked at again once open."""
    try:
        refuse_device(path.stat().st_mode, name)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise unreadable(name, exc) from None
    try:
        return read_open(fd, name)
    finally:
        os.close(fd)


def read_open(fd: int, name: str) -> bytes:
    """The log open as FD: a regular file's end, or a stream (a pipe, a FIFO, a socket, a
    terminal) up to the cap."""
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            return read_end(fd)
        if not (stat.S_ISSOCK(mode) or os.isatty(fd)):
            refuse_device(mode, name)
        return read_stream(fd, name)
    except OSError as exc:
        raise unreadable(name, exc) from None


def unreadable(name: str, error: OSError) -> LogUnreadable:
    return LogUnreadable(f"cannot read {described(name)}: {error.strerror or error}", GIVE_LOG)


def refuse_device(mode: int, name: str) -> None:
    """LogUnreadable unless MODE is a regular file's or a FIFO's."""
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return
    kind = next((kind for test, kind in NOT_A_LOG if test(mode)), "not a file")
    raise LogUnreadable(f"{described(name)} is {kind}, not a log", GIVE_LOG)


def read_end(fd: int) -> bytes:
    """The last MAX_LOG_BYTES of the regular file FD, or all of it if shorter; never more,
    whatever size it gave (a log still written to grows while it is read)."""
    size = os.fstat(fd).st_size
    start = max(0, size - MAX_LOG_BYTES)
    os.lseek(fd, start, os.SEEK_SET)
    with open(fd, "rb", closefd=False) as handle:
        data = read_at_most(handle, size - start, MAX_LOG_BYTES)
    return data[:MAX_LOG_BYTES] if len(data) > MAX_LOG_BYTES else data


def read_stream(fd: int, name: str) -> bytes:
    """All a stream sends, up to MAX_LOG_BYTES (LogUnreadable past it). Its first bytes are
    looked at as soon as they come, so a binary stream (/dev/zero piped) stops at once."""
    wait_for(fd, name)
    os.set_blocking(fd, True)
    chunks: list[bytes] = []
    received = 0
    looked = False
    while chunk := os.read(fd, CHUNK_BYTES):
        chunks.append(chunk)
        received += len(chunk)
        if not looked and received >= HEAD_BYTES:
            refuse_binary(b"".join(chunks)[:HEAD_BYTES], name)
            looked = True
        if received > MAX_LOG_BYTES:
            raise LogUnreadable(
                f"{described(name)} sent over {MAX_LOG_BYTES >> 20} MB, and a stream is read "
                "from its start",
                "give the log as a file (it is read from its end), or pipe in only its end: "
                f"tail -c {MAX_LOG_BYTES >> 20}M server.log | sgtrace explain SOURCE --log -",
            )
    return b"".join(chunks)


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


def log_text(data: bytes, name: str) -> str:
    """DATA as text; a compressed or binary file is one clear error, UTF-16 is read as such."""
    refuse_binary(data[:HEAD_BYTES], name)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", "replace")
    if data.count(b"\0") > len(data) // 100:
        raise LogUnreadable(f"{described(name)} is not text", "give the server's log as text")
    return data.decode("utf-8", "replace")


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
