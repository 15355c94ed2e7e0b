"""The cache folder's rule (tracer/sources/cache.py) where the integration tests do not reach:
a cache removed while a process uses it is made again, by the same rule."""

from __future__ import annotations

import errno
import shutil
import stat
from pathlib import Path

import pytest

from tracer.sources.cache import cache_not_writable, cache_root, write_atomic


def test_a_cache_removed_between_two_writes_is_made_again_as_the_first_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    entry = cache_root() / "facts" / "ab" / "ab12.pkl"
    write_atomic(entry, b"one")
    shutil.rmtree(tmp_path / "cache")  # deleting the folder is always safe

    write_atomic(entry, b"two")

    assert entry.read_bytes() == b"two"
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "cache",
        "cache/facts",
        "cache/facts/ab",
        "cache/facts/ab/ab12.pkl",
    ]


@pytest.mark.parametrize(
    ("error", "fix"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "free some space there, or "),
        (OSError(errno.EACCES, "Permission denied"), ""),
        (OSError(errno.EROFS, "Read-only file system"), ""),
    ],
    ids=["full", "not yours", "read-only"],
)
def test_a_cache_that_cannot_be_written_is_told_the_fix_of_its_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, fix: str
) -> None:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    entry = cache_root() / "facts" / "ab" / "ab12.pkl"

    assert str(cache_not_writable(entry, error)) == (
        f"the cache folder {tmp_path / 'cache'} is not writable ({error.strerror}): "
        f"{fix}point SGTRACE_CACHE at a folder you can write"
    )
