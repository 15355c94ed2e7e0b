"""The one way sgtrace writes a file a user names: known_hosts, the outputs of -o (cache entries
follow the cache folder's stricter rule, tracer/sources/cache.py, which uses the checks of
folders and links on the way below). Naming a path never makes the write land elsewhere, nor
changes what the path is:

- a symbolic link is followed and its target written (the link stays a link); a link owned
  by another user (neither us nor root) is refused: its owner could point it anywhere;
- a device, FIFO or socket (/dev/null, a pipe), or a path through /proc (/dev/stdout,
  /dev/fd/N), is opened and written as the shell's `>` does, never replaced; a FIFO that
  nobody reads is refused rather than waited on;
- a regular file is replaced atomically (a reader sees the old file or the whole new one)
  by one with its mode, owner and group; a file whose owner we cannot give to the new one
  (another user's, and we are not root) is refused;
- a new file gets mode 0o666 less the umask, and us as its owner;
- every folder on the way must be ours or root's, and not writable by everyone unless
  sticky: anyone else could swap a folder or a link between our look and our write (so a
  file written as root in another user's folder is refused).
Hard links, ACLs and extended attributes of a replaced file are not kept."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import pwd
import stat
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from tracer.errors import SgtraceError, WriteRefused

MAX_LINKS = 40  # as many as Linux follows in one path
TEMPORARY_NAMES = itertools.count()
# What a refusal says, (why, what to do) -> the error to raise: the rules above serve writes
# of a named file and the cache folder's check (tracer/sources/cache.py) alike.
Refusal = Callable[[str, str], SgtraceError]
# Folder as given -> the same folder with its links followed, every folder and link on the
# way checked: a cold index writes thousands of entries into a few folders.
CHECKED_FOLDERS: dict[str, str] = {}


def write_file(path: Path | str, data: bytes) -> None:
    """Write DATA to PATH by the rules above. Raises WriteRefused when the rules refuse
    PATH, OSError when the system does (a full or read-only disk, a missing folder)."""
    with Replacement(path) as new:
        new.write(data)
        new.commit()


class Replacement:
    """The new contents of PATH, written as they come: `commit()` puts them in place by the
    rules above; leaving the `with` block without a commit leaves PATH as it was (a device
    or FIFO has had what was written)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self.target, info, through = destination(self.path)
        self.temporary: str | None = None
        if through:
            fd = open_through(self.target, self.path)
        else:
            fd, self.temporary = temporary_beside(self.target)
            try:
                if info is not None:
                    keep_owner_and_mode(fd, info, self.path)
            except BaseException:
                os.close(fd)
                os.unlink(self.temporary)
                raise
        self.file = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        self.file.write(data)

    def commit(self) -> None:
        self.file.close()
        if self.temporary is not None:
            os.replace(self.temporary, self.target)
            self.temporary = None

    def discard(self) -> None:
        with contextlib.suppress(OSError):  # a full disk fails the last flush: dropped anyway
            self.file.close()
        if self.temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temporary)
            self.temporary = None

    def __enter__(self) -> Replacement:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.discard()  # after a commit, nothing left to do


# -- where the bytes go ----------------------------------------------------------------------


def destination(path: str) -> tuple[str, os.stat_result | None, bool]:
    """The file PATH names (its links followed), what is there now (None: nothing yet), and
    whether it is written through (not a regular file, or reached through /proc) rather
    than replaced."""
    given, name = os.path.split(path)
    key = os.path.join(os.getcwd(), given)
    folder = CHECKED_FOLDERS.get(key)
    if folder is None:
        followed, whole = follow(key, path)
        if followed is None:
            return path, None, True
        folder = followed
        if whole:  # every part was there, and checked: no need to look again
            CHECKED_FOLDERS[key] = folder
    target, _ = follow(os.path.join(folder, name), path, start=folder)
    if target is None:
        return path, None, True
    try:
        info = os.stat(target)  # follow() left no link: stat and lstat agree
    except FileNotFoundError:
        return target, None, False
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "it is a folder", path)
    return target, info, not stat.S_ISREG(info.st_mode)


