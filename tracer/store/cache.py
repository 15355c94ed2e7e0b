"""The fact cache: pickled facts under `facts/`, one entry per (kind, key, the kind's version),
single entries or packs of many. A kind's version comes from what produces it
(tracer/versions.py); the callers give the key alone and seal what they store
(tracer/sources/sealed.py), as the packs' indexes are sealed here. Writes are atomic; an entry
or index that is damaged is computed again; a cache that cannot be written is read as it is,
and the rest of the run goes on without writing (one warning)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import NamedTuple

from tracer.errors import CacheNotWritable
from tracer.sources.cache import (
    cache_root,
    checked_cache,
    content_hash,
    tell_uncached,
    write_atomic,
)
from tracer.sources.sealed import pickle_sealed, unpickle_sealed
from tracer.versions import CachedKind


class FactCache:
    """Facts under `facts/KIND/` of the cache folder ROOT (the configured one unless given),
    one entry per key and version of the kind. CacheUnsafe when the cache folder's rule
    refuses ROOT (tracer/sources/cache.py): nothing is read from it."""

    def __init__(self, root: Path | None = None, enabled: bool = True) -> None:
        self.root = (checked_cache(root) if root else cache_root()) / "facts"
        self.enabled = enabled
        self.writable = enabled  # until a write fails: then the run goes on without caching

    def get_bytes(self, kind: CachedKind, key: str) -> bytes | None:
        """The entry as stored, or None when missing (or the cache is off)."""
        path = self.entry_path(kind, key)
        if path is None:
            return None
        try:
            return read_file(path)
        except OSError:
            return None

    def entry_path(self, kind: CachedKind, key: str) -> str | None:
        """Where the entry of KEY is stored; None when the cache is off."""
        if not self.enabled:
            return None
        return f"{self.root}/{kind.name}/{key[:2]}/{key}-{kind.version}.pkl"

    def put_bytes(self, kind: CachedKind, key: str, data: bytes) -> None:
        """Store DATA, pickled and sealed, atomically: readers see no entry or the whole one."""
        if self.writable:
            self.write(Path(f"{self.root}/{kind.name}/{key[:2]}/{key}-{kind.version}.pkl"), data)

    def write(self, path: Path, data: bytes) -> bool:
        """Write one file of the cache; False, and no more writes, when it cannot be."""
        try:
            write_atomic(path, data)
        except CacheNotWritable as error:
            self.writable = False
            tell_uncached(error)
        return self.writable

    # -- packs: many small entries of one kind in one file -----------------------------------

    def packed(self, kind: CachedKind) -> dict[str, PackedEntry]:
        """Key -> where it is, for every entry of KIND's packs (the first pack holding a key
        wins; an index is written after its pack, so an index always names a whole pack). A
        damaged index is dropped with its pack: their entries are computed again."""
        found: dict[str, PackedEntry] = {}
        if not self.enabled:
            return found
        try:
            indexes = sorted(os.scandir(self.packs(kind)), key=lambda e: e.name)
        except OSError:
            return found
        for entry in indexes:
            if not entry.name.endswith(".idx"):
                continue
            pack = entry.path[: -len(".idx")] + ".pack"
            try:
                with open(entry.path, "rb") as stream:
                    offsets = unpickle_sealed(stream.read())
            except OSError:
                continue
            if not isinstance(offsets, dict):
                self.drop(entry.path, pack)
                continue
            for key, (offset, length) in offsets.items():  # sealed: as put_pack made it
                found.setdefault(key, PackedEntry(pack, offset, length))
        return found

    def put_pack(self, kind: CachedKind, entries: dict[str, bytes]) -> None:
        """Store ENTRIES (key -> pickled value) as one pack: one file to write, where an entry
        a file costs a file system's creation of each (about 0.15 ms here, a tenth of a
        parse). Packs are named by their contents, and written pack first, index last."""
        if not self.writable or not entries:
            return
        offsets: dict[str, tuple[int, int]] = {}
        position = 0
        for key, data in entries.items():
            offsets[key] = (position, len(data))
            position += len(data)
        index = pickle_sealed(offsets)
        name = self.packs(kind) / content_hash(index)
        if self.write(name.with_suffix(".pack"), b"".join(entries.values())):
            self.write(name.with_suffix(".idx"), index)

    def drop(self, *paths: str) -> None:
        """Remove PATHS, damaged files of the cache, unless it is not to be written."""
        if self.writable:
            for path in paths:
                with contextlib.suppress(OSError):  # another run dropped it, or a read-only disk
                    os.unlink(path)

    def packs(self, kind: CachedKind) -> Path:
        """The folder of KIND's packs of this version: another version's are never read."""
        return self.root / f"{kind.name}-packs" / kind.version


def read_file(path: str) -> bytes:
    """The bytes of the file PATH, read with few system calls (a query reads hundreds of
    entries: `open()` makes seven calls of each, this four or five)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)  # asked one byte more, it stops at the end of the file
        if len(data) == size:
            return data
        chunks = [data]  # the file changed size meanwhile, or the read stopped short
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class PackedEntry(NamedTuple):
    pack: str
    offset: int
    length: int


class PackReader:
    """Reads entries out of packs, each pack file read once."""

    def __init__(self) -> None:
        self.packs: dict[str, bytes | None] = {}

    def read(self, where: PackedEntry) -> bytes | None:
        """The entry's bytes; None when its pack is gone or shorter than its index says."""
        if where.pack not in self.packs:
            try:
                self.packs[where.pack] = Path(where.pack).read_bytes()
            except OSError:
                self.packs[where.pack] = None
        data = self.packs[where.pack]
        if data is None or where.offset + where.length > len(data):
            return None
        return data[where.offset : where.offset + where.length]
