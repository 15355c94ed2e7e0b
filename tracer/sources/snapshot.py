"""A Snapshot: a read-only tree of Python files, each known by relative path and content hash."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tracer.errors import NoPythonFiles, SgtraceError, SourceNotFound, TooManyFiles, printable
from tracer.sources.cache import cache_root, content_hash, write_atomic
from tracer.sources.sealed import pickle_sealed, unpickle_sealed
from tracer.versions import STAT

if TYPE_CHECKING:
    from tracer.sources.blobs import BlobStore

MAX_FILE_BYTES = 8 << 20  # generated files past this are skipped with a warning (over_size_cap)
MAX_FILES = 50_000  # Python files of one tree, local or fetched: more is a disk, not a project
# Names a local walk may look at (files of any kind and folders): bounds a walk of a tree
# without Python files, /proc or /sys, as MAX_FILES bounds one with them.
MAX_NAMES = 10 * MAX_FILES
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})
SMALLER_FOLDER = "point at the folder that holds the package (e.g. the one with sglang/ in it)"


@dataclass(frozen=True, slots=True)
class Snapshot:
    label: str  # how the user named the source
    root: Path  # the folder the relative paths start from
    files: dict[str, str]  # "pkg/mod.py" -> content hash, in sorted order
    warnings: tuple[str, ...] = ()
    meta: dict[str, str] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    blobs: BlobStore | None = None  # when set, files are read from this store by hash

    def read(self, path: str) -> bytes:
        """The bytes of PATH, kept after the first read (greps read every file)."""
        data = self.contents.get(path)
        if data is None:
            if self.blobs is not None:
                data = self.blobs.read(self.files[path])
            else:
                data = read_source(self.root / path)
            self.contents[path] = data
        return data

    def grep(self, word: str) -> list[str]:
        """Files whose bytes contain WORD (a cheap prefilter before parsing)."""
        needle = word.encode()
        return [path for path in self.files if needle in self.read(path)]


def local_snapshot(path: Path, label: str | None = None) -> Snapshot:
    """The Python files under PATH. A package folder (with `__init__.py`) is taken with its
    parent as root, so relative paths start with the package name."""
    path = path.expanduser()
    if not path.exists():
        raise SourceNotFound(
            f"{path} does not exist",
            "give a folder of Python files, a .py file, or pypi:NAME==VERSION",
        )
    if path.is_file():
        if path.suffix != ".py":
            raise NoPythonFiles(f"{path} is not a Python file", "give a folder or a .py file")
        unfit = name_unfit(path.name)
        if unfit:
            raise NoPythonFiles(f"{printable(str(path))}: {unfit}", "rename the file")
        return build(label or str(path), path.parent, [path.name])
    # A package folder's name starts every path, so it must be fit as well.
    package = (path / "__init__.py").is_file() and name_unfit(path.name) is None
    root = path.parent if package else path
    prefix = path.relative_to(root)
    warnings: list[str] = []
    relpaths = [str(prefix / p) if str(prefix) != "." else p for p in walk(path, warnings)]
    if not relpaths:
        raise NoPythonFiles(f"{path} holds no Python file", SMALLER_FOLDER)
    return build(label or str(path), root, relpaths, warnings)


def walk(top: Path, warnings: list[str]) -> list[str]:
    """Relative paths of the `.py` files under TOP, in order. Symlinked folders are followed
    once; a link to a folder seen, or to one holding TOP (`/proc/1/root`, `..`), is a loop,
    warned. A name that is not UTF-8 or holds control characters is skipped, warned
    (`name_unfit`). TooManyFiles past MAX_FILES Python files or MAX_NAMES names looked at."""
    top_real = os.path.realpath(top)
    seen: set[str] = set()
    found: list[str] = []
    looked_at = 0
    for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen or (seen and holds(real, top_real)):
            rel = printable(os.path.relpath(dirpath, top))
            warnings.append(f"{rel}: symlink loop, not followed")
            dirnames[:] = []
            continue
        seen.add(real)
        looked_at += len(dirnames) + len(filenames)
        if looked_at > MAX_NAMES:
            raise TooManyFiles(
                f"{top} holds more than {MAX_NAMES} files and folders, the most a walk looks at",
                f"{SMALLER_FOLDER}, not a whole disk",
            )
        kept = [d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith(".")]
        dirnames[:] = sorted(name_checked(dirpath, kept, top, warnings))
        python = [name for name in filenames if name.endswith(".py")]
        for name in sorted(name_checked(dirpath, python, top, warnings)):
            found.append(os.path.relpath(os.path.join(dirpath, name), top))
        if len(found) > MAX_FILES:
            raise TooManyFiles(
                f"{top} holds more than {MAX_FILES} Python files, the most one tree may have",
                f"{SMALLER_FOLDER}, not a whole disk",
            )
    return [p.replace(os.sep, "/") for p in found]


def holds(folder: str, path: str) -> bool:
    """Is PATH the real folder FOLDER, or inside it?"""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def name_checked(dirpath: str, names: list[str], top: Path, warnings: list[str]) -> list[str]:
    """NAMES that are fit (`name_unfit`); each other one warned as skipped."""
    kept = [name for name in names if name_unfit(name) is None]
    if len(kept) < len(names):
        for name in sorted(set(names) - set(kept)):
            warning = skipped_name(os.path.relpath(os.path.join(dirpath, name), top))
            if warning:
                warnings.append(warning)
    return kept


# -- the rules of every tree, local or on a host -------------------------------------------------


def name_unfit(name: str) -> str | None:
    """Why a file or folder NAME (or a path of them) is not taken into a tree, local or on a
    host; None when it is. A name that is not UTF-8: no import can name it, and every later
    stage (cache keys, JSON, the terminal) takes text. A name with control characters (or
    other unprintable ones): no module has one, and a terminal would run them."""
    if name.isprintable():  # no surrogate is printable: a printable name is UTF-8
        return None
    if not is_utf8(name):
        return "the name is not UTF-8"
    return "a name with control characters"


def skipped_name(rel: str) -> str | None:
    """The warning for the file or folder REL (relative to its tree) skipped for its name
    (`name_unfit`); None when it is taken."""
    unfit = name_unfit(rel)
    return None if unfit is None else f"{printable(rel)}: {unfit}; skipped"


def over_size_cap(rel: str, size: int) -> str | None:
    """The warning for the file REL of SIZE bytes when it is past MAX_FILE_BYTES (generated
    code: skipped in every tree, local or on a host); None when it is not."""
    if size <= MAX_FILE_BYTES:
        return None
    return f"{rel}: {size / (1 << 20):.1f} MB, over the {MAX_FILE_BYTES >> 20} MB cap; skipped"


def is_utf8(name: str) -> bool:
    """Was NAME, as the OS gave it (undecodable bytes as surrogates), valid UTF-8?"""
    if name.isascii():
        return True
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


def build(
    label: str, root: Path, relpaths: list[str], warnings: list[str] | None = None
) -> Snapshot:
    """Hash every regular file; a file whose size and mtime are as last time keeps its hash
    (kept per root in the cache), so an unchanged tree is not read again to be opened. A
    FIFO, a device or a socket is never opened; a file over MAX_FILE_BYTES is not read."""
    warnings = list(warnings or [])
    known = StatCache(root)
    files: dict[str, str] = {}
    for rel in sorted(relpaths):
        full = root / rel
        try:
            status = full.stat()
            if not stat.S_ISREG(status.st_mode):
                raise NotRegular(kind_of(status.st_mode))
            oversized = over_size_cap(rel, status.st_size)
            if oversized:
                warnings.append(oversized)
                continue
            files[rel] = known.digest(rel, status.st_size, status.st_mtime_ns, full)
        except (NotRegular, OverCap) as exc:
            warnings.append(f"{rel}: {exc}; skipped")
        except OSError as exc:
            warnings.append(f"{rel}: unreadable ({exc.strerror or exc}); skipped")
    if not files:
        raise NoPythonFiles(f"{label} holds no readable Python file", "check the path")
    known.save()
    return Snapshot(label=label, root=root, files=files, warnings=tuple(warnings))


class NotRegular(OSError):
    """A path that is a FIFO, a device, a socket: reading it could block or never end."""


class OverCap(OSError):
    """A file that held more than MAX_FILE_BYTES when read, whatever its size said."""


def read_source(path: Path) -> bytes:
    """The bytes of the regular file PATH, at most MAX_FILE_BYTES of them. It is opened
    without blocking and looked at once open, so a FIFO put in a file's place is never read
    (NotRegular); reads are bounded by the bytes read, not by the size the file gave
    (OverCap)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(kind_of(status.st_mode))
        data = read_at_most(handle, status.st_size, MAX_FILE_BYTES)
    if len(data) > MAX_FILE_BYTES:
        raise OverCap(f"over the {MAX_FILE_BYTES >> 20} MB cap when read")
    return data


