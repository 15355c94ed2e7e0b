"""Cache entries in parts, each part checked against its own checksum when it is first read.

A query reads a few parts of most entries it loads (a table asked for one name, the rows of one
unit): checking a whole entry at each read cost more than decoding all that the query used
(measured: 5% of a first trace's instructions). A part found damaged has its entry made again
(`remake`, given by the reader: its facts computed again and the entry written again); parts
decode alone and a remade entry holds the same facts, so what was decoded before stays right.

Integers in parts are unsigned 32-bit words in the machine's byte order, read where they lie
(`memoryview.cast`); an entry written on a machine of the other order reads as no entry."""

from __future__ import annotations

import struct
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate

WORD = "I"
HEAD = struct.Struct(f"=3{WORD}")  # the byte-order mark, the directory's checksum, the count
ORDER = 0x53475031  # "SGP1" as a word: in the other byte order it reads otherwise
Remake = Callable[[], Sequence[bytes]]


def words(values: Iterable[int]) -> bytes:
    """VALUES as words (see `read_words`)."""
    return array(WORD, values).tobytes()


def read_words(data: bytes | memoryview) -> memoryview:
    """The words DATA holds, read in place: a sequence of ints (bisect and slices work on it)."""
    return memoryview(data).cast(WORD)


def pack_entry(parts: Sequence[bytes]) -> bytes:
    """PARTS as one entry: its byte-order mark and the checksum of its directory, the directory
    (the count of parts, each one's length, each one's checksum), then the parts."""
    directory = words([len(parts), *map(len, parts), *map(zlib.crc32, parts)])
    return words([ORDER, zlib.crc32(directory)]) + directory + b"".join(parts)


class Parts:
    """An entry's parts: `checked` gives a part once its checksum holds, `raw` as it lies (for
    a reader that checks pieces of it alone: `trusted` says whether it must)."""

    __slots__ = ("checks", "data", "remake", "starts")

    def __init__(
        self,
        data: bytes,
        starts: list[int],
        checks: list[int] | None = None,
        remake: Remake | None = None,
    ) -> None:
        self.data = data
        self.starts = starts  # where each part starts in DATA, then where the last ends
        self.checks = checks  # each part's checksum, -1 once it held; None: nothing to check
        self.remake = remake

    @classmethod
    def made(cls, parts: Sequence[bytes]) -> Parts:
        """Parts made by this run: nothing to check."""
        return cls(b"".join(parts), [0, *accumulate(map(len, parts))])

    @classmethod
    def read(cls, entry: bytes | None, remake: Remake) -> Parts | None:
        """The parts of ENTRY (from `pack_entry`); None when there is none, or its directory is
        damaged or says another length. A damaged part is known when it is read: REMAKE makes
        the entry's parts again then."""
        if entry is None or len(entry) < 12:
            return None
        order, check, count = HEAD.unpack_from(entry)
        end = 12 + 8 * count
        if order != ORDER or len(entry) < end or zlib.crc32(entry[8:end]) != check:
            return None
        listed = struct.unpack_from(f"={2 * count}{WORD}", entry, 12)
        starts = list(accumulate(listed[:count], initial=end))
        if starts[-1] != len(entry):
            return None
        return cls(entry, starts, list(listed[count:]), remake)

    def __len__(self) -> int:
        return len(self.starts) - 1

    @property
    def trusted(self) -> bool:
        """Are the parts known intact (made by this run, or made again)?"""
        return self.checks is None

    def raw(self, number: int) -> memoryview:
        """Part NUMBER as it lies, unchecked."""
        return memoryview(self.data)[self.starts[number] : self.starts[number + 1]]

    def checked(self, number: int) -> memoryview:
        """Part NUMBER, its checksum checked the first time (the entry made again if it
        fails)."""
        view = self.raw(number)
        checks = self.checks
        if checks is not None and checks[number] >= 0:
            if zlib.crc32(view) != checks[number]:
                self.damaged()
                return self.raw(number)
            checks[number] = -1
        return view

    def damaged(self) -> None:
        """A part is damaged: the entry is made again, and every later read comes from it."""
        assert self.remake is not None, "parts made by this run are never damaged"
        fresh = Parts.made(self.remake())
        self.data, self.starts, self.checks = fresh.data, fresh.starts, None
