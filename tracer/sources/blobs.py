"""The content-addressed store of fetched files: contents named by their hash, kept in pack
files (one pack per fetch: one file write instead of thousands) with an index from hash to
(pack, offset, size). Packs and index are written atomically, the index last."""

from __future__ import annotations

import pickle
import uuid
from pathlib import Path

from tracer.sources.cache import content_hash, write_atomic

Location = tuple[str, int, int]  # pack name, offset, size


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.index = self.load_index()
        self.packs: dict[str, bytes] = {}

    def load_index(self) -> dict[str, Location]:
        try:
            found = pickle.loads((self.root / "index.pkl").read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def has(self, digest: str) -> bool:
        location = self.index.get(digest)
        return location is not None and (self.root / "packs" / location[0]).exists()

    def read(self, digest: str) -> bytes:
        pack, offset, size = self.index[digest]
        data = self.packs.get(pack)
        if data is None:  # a snapshot reads every file (greps): keep the pack whole
            data = self.packs[pack] = (self.root / "packs" / pack).read_bytes()
        return data[offset : offset + size]

    def add(self, contents: dict[str, bytes]) -> dict[str, str]:
        """Store CONTENTS (path -> bytes); returns path -> content hash. Contents already
        stored are not written again."""
        named = {path: content_hash(data) for path, data in contents.items()}
        new: dict[str, bytes] = {}
        for path, digest in named.items():
            if not self.has(digest):
                new.setdefault(digest, contents[path])
        if not new:
            return named
        pack = f"{uuid.uuid4().hex}.pack"
        entries: dict[str, Location] = {}
        chunks: list[bytes] = []
        offset = 0
        for digest, data in new.items():
            entries[digest] = (pack, offset, len(data))
            chunks.append(data)
            offset += len(data)
        write_atomic(self.root / "packs" / pack, b"".join(chunks))
        # Merge with what other processes may have added since this store was opened.
        self.index = {**self.load_index(), **self.index, **entries}
        write_atomic(self.root / "index.pkl", pickle.dumps(self.index, pickle.HIGHEST_PROTOCOL))
        return named
