"""Files the user names with `-o`: checked before any work, then written by the rules of
tracer/sources/safe_write.py (a file replaced whole or not at all, keeping its mode and
owner; a new one with 0o666 less the umask; a link followed; a device or pipe written
through), never in a folder made up on the way."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tracer.errors import SgtraceError
from tracer.sources.safe_write import destination, write_file


class OutputNotWritable(SgtraceError):
    """The folder of an -o file is missing (or not a folder), or the path is a folder."""


def check_output(path: Path) -> None:
    """Fail now, before the work, if PATH cannot be written: its folder must exist, the path
    must not be a folder, and the rules of safe_write must not refuse it (WriteRefused)."""
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise OutputNotWritable(
            f"cannot write {path}: the folder {folder} {what}",
            f"create it first (mkdir -p {folder}) or give another -o",
        )
    if path.is_dir():
        raise OutputNotWritable(f"cannot write {path}: it is a folder", "give a file name with -o")
    with contextlib.suppress(OSError):  # what the system refuses, the write itself tells
        destination(str(path))


def write_output(path: Path, data: bytes) -> None:
    """Write DATA to PATH as tracer/sources/safe_write.py does (readers of a regular file see
    the old one or the whole new one); WriteRefused when its rules refuse PATH."""
    check_output(path)
    try:
        write_file(path, data)
    except OSError as error:  # a full disk, a read-only folder, a name taken by a folder
        raise OutputNotWritable(
            f"cannot write {path}: {error.strerror or error}", "check the folder and its disk"
        ) from None
