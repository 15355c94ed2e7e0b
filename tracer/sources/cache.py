"""The cache folder, content hashes and atomic writes: what every cached kind (releases, fetched
blobs, facts) is stored with.

The cache folder is checked once per process, before anything in it is read or made, by the
rule OpenSSH's StrictModes applies to ~/.ssh: it is ours (or root's), and nobody else may write
in it, sticky or not; every folder and link on the way to it is checked as
tracer/sources/safe_write.py checks them for any write (ours or root's; a folder everyone may
write only if sticky, as /tmp). A missing cache folder is made, mode 0o700, at its first write.
Inside it, a folder is made or entered one at a time from its parent's descriptor, never
through a link, and must be ours (or root's) and writable by nobody else; a file is written
under a new name and renamed into place, so a link where it goes is replaced, never written
through. What breaks the rule is CacheUnsafe, naming it. A cache that cannot be written raises
CacheNotWritable, naming the folder; the kinds that can do without it go on uncached
(`tell_uncached`, once)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import stat
import sys
from pathlib import Path
from types import TracebackType

from tracer.errors import CacheNotWritable, CacheUnsafe, SgtraceError
from tracer.sources.safe_write import Refusal, follow, user

CACHE_MODE = 0o700  # the cache folder, when sgtrace makes it (as ~/.ssh)
FOLDER_MODE = 0o755  # a folder in it, less the umask
FILE_MODE = 0o644
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
ELSEWHERE = "point SGTRACE_CACHE at a folder of yours"
TEMPORARY_NAMES = itertools.count()
NOT_YOURS = (errno.EACCES, errno.EPERM, errno.EROFS)  # no space to free would help
# A cache folder (absolute, as configured) -> (device, inode) of the folder it was when
# checked; None while it is missing (made, and checked again, at its first write).
CHECKED: dict[str, tuple[int, int] | None] = {}
# Folders of checked caches made or entered by the rule: nobody but us and root may change
# them since, so later writes name them by path (a cold index writes thousands of entries).
ENTERED: set[str] = set()


def cache_root() -> Path:
    """`$SGTRACE_CACHE`, else `$XDG_CACHE_HOME/sgtrace`, else `~/.cache/sgtrace`, checked by
    the rule above (`checked_cache`)."""
    explicit = os.environ.get("SGTRACE_CACHE")
    if explicit:
        return checked_cache(Path(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return checked_cache(Path(base) / "sgtrace")


def checked_cache(root: Path) -> Path:
    """ROOT, a cache folder, once it passed the rule above (checked once per process):
    CacheUnsafe when it breaks it. Nothing is made."""
    key = os.path.abspath(root)
    if key not in CHECKED:
        CHECKED[key] = identity(key)
    return root


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write DATA to the cache file PATH so that readers see the old file or the whole new
    one, never a part (its folders made as `cache_folder` makes them). CacheUnsafe when the
    rule above refuses, CacheNotWritable when the disk does."""
    try:
        with CacheFile(path) as file:
            file.write(data)
            file.commit()
    except OSError as error:
        raise cache_not_writable(path, error) from None


def cache_not_writable(path: Path | str, error: OSError) -> CacheNotWritable:
    """The error to raise when writing PATH, in the cache, failed with ERROR."""
    full = os.path.abspath(path)
    folder = holder(full) or os.path.dirname(full)
    fix = "point SGTRACE_CACHE at a folder you can write"
    if error.errno not in NOT_YOURS:
        fix = f"free some space there, or {fix}"
    return CacheNotWritable(
        f"the cache folder {folder} is not writable ({error.strerror or error})", fix
    )


TOLD_UNCACHED: list[CacheNotWritable] = []


def tell_uncached(error: CacheNotWritable) -> None:
    """Say on stderr, once per process, that what ERROR stopped goes on without caching."""
    if not TOLD_UNCACHED:
        TOLD_UNCACHED.append(error)
        print(f"sgtrace: warning: going on without caching: {error}", file=sys.stderr)


# -- the rule --------------------------------------------------------------------------------


def identity(root: str) -> tuple[int, int] | None:
    """The (device, inode) of the cache folder ROOT (absolute), it and every folder and link
    on the way to it checked; None when it is missing, or no folder (its writes say so)."""
    refuse = unusable(root)
    try:
        real, whole = follow(root, root, refuse=refuse)
        info = os.stat(real) if real is not None and whole else None
    except OSError:  # a file on the way (ENOTDIR), a loop: the writes fail and say so
        return None
    if real is None:
        raise refuse("it is under /proc", ELSEWHERE)
    if info is None or not stat.S_ISDIR(info.st_mode):
        return None
    check_ours(info, root, "it", root)
    return (info.st_dev, info.st_ino)


def unusable(root: str) -> Refusal:
    """The refusals of the cache folder ROOT for what is on the way to it (safe_write's
    rules): CacheUnsafe, with one fix whatever the rule's."""

    def refused(reason: str, hint: str) -> SgtraceError:
        return CacheUnsafe(f"cannot use the cache folder {root}: {reason}", ELSEWHERE)

    return refused


