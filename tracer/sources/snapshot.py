"""A Snapshot: a read-only tree of Python files, each known by relative path and content hash."""

from __future__ import annotations

import contextlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.errors import NoPythonFiles, SourceNotFound
from tracer.sources.cache import cache_root, content_hash, write_atomic
from tracer.versions import STAT

if TYPE_CHECKING:
    from tracer.sources.blobs import BlobStore

MAX_FILE_BYTES = 8 << 20  # generated files past this are skipped with a warning
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})


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
                data = (self.root / path).read_bytes()
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
        return build(label or str(path), path.parent, [path.name])
    root = path.parent if (path / "__init__.py").is_file() else path
    prefix = path.relative_to(root)
    warnings: list[str] = []
    relpaths = [str(prefix / p) if str(prefix) != "." else p for p in walk(path, warnings)]
    if not relpaths:
        raise NoPythonFiles(
            f"{path} holds no Python file",
            "point at the folder that holds the package (e.g. the one with sglang/ in it)",
        )
    return build(label or str(path), root, relpaths, warnings)


def walk(top: Path, warnings: list[str]) -> list[str]:
    """Relative paths of `.py` files under TOP; symlinked folders followed once, loops warned."""
    seen: set[str] = set()
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(top, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            warnings.append(f"{os.path.relpath(dirpath, top)}: symlink loop, not followed")
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".py"):
                found.append(os.path.relpath(os.path.join(dirpath, name), top))
    return [p.replace(os.sep, "/") for p in found]


def build(
    label: str, root: Path, relpaths: list[str], warnings: list[str] | None = None
) -> Snapshot:
    """Hash every file; a file whose size and mtime are as last time keeps its hash
    (kept per root in the cache), so an unchanged tree is not read again to be opened."""
    warnings = list(warnings or [])
    known = StatCache(root)
    files: dict[str, str] = {}
    for rel in sorted(relpaths):
        full = root / rel
        try:
            stat = full.stat()
            if stat.st_size > MAX_FILE_BYTES:
                warnings.append(
                    f"{rel}: {stat.st_size / (1 << 20):.1f} MB, over the "
                    f"{MAX_FILE_BYTES >> 20} MB cap; skipped"
                )
                continue
            files[rel] = known.digest(rel, stat.st_size, stat.st_mtime_ns, full)
        except OSError as exc:
            warnings.append(f"{rel}: unreadable ({exc.strerror or exc}); skipped")
    if not files:
        raise NoPythonFiles(f"{label} holds no readable Python file", "check the path")
    known.save()
    return Snapshot(label=label, root=root, files=files, warnings=tuple(warnings))


class StatCache:
    """Content hashes of the files under one root, by (size, mtime)."""

    def __init__(self, root: Path) -> None:
        key = content_hash(str(root.resolve()).encode())
        self.path = cache_root() / STAT.name / f"{key}-{STAT.version}.pkl"
        try:
            self.entries: dict[str, tuple[int, int, str]] = pickle.loads(self.path.read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            self.entries = {}
        self.changed = False

    def digest(self, rel: str, size: int, mtime_ns: int, full: Path) -> str:
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == size and entry[1] == mtime_ns:
            return entry[2]
        digest = content_hash(full.read_bytes())
        self.entries[rel] = (size, mtime_ns, digest)
        self.changed = True
        return digest

    def save(self) -> None:
        if self.changed:
            # A read-only cache only costs the next run a re-read.
            with contextlib.suppress(OSError):
                write_atomic(self.path, pickle.dumps(self.entries, pickle.HIGHEST_PROTOCOL))
