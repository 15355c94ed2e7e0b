"""An entry's parts read from its file as they are asked (tracer/store/partial.py): the first
parts with the directory, each later one when first asked; a later part that cannot be read
as the directory says, or whose checksum fails, has the entry made again, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_parts import CALLEES, PARTS, READS, Remakes, flipped, where
from tracer.store import partial
from tracer.store.columns import KeyedInts, KeyedPickles, Texts
from tracer.store.partial import PartialParts
from tracer.store.parts import pack_entry


@pytest.fixture(autouse=True)
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads as a large entry's: the directory alone first, no tail read whole."""
    monkeypatch.setattr(partial, "FIRST_READ", 16)
    monkeypatch.setattr(partial, "WHOLE_TAIL", 0)


def stored(tmp_path: Path, entry: bytes) -> str:
    path = tmp_path / "entry.pkl"
    path.write_bytes(entry)
    return str(path)


def answers(parts: PartialParts) -> tuple[dict[str, tuple[int, ...]], object, list[str]]:
    callees = KeyedInts(parts, 0)
    reads: KeyedPickles[tuple[tuple[str, str], ...]] = KeyedPickles(parts, 1)
    return (
        {key: callees.get(key) for key in CALLEES},
        {key: reads.get(key) for key in READS},
        list(Texts(parts, 2)),
    )


EXPECTED = (CALLEES, READS, ["x", "", "ü"])


def test_the_first_parts_are_read_at_once_the_others_when_asked(tmp_path: Path):
    entry = pack_entry(PARTS)
    remakes = Remakes()
    parts = PartialParts.open(stored(tmp_path, entry), 1, remakes)
    assert isinstance(parts, PartialParts) and len(parts) == 3
    assert len(parts.data) == parts.starts[1] and not parts.later
    assert answers(parts) == EXPECTED
    assert sorted(parts.later) == [1, 2] and remakes.count == 0 and not parts.trusted
    assert [bytes(parts.checked(n)) for n in range(3)] == PARTS


def test_a_short_tail_is_read_with_the_first_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(partial, "WHOLE_TAIL", 1 << 14)
    parts = PartialParts.open(stored(tmp_path, pack_entry(PARTS)), 1, Remakes())
    assert parts is not None and len(parts.data) == parts.starts[-1]
    assert isinstance(parts, PartialParts)
    assert answers(parts) == EXPECTED and not parts.later


def test_no_file_or_a_damaged_directory_reads_as_no_entry(tmp_path: Path):
    entry = pack_entry(PARTS)
    assert PartialParts.open(str(tmp_path / "missing.pkl"), 1, Remakes()) is None
    for at in (0, 5, 9, 13, 20):
        assert PartialParts.open(stored(tmp_path, flipped(entry, at)), 1, Remakes()) is None
    assert PartialParts.open(stored(tmp_path, entry[:-1]), 1, Remakes()) is None
    assert PartialParts.open(stored(tmp_path, entry + b"\0"), 1, Remakes()) is None
    assert PartialParts.open(stored(tmp_path, entry[:7]), 1, Remakes()) is None


def test_a_damaged_later_part_has_the_entry_made_again_when_it_is_read(tmp_path: Path):
    entry = pack_entry(PARTS)
    for number, fraction in [(1, 0.05), (1, 0.4), (2, 0.9)]:
        remakes = Remakes()
        damaged = flipped(entry, where(entry, number, fraction))
        parts = PartialParts.open(stored(tmp_path, damaged), 1, remakes)
        assert isinstance(parts, PartialParts)
        assert answers(parts) == EXPECTED
        assert remakes.count == 1 and parts.trusted and not parts.later


@pytest.mark.parametrize("change", ["removed", "cut"])
def test_a_file_changed_after_its_first_read_has_the_entry_made_again(tmp_path: Path, change: str):
    path = Path(stored(tmp_path, pack_entry(PARTS)))
    remakes = Remakes()
    parts = PartialParts.open(str(path), 1, remakes)
    assert isinstance(parts, PartialParts)
    if change == "removed":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[: parts.starts[2]])
    assert answers(parts) == EXPECTED
    assert remakes.count == 1 and parts.trusted
