"""Which files of a tree mention a word, without reading their bytes again: each file's words
(its maximal runs of ASCII letters, digits and `_`: identifiers, and the words of strings and
comments), inverted into the files holding each.

The answers are those of a byte search (`Snapshot.grep`), exactly: an occurrence of a word made
of such characters lies inside one run of them, so the files whose bytes contain it are the files
holding a run that contains it; the runs are searched as one string, each once. A word with
other characters (`dp-size`, `"name"`) is looked for in the files holding all its runs, then in
their bytes; a word with no run of SHORTEST characters (or one with other than ASCII in it) is
not answered here.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

# Runs shorter than this are in most runs of a tree (`s`, `0`): reading every file's bytes
# finds their files sooner than joining the files of every run holding them.
SHORTEST = 3
SEPARATOR = b"\n"  # between the runs in `joined`: no run holds it
RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# Every other byte made a space: a file's runs are then its bytes split at whitespace.
APART = bytes(b if b in RUN_BYTES else 0x20 for b in range(256))


@dataclass(frozen=True, slots=True)
class WordIndex:
    """The runs of a tree's files, joined, and the files holding each (by number)."""

    files: int  # how many files it was made of, in the snapshot's order
    joined: bytes  # every run once, each followed by SEPARATOR
    starts: array  # where run k starts in `joined`
    postings: array  # the numbers of the files holding each run, run after run
    offsets: array  # run k's files are postings[offsets[k]:offsets[k + 1]]

    def holding(self, run: bytes) -> set[int]:
        """The files (by number) holding a run that contains RUN (letters, digits, `_`)."""
        found: set[int] = set()
        joined, starts, postings, offsets = self.joined, self.starts, self.postings, self.offsets
        at = joined.find(run)
        while at >= 0:
            k = bisect_right(starts, at) - 1
            found.update(postings[offsets[k] : offsets[k + 1]])
            at = joined.find(run, starts[k + 1] if k + 1 < len(starts) else len(joined))
        return found

    def candidates(self, word: str) -> set[int] | None:
        """The files (by number) that may hold WORD: exactly those that do when WORD is one
        run; None where the index cannot say (no run of SHORTEST characters or more in WORD,
        or a byte that is no ASCII)."""
        if not word.isascii():
            return None
        runs = [run for run in runs_of(word.encode()) if len(run) >= SHORTEST]
        if not runs:
            return None
        found = self.holding(max(runs, key=len))
        for run in runs:
            if found:
                found &= self.holding(run)
        return found

    def is_exact(self, word: str) -> bool:
        """Are WORD's candidates exactly the files holding it (WORD is one run)?"""
        return word.isascii() and runs_of(word.encode()) == [word.encode()]


def runs_of(data: bytes) -> list[bytes]:
    """DATA's maximal runs of ASCII letters, digits and `_`, in order."""
    return data.translate(APART).split()


def make_index(contents: Iterable[bytes]) -> WordIndex:
    """The word index of the files whose bytes CONTENTS gives, in order."""
    numbers: dict[bytes, int] = {}
    holders: list[list[int]] = []
    files = 0
    for files, data in enumerate(contents, start=1):
        for run in set(runs_of(data)):
            k = numbers.get(run)
            if k is None:
                k = numbers[run] = len(holders)
                holders.append([])
            holders[k].append(files - 1)
    starts, offsets, postings = array("I"), array("I", [0]), array("I")
    at = 0
    for run, k in numbers.items():
        starts.append(at)
        at += len(run) + 1
        postings.extend(holders[k])
        offsets.append(len(postings))
    joined = SEPARATOR.join(numbers) + SEPARATOR if numbers else b""
    return WordIndex(files, joined, starts, postings, offsets)
