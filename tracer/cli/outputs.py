"""Files the user names with `-o`: checked before any work, written whole or not at all, with
the permissions any new file of theirs gets (0o666 less the umask), never in a folder made up
on the way."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from tracer.errors import SgtraceError


class OutputNotWritable(SgtraceError):
    """The folder of an -o file is missing (or not a folder), or the path is a folder."""


def check_output(path: Path) -> None:
    """Fail now, before the work, if PATH cannot be written: its folder must exist, and the
    path must not be a folder."""
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise OutputNotWritable(
            f"cannot write {path}: the folder {folder} {what}",
            f"create it first (mkdir -p {folder}) or give another -o",
        )
    if path.is_dir():
        raise OutputNotWritable(f"cannot write {path}: it is a folder", "give a file name with -o")


def write_output(path: Path, data: bytes) -> None:
    """Write DATA to PATH atomically (readers see the old file or the whole new one), as a
    new file of the user's would be: mode 0o666 less the umask."""
    check_output(path)
    while True:  # a free temporary name beside PATH, so the final rename stays on one disk
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
        except OSError as error:
            raise OutputNotWritable(
                f"cannot write {path}: {error.strerror}", "check the folder's permissions"
            ) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except OSError as error:  # a full disk, a name taken by a folder meanwhile
        tmp.unlink(missing_ok=True)
        raise OutputNotWritable(f"cannot write {path}: {error.strerror}", "") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
