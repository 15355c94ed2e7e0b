"""A fact cache with flipped bytes, kind by kind: each damaged entry is computed again, so the
answers are those of a fresh cache, and never a traceback, though parts of some entries
(names' sets, rows' units) are unpickled long after the read. The packs' indexes (`*.idx`,
tracer/store/cache.py) are sealed too: a damaged one is dropped and its entries computed and
packed again."""

from __future__ import annotations

import io
import os
import re
import shutil
import textwrap
import zlib
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tests.unit.test_explain_snippets import LOG, TREE
from tracer.cli.main import main
from tracer.sources.sealed import unseal
from tracer.store.parts import Parts

FILES = {
    **TREE,
    "pkg/launch.py": """
        from pkg.runner import Args, Runner


        class FastArgs(Args):
            fraction: float = 0.95


        def launch(fraction):
            runner = Runner(FastArgs(fraction))
            runner.start()
            return runner.size
    """,
}
COMMANDS = (
    ("trace", "{root}", "fraction", "--json"),
    ("explain", "{root}", "--log", "{log}", "--param", "fraction", "--to", "size", "--json"),
)
# Each cached kind, as the globs of its entries under the cache folder. The summaries' packs
# are read only when the tree's own entry is missing: that one is damaged with them.
KINDS = {
    "stat": ("stat/*.pkl",),
    "summaries": ("facts/summaries/*/*.pkl",),
    "summary packs": ("facts/summaries/*/*.pkl", "facts/summaries-packs/*/*.pack"),
    "summary pack indexes": ("facts/summaries/*/*.pkl", "facts/summaries-packs/*/*.idx"),
    "flowrows": ("facts/flowrows/*/*.pkl",),
    "names": ("facts/names/*/*.pkl",),
    "greps": ("facts/greps/*/*.pkl",),
    "derived": ("facts/derived/*/*.pkl",),
    "templates": ("facts/templates/*/*.pkl",),
}
SINGLE_ENTRIES = {"stat", "summaries", "flowrows", "names", "greps", "derived", "templates"}
# Entries in parts, each part checked when it is first read: each part is damaged, so that
# whichever a command reads first has the entry made again.
PARTED = {"flowrows", "names"}


def answers(root: Path, cache: Path) -> list[tuple[int, str, str]]:
    """Exit code, stdout and stderr of each of COMMANDS over ROOT with the fact cache CACHE."""
    found = []
    before = os.environ.get("SGTRACE_CACHE")
    os.environ["SGTRACE_CACHE"] = str(cache)
    try:
        for command in COMMANDS:
            out, err = io.StringIO(), io.StringIO()
            with redirect_stdout(out), redirect_stderr(err):
                code = main([a.format(root=root, log=root.parent / "server.log") for a in command])
            found.append((code, out.getvalue(), err.getvalue()))
    finally:
        if before is None:
            os.environ.pop("SGTRACE_CACHE")
        else:
            os.environ["SGTRACE_CACHE"] = before
    return found


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list]:
    """The tree, a cache filled by COMMANDS, and their answers with it empty at first."""
    top = tmp_path_factory.mktemp("damaged")
    root = top / "tree"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    (top / "server.log").write_text(LOG)
    first = answers(root, top / "cache")
    # explain exits 1: this tree's formula does not give the log's count (it says where)
    assert [code for code, _, _ in first] == [0, 1], first
    return root, top / "cache", first


def spans(kind: str, entry: bytes) -> list[tuple[int, int]]:
    """Where ENTRY is damaged: each of its parts, checked apart (tracer/store/parts.py), or
    the whole of it."""
    if kind not in PARTED:
        return [(0, len(entry))]
    parts = Parts.read(entry, list)
    assert parts is not None
    bounds = zip(parts.starts, parts.starts[1:], strict=False)
    return [(start, end) for start, end in bounds if end > start]


def intact(kind: str, entry: bytes) -> bool:
    if kind not in PARTED:
        return unseal(entry) is not None
    parts = Parts.read(entry, list)
    assert parts is not None and parts.checks is not None
    return all(zlib.crc32(parts.raw(n)) == parts.checks[n] for n in range(len(parts)))


def entries(cache: Path, kind: str) -> list[Path]:
    found = sorted(path for pattern in KINDS[kind] for path in cache.glob(pattern))
    assert found, f"no {kind} entry"
    return found


@pytest.mark.parametrize("where", [0.5, 1.0])
@pytest.mark.parametrize("kind", KINDS)
def test_a_flipped_byte_in_an_entry_gives_the_answers_of_a_fresh_cache(
    fresh: tuple[Path, Path, list], tmp_path: Path, kind: str, where: float
) -> None:
    root, good, first = fresh
    cache = tmp_path / "cache"
    shutil.copytree(good, cache)
    damaged = entries(cache, kind)
    for path in damaged:
        data = bytearray(path.read_bytes())
        for start, end in spans(kind, bytes(data)):
            data[start + min(int((end - start) * where), end - start - 1)] ^= 0x10
        path.write_bytes(bytes(data))
    assert answers(root, cache) == first
    if kind in SINGLE_ENTRIES:  # written again, whole
        assert all(intact(kind, path.read_bytes()) for path in damaged)
    indexes = list(cache.glob("facts/summaries-packs/*/*.idx"))
    assert indexes and all(unseal(path.read_bytes()) is not None for path in indexes)
    assert answers(root, cache) == first


@pytest.mark.parametrize("kind", sorted(PARTED))
def test_an_entry_with_a_damaged_directory_is_computed_again(
    fresh: tuple[Path, Path, list], tmp_path: Path, kind: str
) -> None:
    root, good, first = fresh
    cache = tmp_path / "cache"
    shutil.copytree(good, cache)
    damaged = entries(cache, kind)
    for path in damaged:
        data = bytearray(path.read_bytes())
        data[13] ^= 0x10  # the length of the first part
        path.write_bytes(bytes(data))
    assert answers(root, cache) == first
    assert all(intact(kind, path.read_bytes()) for path in damaged)


def test_an_entry_cut_short_or_emptied_is_computed_again(
    fresh: tuple[Path, Path, list], tmp_path: Path
) -> None:
    root, good, first = fresh
    cache = tmp_path / "cache"
    shutil.copytree(good, cache)
    for number, kind in enumerate(sorted(SINGLE_ENTRIES)):
        for path in entries(cache, kind):
            path.write_bytes(path.read_bytes()[: number % 3])  # nothing, 1 byte, 2 bytes
    assert answers(root, cache) == first


def test_a_pack_index_with_a_key_no_longer_text_gives_the_answers_of_a_fresh_cache(
    fresh: tuple[Path, Path, list], tmp_path: Path
) -> None:
    """A flipped high bit in a key of a pack's index: unpickled, that key is no longer UTF-8
    (UnicodeDecodeError); sealed, the index is dropped before it is unpickled."""
    root, good, first = fresh
    cache = tmp_path / "cache"
    shutil.copytree(good, cache)
    (cache / "facts/summaries").rename(cache / "facts/moved")  # the tree's entry: missing
    indexes = sorted(cache.glob("facts/summaries-packs/*/*.idx"))
    assert indexes
    for path in indexes:
        data = bytearray(path.read_bytes())
        found = re.search(rb"[0-9a-f]{32}", data)
        assert found is not None
        data[found.start() + 16] ^= 0x80
        path.write_bytes(bytes(data))
    assert answers(root, cache) == first
