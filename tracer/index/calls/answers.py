"""Answers remembered with what they read, so that only those that read something since
changed are asked again.

The value follower (tracer/index/calls/objects.py) answers questions that ask others in
turn. One input may change while the call graph is built: the calls found to run a function
(its *sites*), which are what its parameters hold. An answer *reads* the functions whose
parameters it or any question under it asked (a remembered answer met again counts as asked
again), and when: the earliest time among them. When the sites of some functions grow
(`grew`), the answers that read one of them before it grew are dropped (`forget`) and every
other is kept: asked again, it would be found the same way from the same inputs.

A question met again while it is being answered (recursion) is given what it holds so far
(nothing at first); the first question of the cycle is asked again, with the answers that took
the smaller value dropped, until it and every question of the cycle met again hold what they
were given: each holds the cycle's least fixed point, so no answer depends on which question
of a cycle was asked first. A question asked deeper than `bound` questions is answered with
nothing there. The answers under a question met again are taken to read what it reads in
the end (for the depth bound: what the outermost question reads), so they are dropped with
it. An answer cut short by the
depth bound (or built on one) is remembered with how deep it was asked: asked again less
deep, it is found again with more room, so what one statement finds does not depend on how
deep another first asked it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

Key = tuple[Hashable, ...]
NOTHING: frozenset = frozenset()


class Reads:
    """The functions whose parameters an answer read: those it read itself, and the Reads of
    the answers it took (shared, not copied: an answer reads what the few under it read, and
    copies of those unions were most of the memory of a large tree's call graph)."""

    __slots__ = ("functions", "parts")

    def __init__(self, functions: frozenset[str], parts: tuple[Reads, ...]) -> None:
        self.functions = functions
        self.parts = parts


class Question:
    """A question being answered: the functions whose parameters it read so far, and the
    questions met again under it that are not answered yet (each None while empty: most
    questions read nothing and meet nothing)."""

    __slots__ = ("cut", "depth", "key", "open", "reads", "since", "unsettled")

    def __init__(self, key: Key, reads: set[str | Reads] | None, now: int, depth: int) -> None:
        self.key = key
        self.reads = reads
        self.since = now  # when what it read was found, the earliest
        self.open: set[Key] | None = None
        self.depth = depth  # how deep it was asked
        self.cut = False  # a question under it was past the depth bound
        self.unsettled = False  # a question of its cycle found more than it was given

    def read(self, part: Reads, since: int) -> None:
        if self.reads is None:
            self.reads = {part}
        else:
            self.reads.add(part)
        if since < self.since:
            self.since = since

    def met(self, keys: Iterable[Key]) -> None:
        if self.open is None:
            self.open = set(keys)
        else:
            self.open.update(keys)


class Answers:
    """Answers by question, each with the functions whose parameters it read."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.found: dict[Key, frozenset] = {}
        # The answers that read something: what, and when they were found.
        self.reads: dict[Key, tuple[Reads, int]] = {}
        self.clock = 0  # how many times the sites of a function grew
        self.grown: dict[str, int] = {}  # function -> when its sites last grew
        self.forgotten = 0  # when answers were last forgotten
        self.asking: list[Question] = []  # the questions being answered, outermost first
        self.busy: dict[Key, Question] = {}  # the questions being answered, by key
        self.uncounted = 0  # questions being answered that do not count towards the bound
        self.waiting: dict[Key, list[Key]] = {}  # open question -> the answers that met it
        self.shared: dict[frozenset, frozenset] = {NOTHING: NOTHING}  # one copy of each
        # Answers cut short by the depth bound -> how deep they were asked: one asked less
        # deep is answered again, with more room.
        self.cut: dict[Key, int] = {}
        # A question met again while it is being answered: what it holds so far (nothing at
        # first), and the questions met so since their answer was last found.
        self.provisional: dict[Key, frozenset] = {}
        self.again: set[Key] = set()
        # Answers that met a question still open -> those questions: taken, they meet them.
        self.pending: dict[Key, set[Key]] = {}

    def ask(
        self,
        key: Key,
        answer: Callable[[], Iterable[Hashable]],
        reads: str | None = None,
        bounded: bool = True,
        counted: bool = True,
    ) -> frozenset:
        """What ANSWER gives for KEY, remembered; READS is a function whose parameters the
        answer reads itself; an unBOUNDED question is answered past the depth bound; an
        unCOUNTED one (a question about a whole statement, asked first) does not count
        towards the depth of those under it."""
        found = self.found.get(key)
        asking = self.asking
        depth = len(asking) - self.uncounted
        if found is not None and key in self.cut and depth < self.cut[key]:
            found = None  # cut short where it was asked deeper: asked again with more room
        if found is not None:
            if key in self.cut and asking:
                asking[-1].cut = True
            if asking:
                read = self.reads.get(key)
                if read is not None:
                    asking[-1].read(*read)
                pending = self.pending.get(key)
                if pending is not None:  # it took what an open question holds so far
                    asking[-1].met(pending)
            return found
        busy = self.busy
        if key in busy:  # met again while it is being answered: what it holds so far
            asking[-1].met((key,))
            self.again.add(key)
            return self.provisional.get(key, NOTHING)
        if bounded and depth > self.bound:
            asking[-1].met((asking[0].key,))
            asking[-1].cut = True
            return NOTHING
        question = Question(key, {reads} if reads is not None else None, self.clock, depth)
        asking.append(question)
        busy[key] = question
        if not counted:
            self.uncounted += 1
        try:
            found = self.until_settled(question, answer)
        finally:
            asking.pop()
            del busy[key]
            if not counted:
                self.uncounted -= 1
        self.keep(question, found)
        return found

    def until_settled(
        self, question: Question, answer: Callable[[], Iterable[Hashable]]
    ) -> frozenset:
        """ANSWER, asked again while a cycle through QUESTION finds more than its questions
        were given when met again (the first of the cycle asks the whole cycle again; one
        under it leaves that to it): so each question of a cycle holds the cycle's least
        fixed point, whichever of them was asked first."""
        key = question.key
        while True:
            found = frozenset(answer())
            if key not in self.again and not question.unsettled:
                return found
            self.again.discard(key)
            before = self.provisional.get(key, NOTHING)
            grew = not found <= before
            if grew:
                found |= before
                self.provisional[key] = found
            outer = question.open is not None and any(k != key for k in question.open)
            if outer:  # inside a larger cycle, still open: its first question asks again
                if grew:
                    for other in question.open:
                        if other != key:
                            self.busy[other].unsettled = True
                return found
            if not grew and not question.unsettled:
                return found
            question.unsettled = False
            question.open = None
            # What took the smaller answers is asked again with these.
            self.drop(self.waiting.pop(key, ()))

    def drop(self, keys: Iterable[Key]) -> None:
        """Forget the answers of KEYS, found while a question they met was still open."""
        for key in keys:
            self.found.pop(key, None)
            self.reads.pop(key, None)
            self.cut.pop(key, None)
            self.pending.pop(key, None)

    def keep(self, question: Question, found: frozenset) -> None:
        key, open_ = question.key, question.open
        if open_ is not None:
            open_.discard(key)
        if not open_:
            self.provisional.pop(key, None)
            self.again.discard(key)
        if len(found) <= 1:  # most answers are nothing or one value: kept once
            found = self.shared.setdefault(found, found)
        self.found[key] = found
        if question.cut:
            self.cut[key] = question.depth
        elif self.cut:
            self.cut.pop(key, None)
        read = None
        since = question.since
        if question.reads:
            read = reads_of(question.reads)
            self.reads[key] = (read, since)
        # The answers that met this question while it was being answered took nothing for
        # it: they read what it read, and what it is still waiting for.
        waiting = self.waiting.pop(key, None)
        if waiting is not None:
            for met in waiting:
                if met not in self.found:
                    continue  # dropped since
                if read is not None:
                    self.reads[met] = (read, min(since, self.reads.get(met, (read, since))[1]))
                for other in open_ or ():
                    self.waiting.setdefault(other, []).append(met)
                if not open_:
                    self.provisional.pop(met, None)
                pending = self.pending.get(met)
                if pending is not None:
                    pending.discard(key)
                    pending.update(open_ or ())
                    if not pending:
                        del self.pending[met]
        if open_:
            for other in open_:
                self.waiting.setdefault(other, []).append(key)
            self.pending[key] = set(open_)
        else:
            self.pending.pop(key, None)
        if self.asking:
            outer = self.asking[-1]
            if question.cut:
                outer.cut = True
            if read is not None:
                outer.read(read, since)
            if open_:
                outer.met(open_)

    def grew(self, function: str) -> None:
        """FUNCTION is given a new call: what its parameters hold may grow."""
        self.clock += 1
        self.grown[function] = self.clock

    def forget(self) -> set[Key]:
        """Drop the answers that read the parameters of a function before its sites grew;
        their questions."""
        since_last, self.forgotten = self.forgotten, self.clock
        if all(when <= since_last for when in self.grown.values()):
            return set()
        latest = Latest(self.grown)
        # Stale: what it read grew after it was found, and since the last time (else it was
        # dropped then).
        stale = [
            key
            for key, (read, when) in self.reads.items()
            if latest.of(read) > max(when, since_last)
        ]
        for key in stale:
            del self.found[key]
            del self.reads[key]
        return set(stale)


def reads_of(read: set[str | Reads]) -> Reads:
    """The Reads of a question that read READ (itself one of them when it is all)."""
    parts = tuple(r for r in read if isinstance(r, Reads))
    functions = frozenset(r for r in read if isinstance(r, str))
    if not functions and len(parts) == 1:
        return parts[0]
    return Reads(functions, parts)


class Latest:
    """When the sites of a function some Reads holds last grew (0 never), each Reads
    computed once."""

    def __init__(self, grown: dict[str, int]) -> None:
        self.grown = grown
        self.known: dict[int, int] = {}  # id of a Reads -> its latest

    def of(self, read: Reads) -> int:
        known, grown = self.known, self.grown
        if id(read) in known:
            return known[id(read)]
        stack = [read]  # parts are made before what holds them: no cycle
        while stack:
            top = stack[-1]
            if id(top) in known:
                stack.pop()
                continue
            todo = [p for p in top.parts if id(p) not in known]
            if todo:
                stack += todo
                continue
            stack.pop()
            latest = max((grown.get(f, 0) for f in top.functions), default=0)
            known[id(top)] = max([latest, *(known[id(p)] for p in top.parts)])
        return known[id(read)]