def read_at_most(handle: BinaryIO, size: int, cap: int) -> bytes:
    """HANDLE's bytes up to CAP + 1 of them (one more than CAP tells a file over it), for a
    file that said it holds SIZE. A read allocates what it asks for: ask for the size given
    and one byte more, and read on only if the file holds more than it said (it grew, or it
    is a /proc file or a device, which say 0)."""
    wanted = min(size, cap) + 1
    data = handle.read(wanted)
    if len(data) == wanted and wanted <= cap:
        data += handle.read(cap + 1 - wanted)
    return data


def kind_of(mode: int) -> str:
    """What a path that is not a regular file is, as a warning says it."""
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return f"{kind}, not a regular file"
    return "not a regular file"


class StatCache:
    """Content hashes of the files under one root, by (size, mtime)."""

    def __init__(self, root: Path) -> None:
        key = content_hash(os.fsencode(root.resolve()))
        self.path = cache_root() / STAT.name / f"{key}-{STAT.version}.pkl"
        try:
            found = unpickle_sealed(self.path.read_bytes())
        except OSError:
            found = None
        self.entries: dict[str, tuple[int, int, str]] = found if isinstance(found, dict) else {}
        self.changed = False

    def digest(self, rel: str, size: int, mtime_ns: int, full: Path) -> str:
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == size and entry[1] == mtime_ns:
            return entry[2]
        digest = content_hash(read_source(full))
        self.entries[rel] = (size, mtime_ns, digest)
        self.changed = True
        return digest

    def save(self) -> None:
        if self.changed:
            # A cache that cannot be written (full, read-only, refused by the rules of safe
            # writes) only costs the next run a re-read.
            with contextlib.suppress(OSError, SgtraceError):
                write_atomic(self.path, pickle_sealed(self.entries))
