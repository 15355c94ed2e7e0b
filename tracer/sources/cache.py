"""The cache folder, content hashes and atomic writes: what every cached kind (releases, fetched
blobs, facts) is stored with. A cache that cannot be written raises CacheNotWritable, naming
the folder; the kinds that can do without it go on uncached (`tell_uncached`, once)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from tracer.errors import CacheNotWritable, SgtraceError
from tracer.sources.safe_write import write_file


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
    """Write DATA to the cache file PATH so that readers see the old file or the whole new
    one, never a part, by the rules of tracer/sources/safe_write.py (its folder made when
    missing). CacheNotWritable when the disk or the rules refuse."""
    try:
        try:
            write_file(path, data)
        except FileNotFoundError:  # its folder is not made yet
            path.parent.mkdir(parents=True, exist_ok=True)
            write_file(path, data)
    except (OSError, SgtraceError) as error:
        raise cache_not_writable(path, error) from None


def cache_not_writable(path: Path | str, error: OSError | SgtraceError) -> CacheNotWritable:
    """The error to raise when writing PATH, in the cache, failed with ERROR."""
    root = Path(os.path.abspath(cache_root()))
    full = Path(os.path.abspath(path))
    folder = root if full.is_relative_to(root) else full.parent
    reason = error.message if isinstance(error, SgtraceError) else error.strerror or str(error)
    return CacheNotWritable(
        f"the cache folder {folder} is not writable ({reason})",
        "free some space there, or point SGTRACE_CACHE at a folder you can write",
    )


TOLD_UNCACHED: list[CacheNotWritable] = []


def tell_uncached(error: CacheNotWritable) -> None:
    """Say on stderr, once per process, that what ERROR stopped goes on without caching."""
    if not TOLD_UNCACHED:
        TOLD_UNCACHED.append(error)
        print(f"sgtrace: warning: going on without caching: {error}", file=sys.stderr)
