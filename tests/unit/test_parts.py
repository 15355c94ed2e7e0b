"""Cache entries in parts (tracer/store/parts.py) and the tables read where they lie in a part
(tracer/store/columns.py): a key is found without decoding the others, and a damaged byte a
read meets has the entry made again, once; one no read meets changes nothing."""

from __future__ import annotations

import pickle

from tracer.store.columns import KeyedInts, KeyedPickles, Texts
from tracer.store.parts import Parts, pack_entry

CALLEES = {"alloc": (3, 7), "free": (4,), "": (9,), "größe": (1, 2), "a\tb\nc": (5,)}
READS = {"size": (("Pool.grow", "cfg"),), "page": (("<module>", "cfg"), ("f", "self"))}
PARTS = [KeyedInts.encode(CALLEES), KeyedPickles.encode(READS), Texts.encode(["x", "", "ü"])]


class Remakes:
    """A remake that counts its calls and gives the parts made now."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> list[bytes]:
        self.count += 1
        return list(PARTS)


def flipped(entry: bytes, at: int) -> bytes:
    data = bytearray(entry)
    data[at] ^= 0x10
    return bytes(data)


def where(entry: bytes, number: int, fraction: float) -> int:
    """A byte of part NUMBER of ENTRY, FRACTION of the way into it."""
    parts = Parts.read(entry, list)
    assert parts is not None
    start, end = parts.starts[number], parts.starts[number + 1]
    return start + int((end - start) * fraction)


def test_a_keyed_table_answers_each_key_and_keeps_their_order():
    parts = Parts.made(PARTS)
    callees = KeyedInts(parts, 0)
    assert {key: callees.get(key) for key in CALLEES} == CALLEES
    assert callees.get("other") == () and callees.get("other", None) is None
    assert "alloc" in callees and "alloc " not in callees and 3 not in callees
    assert list(callees) == list(CALLEES)
    reads: KeyedPickles[tuple[tuple[str, str], ...]] = KeyedPickles(parts, 1)
    assert reads.get("page") == READS["page"] and list(reads.made) == ["page"]
    assert reads.items() == list(READS.items())
    assert list(Texts(parts, 2)) == ["x", "", "ü"]
    assert list(KeyedInts(Parts.made([KeyedInts.encode({})]), 0)) == []


def test_an_entry_reads_back_its_parts():
    parts = Parts.read(pack_entry(PARTS), Remakes())
    assert parts is not None and len(parts) == 3 and not parts.trusted
    assert [bytes(parts.checked(n)) for n in range(3)] == PARTS
    assert KeyedInts(parts, 0).get("free") == (4,)


def test_a_damaged_directory_reads_as_no_entry():
    entry = pack_entry(PARTS)
    for at in (0, 5, 9, 13, 20):
        assert Parts.read(flipped(entry, at), Remakes()) is None
    assert Parts.read(entry[:-1], Remakes()) is None
    assert Parts.read(entry + b"\0", Remakes()) is None


def test_a_damaged_part_has_the_entry_made_again_when_it_is_read():
    entry = pack_entry(PARTS)
    for number, fraction in [(0, 0.1), (0, 0.5), (0, 0.99), (1, 0.05), (1, 0.4), (2, 0.9)]:
        remakes = Remakes()
        parts = Parts.read(flipped(entry, where(entry, number, fraction)), remakes)
        assert parts is not None
        callees = KeyedInts(parts, 0)
        reads: KeyedPickles[tuple[tuple[str, str], ...]] = KeyedPickles(parts, 1)
        assert {key: callees.get(key) for key in CALLEES} == CALLEES
        assert {key: reads.get(key) for key in READS} == READS
        assert list(Texts(parts, 2)) == ["x", "", "ü"]
        assert remakes.count == 1 and parts.trusted


def test_a_damaged_part_no_read_meets_changes_nothing():
    entry = pack_entry(PARTS)
    remakes = Remakes()
    parts = Parts.read(flipped(entry, where(entry, 2, 0.5)), remakes)
    assert parts is not None
    assert KeyedInts(parts, 0).get("alloc") == (3, 7)
    assert KeyedPickles(parts, 1).get("size") == READS["size"]
    assert remakes.count == 0 and not parts.trusted


def test_a_keyed_value_is_checked_alone():
    """A damaged value of a pickled table has the entry made again when that key is read,
    not when another is."""
    entry = pack_entry(PARTS)
    value = pickle.dumps(READS["page"], pickle.HIGHEST_PROTOCOL)
    at = entry.rindex(value) + len(value) // 2
    remakes = Remakes()
    parts = Parts.read(flipped(entry, at), remakes)
    assert parts is not None
    reads: KeyedPickles[tuple[tuple[str, str], ...]] = KeyedPickles(parts, 1)
    assert reads.get("size") == READS["size"] and remakes.count == 0
    assert reads.get("page") == READS["page"] and remakes.count == 1


def test_a_table_read_before_its_entry_was_made_again_still_checks_what_it_reads():
    """The entry is made again for a damaged part; a table read from the old entry before
    that still checks each value it reads there."""
    entry = pack_entry(PARTS)
    value = pickle.dumps(READS["page"], pickle.HIGHEST_PROTOCOL)
    entry = flipped(entry, entry.rindex(value) + len(value) // 2)
    remakes = Remakes()
    parts = Parts.read(flipped(entry, where(entry, 2, 0.5)), remakes)
    assert parts is not None
    reads: KeyedPickles[tuple[tuple[str, str], ...]] = KeyedPickles(parts, 1)
    assert reads.get("size") == READS["size"]  # its table read from the old entry
    assert list(Texts(parts, 2)) == ["x", "", "ü"] and remakes.count == 1
    assert reads.get("page") == READS["page"] and remakes.count == 2


def test_a_sequence_value_is_checked_alone():
    """A damaged string of a sequence has the entry made again when that one is read, not
    when another is; a damaged count or end is known when the sequence is read."""
    entry = pack_entry(PARTS)
    remakes = Remakes()
    parts = Parts.read(flipped(entry, len(entry) - 1), remakes)  # in "ü", the last
    assert parts is not None
    texts = Texts(parts, 2)
    assert texts[0] == "x" and texts[1] == "" and remakes.count == 0
    assert texts[2] == "ü" and remakes.count == 1
    for at in (0.0, 0.3, 0.47):  # the count, the first end, the last end
        remakes = Remakes()
        parts = Parts.read(flipped(entry, where(entry, 2, at)), remakes)
        assert parts is not None
        assert list(Texts(parts, 2)) == ["x", "", "ü"] and remakes.count == 1
