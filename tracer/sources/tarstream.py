"""A tar stream read as it arrives: every member checked (only wanted regular files, no
absolute paths, no `..`, no links or devices, sizes capped) before its bytes are handed on.
Reads ustar, GNU long names and pax headers, the forms GNU tar and bsdtar write; `tarfile`
would do the same but spends ~60 us a member in Python."""

from __future__ import annotations

from collections.abc import Callable

from tracer.errors import TransferFailed, UnsafeArchive
from tracer.sources.snapshot import MAX_FILE_BYTES

MAX_TOTAL_BYTES = 2 << 30
MAX_MEMBER_BYTES = MAX_FILE_BYTES * 4
MAX_HEADER_BYTES = 1 << 20  # a GNU long name or pax header past this is not a path
BLOCK = 512
ZERO_BLOCK = bytes(BLOCK)  # the end of the archive
REGULAR = frozenset(b"0\x007")  # regular and contiguous files, as tarfile.isfile() has them
Sink = Callable[[str, bytes], None]  # path, contents


class TarReader:
    """Feed it the archive's bytes in pieces; it calls SINK(path, data) for each member once
    the member has passed every check, and raises UnsafeArchive or TransferFailed (damaged)
    at the first member that does not."""

    def __init__(self, wanted: set[str], label: str, sink: Sink) -> None:
        self.wanted = wanted
        self.label = label
        self.sink = sink
        self.buffer = bytearray()
        self.total = 0
        self.ended = False
        self.seen: set[str] = set()
        self.long_name: str | None = None  # from a GNU `L` member, for the next member
        self.pax: dict[str, str] = {}  # from a pax `x` header, for the next member

    def feed(self, data: bytes) -> None:
        if self.ended:
            return  # the padding after the end-of-archive block
        self.buffer += data
        position = 0
        end = len(self.buffer)
        with memoryview(self.buffer) as view:  # one copy of each member's bytes, not two
            while end - position >= BLOCK:
                header = bytes(view[position : position + BLOCK])
                if header == ZERO_BLOCK:
                    self.ended = True
                    break
                size = self.size(header)
                need = BLOCK + -(-size // BLOCK) * BLOCK
                if end - position < need:
                    break
                body = bytes(view[position + BLOCK : position + BLOCK + size])
                position += need
                self.member(header, body)
        del self.buffer[:position]

    def finish(self) -> None:
        """The stream ended: a member cut short is damage; any wanted file not sent is too."""
        if self.buffer and not self.ended:
            raise self.damaged("it ends inside a member")
        missing = self.wanted - self.seen
        if missing:
            raise TransferFailed(
                f"{self.label} did not send {len(missing)} file(s), e.g. {sorted(missing)[0]} "
                "(changed or removed during the fetch?)",
                "run the command again",
            )

    # -- one member ---------------------------------------------------------------------------

    def size(self, header: bytes) -> int:
        """The member's size from HEADER, once its checksum is verified; capped."""
        stored = header[148:156].split(b"\0", 1)[0].strip()
        computed = sum(header[:148]) + 8 * 32 + sum(header[156:])
        try:
            valid = int(stored or b"x", 8) == computed
        except ValueError:
            valid = False
        if not valid:
            raise self.damaged("bad header checksum")
        field = header[124:136]
        if field[0] & 0x80:  # base-256, for sizes past 8 GiB
            size = int.from_bytes(field[1:], "big")
        else:
            try:
                size = int(field.split(b"\0", 1)[0].strip() or b"0", 8)
            except ValueError:
                raise self.damaged("bad size field") from None
        kind = header[156:157]
        limit = MAX_HEADER_BYTES if kind in (b"L", b"K", b"x", b"g") else MAX_MEMBER_BYTES
        if size > limit:
            raise UnsafeArchive(f"{self.label} sent an oversized file", "nothing was written")
        return size

    def member(self, header: bytes, body: bytes) -> None:
        kind = header[156:157]
        if kind == b"L":
            self.long_name = text(body.split(b"\0", 1)[0])
            return
        if kind == b"x":
            self.pax = pax_records(body)
            return
        if kind in (b"g", b"K"):  # global pax defaults, a long link target: no file of ours
            return
        name = self.pax.get("path") or self.long_name or header_name(header)
        if "size" in self.pax and self.pax["size"] != str(len(body)):
            raise self.damaged("pax size does not match")
        self.long_name, self.pax = None, {}
        path = name[2:] if name.startswith("./") else name
        if name.startswith("/") or ".." in path.split("/"):
            raise self.unsafe(f"a member that escapes the tree: {name!r}")
        if header[156] not in REGULAR:
            raise self.unsafe(f"a link or special file: {name!r}")
        if path not in self.wanted:
            raise self.unsafe(f"a file that was not asked for: {name!r}")
        self.total += len(body)
        if self.total > MAX_TOTAL_BYTES:
            raise UnsafeArchive(f"{self.label} sent an oversized file", "nothing was written")
        self.seen.add(path)
        self.sink(path, body)

    def unsafe(self, what: str) -> UnsafeArchive:
        return UnsafeArchive(f"{self.label} sent {what}", "nothing was written; check the host")

    def damaged(self, why: str) -> TransferFailed:
        return TransferFailed(f"the archive from {self.label} is damaged ({why})", "run again")


def header_name(header: bytes) -> str:
    name = header[:100].split(b"\0", 1)[0]
    if header[257:263] == b"ustar\x00":  # POSIX ustar: a prefix field (GNU's is atime there)
        prefix = header[345:500].split(b"\0", 1)[0]
        if prefix:
            name = prefix + b"/" + name
    return text(name)


def pax_records(body: bytes) -> dict[str, str]:
    """The `LENGTH key=value\\n` records of a pax extended header."""
    records: dict[str, str] = {}
    position = 0
    while position < len(body) and body[position] != 0:
        space = body.find(b" ", position)
        length = int(body[position:space]) if space > position else 0
        if length <= 0:
            raise TransferFailed("a pax header is damaged", "run again")
        key, _, value = body[space + 1 : position + length - 1].partition(b"=")
        records[text(key)] = text(value)
        position += length
    return records


def text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")