def follow(
    path: str, given: str, start: str = "", refuse: Refusal | None = None
) -> tuple[str | None, bool]:
    """The absolute PATH with every link on it followed, each folder looked into and each
    link checked (the rules above), and whether every part of it exists; None when the
    path goes through /proc. START: a part of PATH already followed and checked. REFUSE
    makes the error of a refusal (WriteRefused, naming GIVEN, unless told)."""
    refuse = refuse or write_refused(given)
    pending = path[len(start) :].split("/")[::-1]  # the next part last
    here = start.rstrip("/")  # the folder reached, links followed ("": the root)
    whole = True
    links = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            here = here.rpartition("/")[0]
            continue
        if not here and part == "proc":
            return None, whole
        check_folder(here or "/", refuse)
        candidate = f"{here}/{part}"
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            here, whole = candidate, False  # what follows cannot be a link either
            continue
        if not stat.S_ISLNK(info.st_mode):
            here = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), given)
        if info.st_uid not in (0, os.geteuid()):
            raise refuse(
                f"{candidate} is a link owned by {user(info.st_uid)}",
                "write to the file it points to, if that is what you want",
            )
        target = os.readlink(candidate)
        if target.startswith("/"):
            here = ""
        pending.extend(target.split("/")[::-1])
    return here or "/", whole


def check_folder(folder: str, refuse: Refusal) -> None:
    """Refuse FOLDER (links followed) if someone else than us or root could change what is
    in it: another user's, or anyone's to write without the sticky bit."""
    try:
        info = os.stat(folder)
    except OSError:
        return  # missing, or not a folder: the write itself fails and says so
    if info.st_uid not in (0, os.geteuid()):
        raise refuse(
            f"the folder {folder} belongs to {user(info.st_uid)}",
            "write it in a folder of yours, or run sgtrace as that user",
        )
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        raise refuse(
            f"anyone may change the folder {folder} "
            f"(mode {stat.S_IMODE(info.st_mode):o}, not sticky)",
            "write it in a folder of yours",
        )


def write_refused(given: str) -> Refusal:
    """The refusals of a write of GIVEN: WriteRefused, naming it."""

    def refused(reason: str, hint: str) -> SgtraceError:
        return WriteRefused(f"cannot write {given}: {reason}", hint)

    return refused


def user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user {uid}"


# -- writing ---------------------------------------------------------------------------------


def open_through(target: str, given: str) -> int:
    """TARGET (a device, FIFO or /proc path) opened for writing, as `>` would open it; a
    FIFO without a reader is refused (else the write would wait for one for ever)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_TRUNC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ENXIO and stat.S_ISFIFO(os.stat(target).st_mode):
            raise WriteRefused(
                f"cannot write {given}: it is a FIFO that nothing reads",
                "start its reader first",
            ) from None
        raise
    os.set_blocking(fd, True)
    return fd


def temporary_beside(target: str) -> tuple[int, str]:
    """A new file in TARGET's folder (the rename stays on one disk), mode 0o666 less the
    umask; a name unique to this process and write, cheaper than mkstemp's random ones."""
    folder, name = os.path.split(target)
    while True:
        temporary = f"{folder}/.{name}.{os.getpid()}-{next(TEMPORARY_NAMES)}.tmp"
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:  # left by a dead process that had our pid
            continue


def keep_owner_and_mode(fd: int, old: os.stat_result, given: str) -> None:
    """Give the new file FD the owner, group and mode of the file it replaces (the mode
    last: a change of owner clears the setuid bits)."""
    new = os.fstat(fd)
    if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
        if old.st_uid != new.st_uid and os.geteuid() != 0:
            raise WriteRefused(
                f"cannot write {given}: it belongs to {user(old.st_uid)}, and the new file "
                "would be yours",
                "write it elsewhere, or run sgtrace as its owner",
            )
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:  # a group we are not in
            raise WriteRefused(
                f"cannot write {given}: its group (gid {old.st_gid}) is not one of yours",
                "write it elsewhere",
            ) from None
    if stat.S_IMODE(new.st_mode) != stat.S_IMODE(old.st_mode):
        os.fchmod(fd, stat.S_IMODE(old.st_mode))
