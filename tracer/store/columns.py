"""Tables and sequences read where they lie in a part of a cache entry (`tracer.store.parts`),
nothing decoded but what is asked. A query asks most tables of the files it reaches for one
name or a few (the calls of a name, the reads of an attribute): unpickling a whole table to
answer cost ten to thirty times more than finding the name in its bytes (and a table asked
for many names is better pickled whole, as the rows do).

A keyed table is a hash table of slots, then text: each key's UTF-8 and its value's bytes one
after the other, a slot holding where its key starts, ends and its value ends. The keys are
text the extractor decoded (UTF-8 with replacement): they hold no lone surrogate."""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, Generic, TypeVar, overload

from tracer.store.parts import Parts, read_words, words

T = TypeVar("T")
V = TypeVar("V")
HEAD = 12  # a keyed table's count of slots, its text's length, the table's checksum


def keyed_part(records: Sequence[tuple[str, bytes]], rest: bytes = b"") -> bytes:
    """RECORDS (key, value's bytes) as a keyed table, REST after it: the count of slots, the
    text's length, the checksum of the slots and text; each slot (where its key starts, 0 if
    empty; where the key ends; where the value ends), the text (one byte, so that no key
    starts at 0, then each key and its value), then REST, which the table's reader checks
    itself."""
    count = 2 * len(records) + 1  # half full at most: a probe ends soon at an empty slot
    slots = [0] * (3 * count)
    text = [b"\0"]
    start = 1
    for key, value in records:
        data = key.encode()
        slot = zlib.crc32(data) % count
        while slots[3 * slot]:
            slot = (slot + 1) % count
        end = start + len(data)
        slots[3 * slot : 3 * slot + 3] = (start, end, end + len(value))
        text += (data, value)
        start = end + len(value)
    table = words(slots) + b"".join(text)
    return words([count, len(table) - 12 * count, zlib.crc32(table)]) + table + rest


class Keyed:
    """Key -> its value's bytes, in the keyed table (see `keyed_part`) of part NUMBER, read
    (and its checksum checked) when first asked."""

    __slots__ = ("count", "number", "parts", "rest", "slots", "text", "trusted")

    def __init__(self, parts: Parts, number: int) -> None:
        self.parts = parts
        self.number = number
        self.text: bytes | None = None

    def read(self) -> bytes:
        data = self.parts.raw(self.number)
        count, length, check = read_words(data[:HEAD]) if len(data) >= HEAD else (0, 0, 0)
        end = HEAD + 12 * count + length
        table = data[HEAD:end]
        self.trusted = self.parts.trusted  # are its values, read later, checked already?
        if not self.trusted and (
            not count or len(table) != end - HEAD or zlib.crc32(table) != check
        ):
            self.parts.damaged()
            return self.read()
        self.count = count
        self.slots = read_words(table[: 12 * count])
        self.rest = data[end:]
        self.text = bytes(table[12 * count :])
        return self.text

    def value(self, key: str) -> bytes | None:
        """The bytes of KEY's value; None if it has none."""
        data = key.encode()
        text = self.text or self.read()
        slots = self.slots
        at = zlib.crc32(data) % self.count * 3
        while start := slots[at]:
            end = slots[at + 1]
            if end - start == len(data) and text.startswith(data, start):
                return text[end : slots[at + 2]]
            at = (at + 3) % len(slots)
        return None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.value(key) is not None

    def records(self) -> list[tuple[str, bytes]]:
        """Every key and its value's bytes, in the order they were given."""
        text = self.text or self.read()
        slots = self.slots
        found = sorted(tuple(slots[at : at + 3]) for at in range(0, len(slots), 3) if slots[at])
        return [(text[start:end].decode(), text[end:stop]) for start, end, stop in found]

    def __iter__(self) -> Iterator[str]:
        return iter([key for key, _ in self.records()])


def ints_text(values: Iterable[int]) -> bytes:
    return b",".join(b"%d" % value for value in values)


class KeyedInts(Keyed):
    """Key -> a tuple of ints, written in decimal (a scope -> its returns' indices)."""

    __slots__ = ()

    @staticmethod
    def encode(table: dict[str, tuple[int, ...]]) -> bytes:
        return keyed_part([(key, ints_text(values)) for key, values in table.items()])

    def get(self, key: str, default: Any = ()) -> tuple[int, ...]:
        text = self.value(key)
        if text is None:
            return default  # type: ignore[no-any-return]
        return tuple(map(int, text.split(b","))) if text else ()


