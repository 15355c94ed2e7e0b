"""Cache entries sealed with a checksum: a damaged entry (a flipped bit, a torn copy) is known
when it is read, and computed again, never unpickled. Unpickling damaged bytes raises nearly
any exception (OverflowError, MemoryError, TypeError, UnicodeDecodeError...) or, worse, gives
wrong facts; and parts of some entries (names' sets, rows' units) are unpickled lazily, long
after the read. The check costs a CRC-32, about 2.5 GB/s here: far less than the unpickling."""

from __future__ import annotations

import pickle
import zlib
from typing import Any

CHECKSUM = 4  # bytes of CRC-32 ahead of the data


def seal(data: bytes) -> bytes:
    """DATA with its checksum ahead of it, as stored."""
    return zlib.crc32(data).to_bytes(CHECKSUM, "big") + data


def unseal(entry: bytes | None) -> memoryview | None:
    """The data ENTRY seals; None when there is none, or it is damaged."""
    if entry is None or len(entry) < CHECKSUM:
        return None
    data = memoryview(entry)[CHECKSUM:]
    if zlib.crc32(data) != int.from_bytes(entry[:CHECKSUM], "big"):
        return None
    return data


def pickle_sealed(value: Any) -> bytes:
    """VALUE pickled and sealed."""
    return seal(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def unpickle_sealed(entry: bytes | None) -> Any | None:
    """The value ENTRY holds, as `pickle_sealed` made it; None when there is none, or it is
    damaged. Entries are kept per version of what made them: intact bytes are this code's."""
    data = unseal(entry)
    return None if data is None else pickle.loads(data)
