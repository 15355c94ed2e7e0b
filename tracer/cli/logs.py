"""The server log `explain` and `walk --log` read: a file, standard input, or a systemd
unit's journal on the source's host."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.errors import SgtraceError

if TYPE_CHECKING:
    from tracer.sources.remote import SshOptions

MAX_LOG_BYTES = 256 << 20  # a longer log is read from its end: the newest start is there


class LogUnreadable(SgtraceError):
    pass


def read_log_text(args: argparse.Namespace, ssh_options: SshOptions | None) -> str:
    if args.log == "-":
        return sys.stdin.read()
    if args.log is not None:
        path = Path(args.log).expanduser()
        try:
            with path.open("rb") as handle:
                size = path.stat().st_size
                if size > MAX_LOG_BYTES:
                    handle.seek(size - MAX_LOG_BYTES)
                data = handle.read()
        except OSError as exc:
            raise LogUnreadable(
                f"cannot read the log {args.log}: {exc.strerror or exc}",
                "give the server's log file, or - to read it from standard input",
            ) from None
        return log_text(data, args.log)
    from tracer.cli.common import PACKAGE
    from tracer.sources.journal import read_journal
    from tracer.sources.remote import SshOptions, parse_remote

    remote = None if Path(args.source).expanduser().exists() else parse_remote(args.source)
    return read_journal(args.journal, remote, ssh_options or SshOptions(), PACKAGE)


def log_text(data: bytes, name: str) -> str:
    """DATA as text; a compressed or binary file is one clear error, UTF-16 is read as such."""
    if data[:2] == b"\x1f\x8b" or data[:4] == b"\x28\xb5\x2f\xfd":
        raise LogUnreadable(
            f"the log {name} is compressed",
            f"decompress it into standard input: zcat {name} | sgtrace explain SOURCE --log -",
        )
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", "replace")
    if data.count(b"\0") > len(data) // 100:
        raise LogUnreadable(f"the log {name} is not text", "give the server's log as text")
    return data.decode("utf-8", "replace")
