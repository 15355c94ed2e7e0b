"""A server log read line by line: the prefix (journal header, timestamp, rank tags such as
`TP0`, `DP1 TP3`, `PP0 TP0 EP2`) split from the message the program printed. A log is read as
it arrives (`Log`), as often as a reader asks, and nothing of a line is kept once it is handed
on: a log of any length is read in the same memory."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

# "[2025-10-16 09:06:09 DP0 TP3] " or "[2025-10-16 09:06:09] " or "[TP0] "; anywhere on the
# line, since journald and docker put their own header in front.
PREFIX = re.compile(
    r"\[(?P<time>\d{4}-\d\d-\d\d[ T][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?|\d\d:\d\d:\d\d(?:[.,]\d+)?)?"
    r"(?P<tags>(?:\s*[A-Z][A-Z_]*\d+)*)\s*\]\s?"
)
TAG = re.compile(r"([A-Z][A-Z_]*?)_?(\d+)")
JOURNAL = re.compile(r"^(?:\w{3} [ \d]\d [\d:]{8}|\d{4}-\d\d-\d\dT[\d:.+\-]+) \S+ [^\s:]+: ")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A rank the program prints at the start of its own message: "[gpu_id=3] Load weight begin."
RANK_IN_MESSAGE = re.compile(r"^\[(?P<tag>[a-z][a-z_]*)=(?P<n>\d+)\]\s")
CHUNK_CHARS = 1 << 20  # a text is read in pieces of this many characters
MAX_LINE = 1 << 20  # a longer line is read up to here; the rest of it is skipped
ZEROS = str.maketrans("123456789", "000000000")  # a line's shape: its digits all 0
BYTE_ZEROS = bytes.maketrans(b"123456789", b"000000000")


MAX_LAYOUTS = 4096  # shapes of lines remembered with where their parts are


class LogLine(NamedTuple):
    """One line of a log, its prefix taken apart. A tuple: one is made for every line of a
    log of millions, and a tuple is made in a third of a frozen dataclass's time."""

    number: int  # 1-based line of the log
    time: str  # as printed, "" when the line has none
    ranks: tuple[tuple[str, int], ...]  # (("DP", 0), ("TP", 3))
    message: str
    rank: str = ""  # `TP3`, `DP0 TP3`, or "" for a line no rank printed


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the parts of a line are. The prefix is read by the kind of each character (a
    digit, a letter, a bracket), never by which digit: every line of one shape (its digits all
    0) has the same layout."""

    at: int  # where the message starts
    time: tuple[int, int] | None
    tags: tuple[int, int] | None  # the rank tags of the prefix
    own: bool  # the message names its rank itself: "[gpu_id=3] Load weight begin."


class Log:
    """A server log, read as it arrives each time it is read: CHUNKS gives its text in pieces
    (a string's slices, or what the CLI reads of a file), again at each call."""

    def __init__(self, chunks: Callable[[], Iterable[str]]) -> None:
        self.chunks = chunks

    @classmethod
    def of_text(cls, text: str) -> Log:
        return cls(lambda: (text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)))

    def __iter__(self) -> Iterator[LogLine]:
        """Every non-empty line with its prefix taken apart."""
        return (line for line, _ in self.shaped())

    def shaped(self, first: int = 1, last: int | None = None) -> Iterator[tuple[LogLine, str]]:
        """The non-empty lines numbered FIRST to LAST, each with its message's shape (its
        digits all 0: what the lines one logging call prints with other numbers share)."""
        parser = LineParser()
        for number, (raw, zeroed) in enumerate(self.raw_lines(), start=1):
            if number < first:
                continue
            if last is not None and number > last:
                return
            if "\x1b" in raw:
                raw = ANSI.sub("", raw)
                zeroed = zeros(raw)
            line = raw.rstrip()
            if line:
                shape = zeroed[: len(line)]
                parsed, at = parser.parse(number, line, shape)
                yield parsed, shape[at:]

    def raw_lines(self) -> Iterator[tuple[str, str]]:
        """The lines as `str.splitlines` cuts the text (ends kept), each with its digits all
        0; a line longer than MAX_LINE is its first MAX_LINE characters."""
        carry = ""  # the last piece of what was read: a line whose end may come next
        head: str | None = None  # a line over MAX_LINE, cut, while its end is looked for
        for chunk in self.chunks():
            text = carry + chunk
            lines = text.splitlines(keepends=True)
            zeroed = zeros(text).splitlines(keepends=True)
            carry = lines.pop() if lines else ""
            del zeroed[len(lines) :]
            if head is not None and lines:
                lines[0], zeroed[0], head = head, zeros(head), None
            yield from zip(lines, zeroed, strict=True)
            if len(carry) > MAX_LINE:
                head = carry[:MAX_LINE] if head is None else head
                carry = carry[-1:]  # a "\r" whose "\n" may come next
        if head is not None:
            yield head, zeros(head)
        elif carry:
            yield carry, zeros(carry)


