"""The content-addressed store of fetched files: contents named by their hash, kept in pack
files (one pack per fetch: one file write instead of thousands) with an index from hash to
(pack, offset, size). Packs and index are written atomically, the index last. A blob is
checked against its hash when read: a damaged pack never passes for a different file; the
index is sealed (tracer/sources/sealed.py): a damaged one is dropped, and what it named is
fetched again."""

from __future__ import annotations

import contextlib
import mmap
import os
from pathlib import Path

from tracer.errors import CacheDamaged, CacheNotWritable
from tracer.sources.cache import (
    CacheFile,
    cache_not_writable,
    checked_cache,
    content_hash,
    write_atomic,
)
from tracer.sources.sealed import pickle_sealed, unpickle_sealed

Location = tuple[str, int, int]  # pack name, offset, size


class BlobStore:
    """The store in ROOT, the `blobs/` of a cache folder (checked before anything is read)."""

    def __init__(self, root: Path) -> None:
        checked_cache(root.parent)
        self.root = root
        self.index = self.load_index()
        self.packs: dict[str, mmap.mmap | bytes] = {}
        self.sizes: dict[str, int] = {}  # pack name -> its file's size, -1 if none (one stat)

    def load_index(self) -> dict[str, Location]:
        """The index as stored; {} when there is none, or it is damaged."""
        try:
            found = unpickle_sealed((self.root / "index.pkl").read_bytes())
        except OSError:
            return {}
        return found if isinstance(found, dict) else {}

    def has(self, digest: str) -> bool:
        """Whether DIGEST is stored: indexed, in a pack long enough to hold it (a pack cut
        short lost its tail; what it lost is fetched again)."""
        location = self.index.get(digest)
        if location is None:
            return False
        try:
            pack, offset, size = location
        except (ValueError, TypeError):  # a damaged index's entry
            return False
        found = self.sizes.get(pack)
        if found is None:
            try:
                found = self.sizes[pack] = (self.root / "packs" / pack).stat().st_size
            except OSError:
                found = self.sizes[pack] = -1
        return offset + size <= found

    def read(self, digest: str) -> bytes:
        """The contents whose hash is DIGEST, checked against it: a damaged entry is
        dropped from the index (the next fetch brings it again) and raises CacheDamaged."""
        try:
            pack, offset, size = self.index[digest]
        except (ValueError, TypeError):
            pack, offset, size = "?", 0, -1
        try:
            data = self.packs.get(pack)
            if data is None:  # mapped, not read: a fetch reads one file, a grep all of them
                with (self.root / "packs" / pack).open("rb") as file:
                    empty = os.fstat(file.fileno()).st_size == 0
                    data = b"" if empty else mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
                self.packs[pack] = data
            found = data[offset : offset + size]
        except (OSError, ValueError, TypeError):
            found = b""
        if len(found) != size or content_hash(found) != digest:
            with contextlib.suppress(CacheNotWritable):  # a read-only cache: reported all the same
                self.forget(digest)
            raise CacheDamaged(
                f"a fetched file in the cache is damaged ({self.root / 'packs' / pack}, "
                f"blob {digest})",
                "run the command again: the damaged copy was dropped and is fetched anew",
            )
        return found

    def forget(self, digest: str) -> None:
        """DIGEST out of the index, as other processes left it too."""
        self.index = {**self.load_index(), **self.index}
        self.index.pop(digest, None)
        write_atomic(self.root / "index.pkl", pickle_sealed(self.index))

    def add(self, contents: dict[str, bytes]) -> dict[str, str]:
        """Store CONTENTS (path -> bytes); returns path -> content hash. Contents already
        stored are not written again."""
        with self.writer() as pack:
            named = {path: pack.add(data) for path, data in contents.items()}
            pack.commit()
        return named

    def writer(self) -> PackWriter:
        return PackWriter(self)

    def merge(self, entries: dict[str, Location]) -> None:
        """Add ENTRIES to the index, with what other processes added since it was read."""
        self.index = {**self.load_index(), **self.index, **entries}
        write_atomic(self.root / "index.pkl", pickle_sealed(self.index))


class PackWriter:
    """One new pack, written as contents arrive into a temporary file of the cache
    (tracer/sources/cache.py, `CacheFile`): `commit()` puts it into place and then indexes it;
    leaving the `with` block without a commit deletes it, so a failed fetch stores nothing. A
    cache that cannot take the pack (full, read-only) raises CacheNotWritable, naming its
    folder; one the cache's rule refuses, CacheUnsafe."""

    def __init__(self, store: BlobStore) -> None:
        self.store = store
        self.name = f"{os.urandom(16).hex()}.pack"
        self.entries: dict[str, Location] = {}
        self.offset = 0
        self.file: CacheFile | None = None

    def __enter__(self) -> PackWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:  # not committed
            self.file.discard()
            self.file = None

    def add(self, data: bytes) -> str:
        """Queue DATA for the pack unless the store or this pack has it; its content hash.
        CacheNotWritable when the cache cannot take it."""
        digest = content_hash(data)
        if digest in self.entries or self.store.has(digest):
            return digest
        try:
            if self.file is None:  # open across add() calls
                self.file = CacheFile(self.store.root / "packs" / self.name)
            self.file.write(data)
        except OSError as error:
            raise cache_not_writable(self.store.root, error) from None
        self.entries[digest] = (self.name, self.offset, len(data))
        self.offset += len(data)
        return digest

    def commit(self) -> None:
        """The pack in place, then the index that names it (nothing to do if nothing new)."""
        if self.file is None:
            return
        try:
            self.file.commit()
        except OSError as error:
            raise cache_not_writable(self.store.root, error) from None
        self.file = None
        self.store.sizes[self.name] = self.offset
        self.store.merge(self.entries)
