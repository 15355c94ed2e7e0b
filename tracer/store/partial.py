"""An entry's parts (tracer/store/parts.py) read from its file as they are asked: the head, the
directory and the first parts in one read, each later part alone the first time it is asked.

A query reads a few parts of most entries it loads, mostly the same few (a file's callees, its
names' attribute writes): reading whole entries read three times the bytes it used (36 MB for
a first trace), and the kernel's copying of them, into fresh pages, was a tenth of its time.
The file is opened again for a later part, never kept open: a query loads hundreds of entries.
A part that cannot be read again as the directory says (the file gone, or shorter) is a
damaged part: the entry is made again, as for a part whose checksum fails."""

from __future__ import annotations

import os
import struct
import zlib
from itertools import accumulate

from tracer.store.parts import HEAD, ORDER, WORD, Parts, Remake

FIRST_READ = 1 << 14  # bytes read at once with the head: most directories and small entries
WHOLE_TAIL = 1 << 14  # later parts read together when they are this short, in all


class PartialParts(Parts):
    """Parts of the entry file PATH, those past the first read each read when first asked."""

    __slots__ = ("later", "path")

    def __init__(
        self, data: bytes, starts: list[int], checks: list[int], remake: Remake, path: str
    ) -> None:
        super().__init__(data, starts, checks, remake)
        self.path = path
        self.later: dict[int, bytes] = {}  # parts read after the first read, by number

    @classmethod
    def open(cls, path: str, first_parts: int, remake: Remake) -> Parts | None:
        """The parts of the entry file PATH (as `Parts.read` reads an entry), the first
        FIRST_PARTS of them read now; None when there is no such file, or its directory is
        damaged or says another length."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            size = os.fstat(fd).st_size
            data = os.pread(fd, FIRST_READ, 0)
            if len(data) < 12:
                return None
            order, check, count = HEAD.unpack_from(data)
            end = 12 + 8 * count
            if order != ORDER or size < end:
                return None
            if len(data) < end:
                data += os.pread(fd, end - len(data), len(data))
            if len(data) < end or zlib.crc32(data[8:end]) != check:
                return None
            listed = struct.unpack_from(f"={2 * count}{WORD}", data, 12)
            starts = list(accumulate(listed[:count], initial=end))
            if starts[-1] != size:
                return None
            upto = starts[min(first_parts, count)]
            if size - upto <= WHOLE_TAIL:
                upto = size
            if len(data) < upto:  # read again from the start: adding bytes would copy them
                data = os.pread(fd, upto, 0)
            if len(data) < upto:
                return None  # the file was cut meanwhile
        except OSError:
            return None
        finally:
            os.close(fd)
        return cls(data, starts, list(listed[count:]), remake, path)

    def raw(self, number: int) -> memoryview:
        start, end = self.starts[number], self.starts[number + 1]
        if end <= len(self.data):
            return memoryview(self.data)[start:end]
        found = self.later.get(number)
        if found is None:
            found = self.read_later(start, end)
            if found is None:  # not as the directory says: the entry is made again
                self.damaged()
                return self.raw(number)
            self.later[number] = found
        return memoryview(found)

    def read_later(self, start: int, end: int) -> bytes | None:
        """Bytes START to END of the entry's file, read now; None when they cannot be."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            data = os.pread(fd, end - start, start)
        except OSError:
            return None
        finally:
            os.close(fd)
        return data if len(data) == end - start else None

    def damaged(self) -> None:
        super().damaged()
        self.later.clear()