def zeros(text: str) -> str:
    """TEXT with its digits all 0. Other than ASCII, through its UTF-8 bytes (in which no
    character but a digit has a digit's byte): translating characters one by one is slow."""
    if text.isascii():
        return text.translate(ZEROS)
    return (
        text.encode("utf-8", "surrogatepass").translate(BYTE_ZEROS).decode("utf-8", "surrogatepass")
    )


def read_log(text: str) -> list[LogLine]:
    """Every non-empty line of TEXT with its prefix taken apart."""
    return list(Log.of_text(text))


class LineParser:
    """Lines taken apart, with the layout of each shape and the ranks of each prefix's tags
    remembered (MAX_LAYOUTS of each at most)."""

    def __init__(self) -> None:
        self.layouts: dict[str, Layout] = {}
        self.tagged: dict[str, tuple[tuple[tuple[str, int], ...], str]] = {}

    def parse(self, number: int, line: str, shape: str) -> tuple[LogLine, int]:
        """LINE (colours taken out, its end stripped, not blank) as a LogLine, and where its
        message starts; SHAPE: LINE with its digits all 0."""
        layout = self.layouts.get(shape)
        if layout is None:
            if len(self.layouts) >= MAX_LAYOUTS:
                self.layouts.clear()
            layout = self.layouts[shape] = layout_of(line)
        message = line[layout.at :]
        ranks, rank = self.ranks(line[layout.tags[0] : layout.tags[1]]) if layout.tags else ((), "")
        if not ranks and layout.own:
            ranks = own_rank(message)
            rank = rank_text(ranks)
        time = line[layout.time[0] : layout.time[1]] if layout.time else ""
        return LogLine(number, time, ranks, message, rank), layout.at

    def ranks(self, tags: str) -> tuple[tuple[tuple[str, int], ...], str]:
        found = self.tagged.get(tags)
        if found is None:
            if len(self.tagged) >= MAX_LAYOUTS:
                self.tagged.clear()
            ranks = tuple((tag, int(n)) for tag, n in TAG.findall(tags))
            found = self.tagged[tags] = (ranks, rank_text(ranks))
        return found


def layout_of(line: str) -> Layout:
    """Where LINE's prefix (a journal or docker header, a bracket with the time and the rank
    tags) ends and its message starts."""
    found = PREFIX.search(line)
    stamped = found is not None and (found["time"] or found["tags"].strip())
    if found and stamped and prefix_only(line[: found.start()]):
        time = found.span("time") if found["time"] else None
        own = RANK_IN_MESSAGE.match(line[found.end() :]) is not None
        return Layout(found.end(), time, found.span("tags"), own)
    header = JOURNAL.match(line)
    at = header.end() if header else 0
    return Layout(at, None, None, RANK_IN_MESSAGE.match(line[at:]) is not None)


def rank_text(ranks: tuple[tuple[str, int], ...]) -> str:
    """`TP3`, `DP0 TP3`, or "" for a line no rank printed."""
    return " ".join(f"{tag}{n}" for tag, n in ranks)


def own_rank(message: str) -> tuple[tuple[str, int], ...]:
    """The rank a message names itself by (`[gpu_id=3] ...`, kept in the message, which its
    logging call prints)."""
    found = RANK_IN_MESSAGE.match(message)
    return ((found["tag"] + "=", int(found["n"])),) if found else ()


def prefix_only(head: str) -> bool:
    """What comes before the bracket is a header (journal, docker), not part of a message."""
    return not head or bool(JOURNAL.match(head)) or head.endswith((": ", "| ", " "))
