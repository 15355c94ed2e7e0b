"""The on-disk cache: unpacked releases, and facts keyed by content hash. Writes are atomic."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any


def cache_root() -> Path:
    """`$SGTRACE_CACHE`, else `$XDG_CACHE_HOME/sgtrace`, else `~/.cache/sgtrace`."""
    explicit = os.environ.get("SGTRACE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "sgtrace"


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write DATA to PATH so that readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class FactCache:
    """Pickled facts under `facts/`, one entry per (kind, content hash, extractor version)."""

    def __init__(self, root: Path | None = None, enabled: bool = True) -> None:
        self.root = (root or cache_root()) / "facts"
        self.enabled = enabled

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.pkl"

    def get(self, kind: str, key: str) -> Any | None:
        if not self.enabled:
            return None
        try:
            return pickle.loads(self.path(kind, key).read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            # Missing, or written by an incompatible version: recompute.
            return None

    def put(self, kind: str, key: str, value: Any) -> None:
        if self.enabled:
            write_atomic(self.path(kind, key), pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
