"""A cache that cannot keep what a fetch receives (issue 15: 14): one line naming the cache
folder, not "the connection was lost"; nothing left in the cache, not even a partial pack."""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.fetching import (
    ROOT,
    Run,
    blob_names,
    hashes,
    mirrored_hashes,
    probed_files,
    write_package,
)
from tests.sshd import SshServer

# One module past the limit below, or many small ones that fill the pack's write buffer
# first (its last flush then fails as well, when the pack is dropped).
TREES = {
    "one large module": {"mod.py": "x0 = 1\n" * 2000},
    "many small modules": {f"m{i}.py": f"x{i} = 1\n" * 100 for i in range(20)},
}


@pytest.fixture(params=sorted(TREES))
def tree(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return write_package(tmp_path / "tree", TREES[request.param])


def test_a_cache_under_a_file_is_named_not_a_lost_connection(
    client: SshServer,
    sgtrace: Callable[..., Run],
    tmp_path: Path,
    tree: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "file").write_text("")
    cache = tmp_path / "file" / "cache"  # ENOTDIR on every write, even for root
    monkeypatch.setenv("SGTRACE_CACHE", str(cache))

    line = sgtrace("fetch", f"{client.alias}:{tree}").error_line()

    assert f"the cache folder {cache} is not writable (Not a directory)" in line
    assert "SGTRACE_CACHE" in line
    assert "connection" not in line


def test_a_full_cache_is_named_not_a_lost_connection(
    client: SshServer, tmp_path: Path, tree: Path
) -> None:
    # A full disk, as a file-size limit on the process makes it (EFBIG for ENOSPC).
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))

    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-m", "tracer.cli", "fetch", f"{client.alias}:{tree}"],
        cwd=ROOT,
        env={**client.client_env(), "SGTRACE_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=limited,
    )

    line = Run(done.returncode, done.stdout, done.stderr).error_line()
    assert f"the cache folder {cache} is not writable (File too large)" in line
    assert [p for p in cache.rglob("*") if p.is_file()] == []


def test_a_damaged_blob_index_is_fetched_again_as_into_a_fresh_cache(
    client: SshServer, sgtrace: Callable[..., Run], cache: Path, tree: Path
) -> None:
    source = f"{client.alias}:{tree}"
    [fresh] = sgtrace("fetch", source, "--json").results()
    traced = sgtrace("trace", source, "x0", "--quiet", "--color", "never")
    assert traced.code == 0 and "x0 = 1" in traced.out
    index = cache / "blobs" / "index.pkl"
    data = bytearray(index.read_bytes())
    data[len(data) // 2] ^= 0x10  # in the middle: an offset, a size or a name
    index.write_bytes(bytes(data))

    [again] = sgtrace("fetch", source, "--json").results()

    assert again["fetched_files"] == fresh["fetched_files"] == len(probed_files(tree))
    assert mirrored_hashes(cache) == hashes(probed_files(tree))
    assert blob_names(cache) >= set(hashes(probed_files(tree)).values())  # indexed again
    assert sgtrace("trace", source, "x0", "--quiet", "--color", "never") == traced
