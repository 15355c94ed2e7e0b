"""A tar stream read as it arrives, from a host that may be hostile: every header is checked
(only wanted regular files, each once, no absolute paths, no `..`, no links or devices,
sizes that are numbers and under their caps, a bounded number of members) before a byte of
its body is kept, and reading stops at the end-of-archive blocks. Reads ustar, GNU long
names and pax headers, the forms GNU tar, bsdtar and `git archive` write; `tarfile` would
spend ~60 us a member in Python, and takes a negative size for a real one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tracer.errors import TransferFailed, UnsafeArchive
from tracer.sources.snapshot import MAX_FILE_BYTES

MAX_TOTAL_BYTES = 2 << 30
MAX_MEMBER_BYTES = MAX_FILE_BYTES  # a wanted file past this is skipped unread, as locally
MAX_HEADER_BYTES = 1 << 20  # a GNU long name or pax header past this is not a path
BLOCK = 512
ZERO_BLOCK = bytes(BLOCK)  # two of them end the archive
OCTAL = b"01234567"
REGULAR = frozenset(b"0\x007")  # regular and contiguous files, as tarfile.isfile() has them
META = frozenset(b"LKxg")  # GNU long name and link, pax extended and global headers
FOLDER = ord("5")
Sink = Callable[[str, bytes], None]  # path, contents


@dataclass(frozen=True, slots=True)
class Member:
    """A header read and checked, waiting for its body."""

    kind: int
    path: str
    size: int


class TarReader:
    """Feed it the archive's bytes in pieces; it calls SINK(path, data) for each member once
    the member has passed every check, and raises UnsafeArchive (hostile) or TransferFailed
    (damaged) at the first member that does not. A wanted file over MAX_MEMBER_BYTES is
    passed over unread and listed in `skipped`. `ended` says the end-of-archive blocks came:
    the caller stops reading there (what follows is padding, or a host that never stops).
    FOLDERS: directory members are passed over (git archive sends them) instead of refused;
    MAX_TOTAL: the bytes the whole archive may take."""

    def __init__(
        self,
        wanted: set[str],
        label: str,
        sink: Sink,
        *,
        folders: bool = False,
        max_total: int = MAX_TOTAL_BYTES,
    ) -> None:
        self.wanted = wanted
        self.label = label
        self.sink = sink
        self.folders = folders
        self.max_total = max_total
        # Each file comes with at most a long name or pax header, plus a few global ones and
        # the folders above it: more members than that is a host filling our memory.
        self.max_members = 4 * len(wanted) + 256
        self.members = 0
        self.buffer = bytearray()
        self.total = 0
        self.ended = False
        self.zeros = 0  # zero blocks in a row
        self.pending: Member | None = None  # the member whose body is awaited
        self.discard = 0  # bytes of a passed-over member still to come
        self.seen: set[str] = set()
        self.skipped: list[tuple[str, int]] = []  # (path, size) of wanted files over the cap
        self.long_name: str | None = None  # from a GNU `L` member, for the next member
        self.pax: dict[str, str] = {}  # from a pax `x` header, for the next member

    def feed(self, data: bytes) -> None:
        if self.ended:
            return  # the padding after the end-of-archive blocks
        self.total += len(data)
        if self.total > self.max_total:
            raise UnsafeArchive(
                f"{self.label} sent over {self.max_total >> 20} MB", "nothing was written"
            )
        if self.discard:
            dropped = min(self.discard, len(data))
            self.discard -= dropped
            if dropped == len(data):
                return
            data = data[dropped:]
        self.buffer += data
        position = self.blocks()
        del self.buffer[:position]

    def blocks(self) -> int:
        """Read the members the buffer holds whole; the position reading stopped at."""
        position = 0
        end = len(self.buffer)
        with memoryview(self.buffer) as view:  # one copy of each member's bytes, not two
            while not self.ended:
                member = self.pending
                if member is not None:
                    padded = -(-member.size // BLOCK) * BLOCK
                    if end - position < padded:
                        break
                    body = bytes(view[position : position + member.size])
                    position += padded
                    self.pending = None
                    self.take(member, body)
                    continue
                if end - position < BLOCK:
                    break
                header = bytes(view[position : position + BLOCK])
                position += BLOCK
                if header == ZERO_BLOCK:
                    self.zeros += 1
                    self.ended = self.zeros == 2
                    continue
                if self.zeros:
                    raise self.damaged("a lone zero block inside it")
                size = self.header(header)
                if self.pending is None and size:  # passed over: drop its body unread
                    padded = -(-size // BLOCK) * BLOCK
                    dropped = min(padded, end - position)
                    position += dropped
                    self.discard = padded - dropped
        return position

    def finish(self) -> None:
        """The stream ended: a member cut short is damage; any wanted file not sent is too."""
        if self.pending is not None or self.discard or (self.buffer and not self.ended):
            raise self.damaged("it ends inside a member")
        missing = self.wanted - self.seen
        if missing:
            raise TransferFailed(
                f"{self.label} did not send {len(missing)} file(s), e.g. {sorted(missing)[0]} "
                "(changed or removed during the fetch?)",
                "run the command again",
            )

    # -- one member ---------------------------------------------------------------------------

    def header(self, header: bytes) -> int:
        """Check HEADER: its body is awaited (`pending`) or passed over; returns its size."""
        self.members += 1
        if self.members > self.max_members:
            raise self.unsafe(f"over {self.max_members} members for {len(self.wanted)} files")
        stored = number(header[148:156])
        if stored is None or stored != sum(header[:148]) + 8 * 32 + sum(header[156:]):
            raise self.damaged("bad header checksum")
        kind = header[156]
        size = self.size(header[124:136])
        if size > self.max_total:
            raise self.unsafe(f"a member of {size} bytes")
        if kind in META:
            if size > MAX_HEADER_BYTES:
                raise self.unsafe(f"a {size}-byte header")
            self.pending = Member(kind, "", size)
            return size
        name = self.pax.get("path") or self.long_name or header_name(header)
        if "size" in self.pax and self.pax["size"] != str(size):
            raise self.damaged("pax size does not match")
        self.long_name, self.pax = None, {}
        path = name[2:] if name.startswith("./") else name
        if name.startswith("/") or ".." in path.split("/"):
            raise self.unsafe(f"a member that escapes the tree: {name!r}")
        if kind == FOLDER and self.folders:
            return size
        if kind not in REGULAR:
            raise self.unsafe(f"a link or special file: {name!r}")
        if path not in self.wanted:
            raise self.unsafe(f"a file that was not asked for: {name!r}")
        if path in self.seen:
            raise self.unsafe(f"the same file twice: {name!r}")
        self.seen.add(path)
        if size > MAX_MEMBER_BYTES:
            self.skipped.append((path, size))
            return size
        self.pending = Member(kind, path, size)
        return size

    def size(self, field: bytes) -> int:
        """The size FIELD holds: octal digits, or GNU's base-256 for sizes past 8 GiB. The
        header's checksum held, so anything else was written on purpose."""
        if field[0] == 0x80:
            return int.from_bytes(field[1:], "big")
        size = None if field[0] & 0x80 else number(field)
        if size is None:
            raise self.unsafe(f"a member whose size is not a size ({bytes(field)!r})")
        return size

    def take(self, member: Member, body: bytes) -> None:
        """The body of MEMBER arrived whole."""
        if member.kind == ord("L"):
            self.long_name = text(body.split(b"\0", 1)[0])
        elif member.kind == ord("x"):
            records = pax_records(body)
            if records is None:
                raise self.damaged("a malformed pax header")
            self.pax = records
        elif member.kind in REGULAR:
            self.sink(member.path, body)
        # `g` (global pax defaults) and `K` (a long link target) say nothing of our files.

    def unsafe(self, what: str) -> UnsafeArchive:
        return UnsafeArchive(f"{self.label} sent {what}", "nothing was written; check the host")

    def damaged(self, why: str) -> TransferFailed:
        return TransferFailed(f"the archive from {self.label} is damaged ({why})", "run again")


