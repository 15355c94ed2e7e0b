"""Answers remembered with what they read, so that only those that read something since
changed are asked again.

The value follower (tracer/analyses/calls/objects.py) answers questions that ask others in
turn. One input may change while the call graph is built: the calls found to run a function
(its *sites*), which are what its parameters hold. An answer *reads* the functions whose
parameters it or any question under it asked (a remembered answer met again counts as asked
again). When the sites of some functions grow, the answers that read one of them are dropped
and every other is kept: asked again, it would be found the same way from the same inputs.

A question met again while it is being answered (recursion), or asked deeper than `bound`
questions, is answered with nothing there; the answers under it that took that nothing are
taken to read what the question met again reads in the end (with every question, for the
depth bound: the outermost one's), so they are dropped with it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

Key = tuple[Hashable, ...]
NOTHING: frozenset = frozenset()


class Question:
    """A question being answered: what it read so far, and the questions met again under it
    that are not answered yet."""

    __slots__ = ("key", "open", "reads")

    def __init__(self, key: Key, reads: set[str]) -> None:
        self.key = key
        self.reads = reads
        self.open: set[Key] = set()


class Answers:
    """Answers by question, each with the functions whose parameters it read."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.found: dict[Key, frozenset] = {}
        self.reads: dict[Key, frozenset[str]] = {}  # only the answers that read something
        self.asking: list[Question] = []  # the questions being answered, outermost first
        self.busy: set[Key] = set()
        self.waiting: dict[Key, list[Key]] = {}  # open question -> the answers that met it
        self.shared: dict[frozenset, frozenset] = {NOTHING: NOTHING}  # one copy of each

    def ask(
        self,
        key: Key,
        answer: Callable[[], Iterable[Hashable]],
        reads: str | None = None,
        bounded: bool = True,
    ) -> frozenset:
        """What ANSWER gives for KEY, remembered; READS is a function whose parameters the
        answer reads itself; an unBOUNDED question is answered past the depth bound."""
        found = self.found.get(key)
        asking = self.asking
        if found is not None:
            if asking:
                read = self.reads.get(key)
                if read is not None:
                    asking[-1].reads |= read
            return found
        if key in self.busy or (bounded and len(asking) > self.bound):
            if asking:
                asking[-1].open.add(key if key in self.busy else asking[0].key)
            return NOTHING
        question = Question(key, {reads} if reads is not None else set())
        asking.append(question)
        self.busy.add(key)
        try:
            found = frozenset(answer())
        finally:
            asking.pop()
            self.busy.discard(key)
        self.keep(question, found)
        return found

    def keep(self, question: Question, found: frozenset) -> None:
        key, open_ = question.key, question.open
        open_.discard(key)
        if len(found) <= 1:  # most answers are nothing or one value: kept once
            found = self.shared.setdefault(found, found)
        self.found[key] = found
        read = frozenset(question.reads)
        if read:
            read = self.shared.setdefault(read, read)
            self.reads[key] = read
        # The answers that met this question while it was being answered took nothing for
        # it: they read what it read, and what it is still waiting for.
        for met in self.waiting.pop(key, ()):
            if read:
                self.reads[met] = read
            for other in open_:
                self.waiting.setdefault(other, []).append(met)
        for other in open_:
            self.waiting.setdefault(other, []).append(key)
        if self.asking:
            outer = self.asking[-1]
            if read:
                outer.reads |= read
            outer.open |= open_

    def forget(self, changed: set[str]) -> None:
        """Drop the answers that read the parameters of a function in CHANGED."""
        if not changed:
            return
        stale = [key for key, read in self.reads.items() if not read.isdisjoint(changed)]
        for key in stale:
            del self.found[key]
            del self.reads[key]