class KeyedPickles(Keyed, Generic[V]):
    """Key -> V, each value pickled apart after the table (its record's value: `START,END,
    CHECKSUM` in decimal), checked and unpickled when first asked."""

    __slots__ = ("made",)

    def __init__(self, parts: Parts, number: int) -> None:
        super().__init__(parts, number)
        self.made: dict[str, V] = {}

    @staticmethod
    def encode(table: dict[str, Any]) -> bytes:
        records = []
        values = []
        start = 0
        for key, value in table.items():
            data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
            records.append((key, ints_text((start, start + len(data), zlib.crc32(data)))))
            values.append(data)
            start += len(data)
        return keyed_part(records, b"".join(values))

    def get(self, key: str, default: Any = ()) -> V:
        found = self.made.get(key)
        if found is not None:
            return found
        text = self.value(key)
        if text is None:
            return default  # type: ignore[no-any-return]
        start, end, check = map(int, text.split(b","))
        data = self.rest[start:end]
        if not self.trusted and zlib.crc32(data) != check:
            self.parts.damaged()
            self.read()  # the table again, from the entry made again
            return self.get(key, default)
        found = self.made[key] = pickle.loads(data)
        return found

    def items(self) -> list[tuple[str, V]]:
        return [(key, self.get(key)) for key in self]


class Items(Sequence[T]):
    """Values each encoded apart, in part NUMBER, each checked and decoded when read: a reader
    asking one of many (a call's scope, a unit's row) decodes that one alone, and checks no
    other. The part is the count of values and that count's checksum; where each value ends;
    each value's checksum; then the values one after the other. A damaged end or checksum
    fails the check of the values it bounds, as a damaged value does."""

    __slots__ = ("count", "ends", "number", "parts", "sums", "trusted", "values")

    def __init__(self, parts: Parts, number: int) -> None:
        self.parts = parts
        self.number = number
        self.read()

    @staticmethod
    def pack(encoded: Sequence[bytes]) -> bytes:
        count = words([len(encoded)])
        listed = words([*accumulate(map(len, encoded)), *map(zlib.crc32, encoded)])
        return count + words([zlib.crc32(count)]) + listed + b"".join(encoded)

    @staticmethod
    def decode(data: memoryview) -> T:
        raise NotImplementedError

    def read(self) -> None:
        data = self.parts.raw(self.number)
        self.trusted = self.parts.trusted  # are its values checked already?
        if not self.trusted and not self.intact(data):
            self.parts.damaged()
            self.read()
            return
        self.count = count = read_words(data[:4])[0]
        self.ends = read_words(data[8 : 8 + 4 * count])
        self.sums = read_words(data[8 + 4 * count : 8 + 8 * count])
        self.values = data[8 + 8 * count :]

    @staticmethod
    def intact(data: memoryview) -> bool:
        """Does DATA hold its count, and as many ends and checksums, and values to the last
        end?"""
        if len(data) < 8 or zlib.crc32(data[:4]) != read_words(data[4:8])[0]:
            return False
        count = read_words(data[:4])[0]
        if len(data) < 8 + 8 * count:
            return False
        return (
            not count
            or len(data) == 8 + 8 * count + read_words(data[4 + 4 * count : 8 + 4 * count])[0]
        )

    def __len__(self) -> int:
        return self.count

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.count))]
        if index < 0:
            index += self.count
        data = self.values[self.ends[index - 1] if index else 0 : self.ends[index]]
        if not self.trusted and zlib.crc32(data) != self.sums[index]:
            self.parts.damaged()
            self.read()  # the values again, from the entry made again
            return self[index]
        return self.decode(data)


class Texts(Items[str]):
    """Strings, each decoded when read."""

    __slots__ = ()

    @staticmethod
    def encode(texts: Iterable[str]) -> bytes:
        return Items.pack([text.encode() for text in texts])

    @staticmethod
    def decode(data: memoryview) -> str:
        return str(data, "utf-8")


class Pickles(Items[Any]):
    """Values each pickled apart, each unpickled when read."""

    __slots__ = ()

    @staticmethod
    def encode(pickled: Sequence[bytes]) -> bytes:
        return Items.pack(pickled)

    @staticmethod
    def decode(data: memoryview) -> Any:
        return pickle.loads(data)