def number(field: bytes) -> int | None:
    """The octal number of a header FIELD (NUL- or space-ended), or None if it holds anything
    else (`int` would take a sign, underscores or spaces inside)."""
    digits = field.split(b"\0", 1)[0].strip(b" ")
    if digits.translate(None, OCTAL):
        return None
    return int(digits, 8) if digits else 0


def header_name(header: bytes) -> str:
    name = header[:100].split(b"\0", 1)[0]
    if header[257:263] == b"ustar\x00":  # POSIX ustar: a prefix field (GNU's is atime there)
        prefix = header[345:500].split(b"\0", 1)[0]
        if prefix:
            name = prefix + b"/" + name
    return text(name)


def pax_records(body: bytes) -> dict[str, str] | None:
    """The `LENGTH key=value\\n` records of a pax extended header; None if malformed."""
    records: dict[str, str] = {}
    position = 0
    while position < len(body) and body[position] != 0:
        space = body.find(b" ", position, position + 21)
        digits = body[position:space] if space > position else b""
        if not digits.isdigit():
            return None
        end = position + int(digits)
        if end <= space + 1 or end > len(body) or body[end - 1] != 0x0A:
            return None
        key, equals, value = body[space + 1 : end - 1].partition(b"=")
        if not equals:
            return None
        records[text(key)] = text(value)
        position = end
    return records


def text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")
