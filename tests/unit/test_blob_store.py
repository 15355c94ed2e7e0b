"""The store of fetched files (tracer/sources/blobs.py) when its own files are damaged or
cannot be written: a damaged blob is reported and dropped, never read as another file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracer.errors import CacheDamaged, CacheUnsafe
from tracer.sources.blobs import BlobStore


def stored(root: Path, contents: dict[str, bytes]) -> dict[str, str]:
    return BlobStore(root).add(contents)


def flipped(path: Path, where: float) -> None:
    data = bytearray(path.read_bytes())
    data[min(int(len(data) * where), len(data) - 1)] ^= 0x10
    path.write_bytes(bytes(data))


def test_a_damaged_blob_is_reported_when_its_index_cannot_be_written(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    digest = stored(root, {"mod.py": b"x = 1\n"})["mod.py"]
    [pack] = (root / "packs").glob("*.pack")
    flipped(pack, 0.0)
    store = BlobStore(root)  # reads the index before it becomes unwritable
    (root / "index.pkl").unlink()
    (root / "index.pkl").mkdir()  # the index cannot be written, even by root

    with pytest.raises(CacheDamaged, match="a fetched file in the cache is damaged"):
        store.read(digest)


@pytest.mark.parametrize("where", [0.0, 0.5, 1.0])
def test_a_damaged_index_is_dropped_and_written_again_whole(tmp_path: Path, where: float) -> None:
    root = tmp_path / "blobs"
    contents = {"a.py": b"a = 1\n", "b.py": b"b = 2\n"}
    named = stored(root, contents)
    flipped(root / "index.pkl", where)

    assert BlobStore(root).index == {}  # nothing it named is taken: fetched again
    assert stored(root, contents) == named
    store = BlobStore(root)
    assert {path: store.read(digest) for path, digest in named.items()} == contents


def test_a_link_where_the_packs_go_is_refused_and_nothing_goes_through_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "cache" / "blobs"
    root.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "packs").symlink_to(elsewhere)

    with pytest.raises(CacheUnsafe) as refused:
        stored(root, {"mod.py": b"x = 1\n"})

    assert str(refused.value) == (
        f"cannot use the cache folder {tmp_path / 'cache'}: {root / 'packs'} is a link (sgtrace "
        "follows none in its cache): remove it, or point SGTRACE_CACHE at a folder of yours"
    )
    assert list(elsewhere.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == ["packs"]
