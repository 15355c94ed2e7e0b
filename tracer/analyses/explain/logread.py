"""A server log read line by line: the prefix (journal header, timestamp, rank tags such as
`TP0`, `DP1 TP3`, `PP0 TP0 EP2`) split from the message the program printed."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class LogLine:
    number: int  # 1-based line of the log
    time: str  # as printed, "" when the line has none
    ranks: tuple[tuple[str, int], ...]  # (("DP", 0), ("TP", 3))
    message: str

    @property
    def rank(self) -> str:
        """`TP3`, `DP0 TP3`, or "" for a line no rank printed."""
        return " ".join(f"{tag}{n}" for tag, n in self.ranks)


def read_log(text: str) -> list[LogLine]:
    """Every non-empty line of TEXT with its prefix taken apart."""
    lines: list[LogLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = ANSI.sub("", raw).rstrip()
        if not line.strip():
            continue
        found = PREFIX.search(line)
        stamped = found is not None and (found["time"] or found["tags"].strip())
        if found and stamped and prefix_only(line[: found.start()]):
            ranks = tuple((tag, int(n)) for tag, n in TAG.findall(found["tags"]))
            message = line[found.end() :]
            lines.append(LogLine(number, found["time"] or "", ranks or own_rank(message), message))
            continue
        header = JOURNAL.match(line)
        message = line[header.end() :] if header else line
        lines.append(LogLine(number, "", own_rank(message), message))
    return lines


def own_rank(message: str) -> tuple[tuple[str, int], ...]:
    """The rank a message names itself by (`[gpu_id=3] ...`, kept in the message, which its
    logging call prints)."""
    found = RANK_IN_MESSAGE.match(message)
    return ((found["tag"] + "=", int(found["n"])),) if found else ()


def prefix_only(head: str) -> bool:
    """What comes before the bracket is a header (journal, docker), not part of a message."""
    return not head or bool(JOURNAL.match(head)) or head.endswith((": ", "| ", " "))