def check_ours(info: os.stat_result, root: str, named: str, path: str) -> None:
    """Refuse the folder PATH of the cache ROOT (NAMED so in the message) unless it is ours or
    root's, and nobody else may write in it: else they could swap what sgtrace reads."""
    if info.st_uid not in (0, os.geteuid()):
        fix = ELSEWHERE if path == root else f"remove it, or {ELSEWHERE}"
        raise CacheUnsafe(
            f"cannot use the cache folder {root}: {named} belongs to {user(info.st_uid)}", fix
        )
    if info.st_mode & OTHERS_WRITE:
        mode = stat.S_IMODE(info.st_mode)
        raise CacheUnsafe(
            f"cannot use the cache folder {root}: others may write in {named} (mode {mode:o})",
            f"chmod go-w {path}, or {ELSEWHERE}",
        )


def holder(path: str) -> str | None:
    """The checked cache folder that holds PATH (absolute; the deepest, if several do)."""
    found = [root for root in CHECKED if path == root or path.startswith(root.rstrip("/") + "/")]
    return max(found, key=len) if found else None


# -- folders and files inside ----------------------------------------------------------------


def cache_folder(path: Path) -> Path:
    """PATH, a folder in a checked cache folder, with every folder from the cache folder down
    made where missing (FOLDER_MODE) and checked by the rule above, never entered through a
    link. CacheUnsafe when one breaks the rule, CacheNotWritable when one cannot be made."""
    folder = os.path.abspath(path)
    if folder in ENTERED:
        return path
    root = holder(folder)
    if root is None:
        cache_root()  # the configured cache, checked
        root = holder(folder)
    if root is None:
        raise ValueError(f"{folder} is in no cache folder sgtrace checked")
    try:
        fd = open_root(root)
        here = root
        try:
            for part in folder[len(root) :].split("/"):
                if part:
                    here = f"{here.rstrip('/')}/{part}"
                    inner = enter(fd, part, here, root)
                    os.close(fd)
                    fd = inner
                    ENTERED.add(here)
        finally:
            os.close(fd)
    except OSError as error:
        raise cache_not_writable(folder, error) from None
    ENTERED.add(folder)
    return path


def open_root(root: str) -> int:
    """A descriptor of the cache folder ROOT, the folder that was checked: made first if it
    is missing (CACHE_MODE; the folders above it as `mkdir -p` makes them) and checked then."""
    for _ in range(3):
        if CHECKED[root] is None:
            with contextlib.suppress(FileExistsError):
                os.makedirs(root, CACHE_MODE)
            CHECKED[root] = identity(root)
        try:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:  # removed since it was checked: made again
            CHECKED[root] = None
            continue
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) == CHECKED[root]:
            return fd
        os.close(fd)
        CHECKED[root] = identity(root)  # replaced since it was checked: checked again
    raise CacheUnsafe(
        f"cannot use the cache folder {root}: it changed while sgtrace checked it",
        "run the command again",
    )


def enter(parent: int, name: str, path: str, root: str) -> int:
    """A descriptor of the folder NAME in the folder PARENT (a descriptor): made if missing,
    opened without following a link, checked (PATH: where it is)."""
    try:
        try:
            fd = os.open(name, FOLDER_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):  # made meanwhile by another process
                os.mkdir(name, FOLDER_MODE, dir_fd=parent)
            fd = os.open(name, FOLDER_FLAGS, dir_fd=parent)
    except OSError:
        if is_link(parent, name):  # O_NOFOLLOW refused it (ENOTDIR, or ELOOP)
            error = CacheUnsafe(
                f"cannot use the cache folder {root}: {path} is a link "
                "(sgtrace follows none in its cache)",
                f"remove it, or {ELSEWHERE}",
            )
        raise error from None
    try:
        check_ours(os.fstat(fd), root, path, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def is_link(folder: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


class CacheFile:
    """A new file of the cache at PATH, its bytes written as they come into a temporary file
    beside it (its folder made by `cache_folder`): `commit()` renames it into place, so a
    file or link there is replaced, never written through; leaving the `with` block without a
    commit removes it. OSError when the disk refuses, CacheUnsafe when the rule does."""

    def __init__(self, path: Path | str) -> None:
        self.path = os.path.abspath(path)
        folder, name = os.path.split(self.path)
        self.temporary: str | None = None
        for attempt in range(2):
            cache_folder(Path(folder))
            try:
                fd, self.temporary = new_file(folder, name)
                break
            except FileNotFoundError:
                if attempt:
                    raise
                ENTERED.clear()  # a folder was removed since it was made: made again
        self.file = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        self.file.write(data)

    def commit(self) -> None:
        self.file.close()
        if self.temporary is not None:
            os.replace(self.temporary, self.path)
            self.temporary = None

    def discard(self) -> None:
        with contextlib.suppress(OSError):  # a full disk fails the last flush: dropped anyway
            self.file.close()
        if self.temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temporary)
            self.temporary = None

    def __enter__(self) -> CacheFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.discard()  # after a commit, nothing left to do


def new_file(folder: str, name: str) -> tuple[int, str]:
    """A new file in FOLDER to become NAME, and its name: unique to this process and write,
    cheaper than mkstemp's random names."""
    while True:
        temporary = f"{folder}/.{name}.{os.getpid()}-{next(TEMPORARY_NAMES)}.tmp"
        try:
            return os.open(temporary, NEW_FILE_FLAGS, FILE_MODE), temporary
        except FileExistsError:  # left by a dead process that had our pid
            continue
