"""Answers remembered with what they read, so that only those that read something since
changed are asked again; each the least fixed point of the questions, whatever was asked first.

The value follower (tracer/index/calls/objects.py) answers questions that ask others in
turn. One input may change while the call graph is built: the calls found to run a function
(its *sites*), which are what its parameters hold. An answer *reads* the functions whose
parameters it or any question under it asked (a remembered answer met again counts as asked
again), and when: the earliest time among them. When the sites of some functions grow
(`grew`), the answers that read one of them before it grew are dropped (`forget`) and every
other is kept: asked again, it would be found the same way from the same inputs.

Recursion. A question met again while it is being answered is given what it holds so far
(nothing at first). The questions that met one below them on the stack of questions, with
those under them, form a *cycle* (a strongly connected part of the questions, found as
Tarjan's algorithm finds them: each question is numbered in the order asked and keeps the
lowest number of a question of its cycle it or a question under it met). A cycle is answered
as a whole by its first question: asked again, every other question of it answered again
once where it is met, until none of those met while being answered found more than it was
given; then all are remembered at once, each reading what the whole cycle read. So each
holds the cycle's least fixed point, whichever of its questions was asked first.

Choices. Some answers choose by what another holds: what is stored in an attribute, else
(nothing known stored) what its annotation names. Made on an answer not yet settled (a
question of a cycle still open, or one put off), such a choice could take the annotation for
an attribute whose stores hold something known only once the cycle settles, and rounds only
add. So a choice made on an answer not settled that holds nothing known so far is taken as if
it held something known (`holds`: the way that adds nothing), and remembered as an
*assumption* with the question that made it, its cycle and the answers that take it. It is
judged when KEY's answer is final (its cycle settled, and what it took put off given what it
was): one its answer belies (KEY holds nothing known after all) marks KEY (`vague`, which
only grows), and the cycle is answered again or the answers made on it dropped: the choice
then takes the other way, which adds to what was found. So answers only grow, and each is
the one the choices give on settled answers, whichever question was asked first.

The depth bound limits how deep questions are nested, not what they find. A question asked
deeper than `bound` questions is *put off*: given what it was last found to hold (nothing at
first), and asked after the outermost question, as an outermost question itself. If it then
holds more than it was given, the answers that took it are dropped and asked again when
needed (the outermost question at once); a dropped answer keeps what it held as the least it
will hold. So every answer is the one found with no bound at all, whatever was asked before
it and however deep it was asked: the bound only keeps the stack of questions short.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

Key = tuple[Hashable, ...]
Answer = Callable[[], Iterable[Hashable]]
NOTHING: frozenset = frozenset()
T = TypeVar("T")


class Reads:
    """The functions whose parameters an answer read: those it read itself, and the Reads of
    the answers it took (shared, not copied: an answer reads what the few under it read, and
    copies of those unions were most of the memory of a large tree's call graph)."""

    __slots__ = ("functions", "parts")

    def __init__(self, functions: frozenset[str], parts: tuple[Reads, ...]) -> None:
        self.functions = functions
        self.parts = parts


class Question:
    """A question being answered: its number (in the order questions were asked), the lowest
    number of a question of its cycle it or a question under it met (its own while it met
    none asked before it), what it read and the questions put off it took (None while none:
    most read and take nothing), and the questions of its cycle answered under it."""

    __slots__ = (
        "again",
        "assumed",
        "changed",
        "key",
        "low",
        "members",
        "number",
        "pending",
        "reads",
        "since",
        "stale",
    )

    def __init__(self, key: Key, number: int, reads: str | None, now: int) -> None:
        self.key = key
        self.number = number  # in the order questions were asked
        self.low = number
        self.reads: set[str | Reads] | None = {reads} if reads is not None else None
        self.since = now  # when what it read was found, the earliest
        self.pending: set[Key] | None = None
        self.members: list[Key] | None = None
        self.again = False  # met while being answered: given what it held so far
        self.changed = False  # a question of its cycle found more than it was given
        self.stale: list[Key] | None = None  # its cycle's questions of earlier rounds
        self.assumed: set[Key] | None = None  # chose as if these held something known

    def read(self, part: Reads | str, since: int) -> None:
        if self.reads is None:
            self.reads = {part}
        else:
            self.reads.add(part)
        if since < self.since:
            self.since = since

    def took(self, keys: Iterable[Key]) -> None:
        if self.pending is None:
            self.pending = set(keys)
        else:
            self.pending.update(keys)

    def assume(self, keys: Iterable[Key]) -> None:
        if self.assumed is None:
            self.assumed = set(keys)
        else:
            self.assumed.update(keys)

    def meets(self, number: int) -> None:
        if number < self.low:
            self.low = number

    def absorb(self, inner: Question, held: frozenset, before: frozenset) -> None:
        """INNER, answered under this question, is part of its cycle."""
        self.meets(inner.low)
        self.changed |= inner.changed or (inner.again and held != before)
        members = self.members if self.members is not None else []
        members += inner.members or ()
        members.append(inner.key)
        self.members = members
        if inner.reads:
            for part in inner.reads:
                self.read(part, inner.since)
        if inner.pending:
            self.took(inner.pending)
        if inner.assumed:
            self.assume(inner.assumed)


class Answers:
    """Answers by question, each with the functions whose parameters it read."""

    def __init__(self, bound: int, unknown: frozenset = NOTHING) -> None:
        self.bound = bound
        self.unknown = unknown  # what does not count as something known (`holds`)
        self.vague: set[Key] = set()  # settled holding nothing known after an assumption
        # Found answers with assumptions not judged yet (on answers not final: see Choices).
        self.assumptions: dict[Key, set[Key]] = {}
        self.judging: dict[Key, set[Key]] = {}  # a key -> the answers judged once it is final
        self.found: dict[Key, frozenset] = {}
        # The answers that read something: what, and when they were found.
        self.reads: dict[Key, tuple[Reads, int]] = {}
        self.clock = 0  # how many times the sites of a function grew
        self.grown: dict[str, int] = {}  # function -> when its sites last grew
        self.forgotten = 0  # when answers were last forgotten
        self.asking: list[Question] = []  # the questions being answered, outermost first
        self.busy: dict[Key, Question] = {}  # the questions being answered, by key
        self.uncounted = 0  # questions being answered that do not count towards the bound
        self.shared: dict[frozenset, frozenset] = {NOTHING: NOTHING}  # one copy of each
        # What a question of a cycle not yet settled holds so far (also those being
        # answered); those answered in their cycle's current round, with their numbers (any
        # other is answered again where it is met).
        self.provisional: dict[Key, frozenset] = {}
        self.current: dict[Key, int] = {}
        self.numbers = 0  # questions asked so far
        # Questions put off (past the depth bound): how to ask them, what they are given.
        self.put_off: dict[Key, tuple[Answer, str | None, bool]] = {}
        self.given: dict[Key, frozenset] = {}
        self.pending: dict[Key, set[Key]] = {}  # answer -> the questions put off it took
        self.waiting: dict[Key, dict[Key, None]] = {}  # put off -> the answers that took it
        self.floor: dict[Key, frozenset] = {}  # a dropped answer -> what it held
        self.settling = False

    def ask(
        self,
        key: Key,
        answer: Answer,
        reads: str | None = None,
        bounded: bool = True,
        counted: bool = True,
    ) -> frozenset:
        """What ANSWER gives for KEY, remembered; READS is a function whose parameters the
        answer reads itself; an unBOUNDED question is answered past the depth bound; an
        unCOUNTED one (a question about a whole statement, asked first) does not count
        towards the depth of those under it."""
        asking = self.asking
        found = self.found.get(key)
        if found is not None:
            if asking:
                self.take(asking[-1], key)
            return found
        question = self.busy.get(key)
        if question is not None:  # met again while it is being answered: what it holds so far
            question.again = True
            asking[-1].meets(question.number)
            return self.provisional.get(key, NOTHING)
        number = self.current.get(key)
        if number is not None:  # answered in this round of a cycle still open
            asking[-1].meets(number)
            return self.provisional[key]
        if asking and (
            key in self.put_off or (bounded and len(asking) - self.uncounted > self.bound)
        ):
            self.put_off.setdefault(key, (answer, reads, counted))
            given = self.given.get(key)
            if given is None:
                given = self.floor.get(key) or self.provisional.get(key, NOTHING)
                self.given[key] = given
            asking[-1].took((key,))
            return given
        if asking:
            return self.answer(key, answer, reads, counted)
        found = self.outermost(key, answer, reads, counted)
        if self.settling:
            return found
        self.settle()
        while key not in self.found:  # it took a question put off that held more
            self.outermost(key, answer, reads, counted)
            self.settle()
        return self.found[key]

    def outermost(self, key: Key, answer: Answer, reads: str | None, counted: bool) -> frozenset:
        """Answer KEY with no question being answered; if it was put off, starting from what
        the answers that took it were given."""
        if self.put_off.pop(key, None) is not None:
            self.provisional[key] = self.given[key]
        return self.answer(key, answer, reads, counted)

    def answer(self, key: Key, answer: Answer, reads: str | None, counted: bool) -> frozenset:
        """Answer KEY: alone, as a question of a cycle through one below it on the stack
        (held so far, open), or as the first question of a cycle, asked again until settled."""
        asking = self.asking
        self.numbers += 1
        question = Question(key, self.numbers, reads, self.clock)
        asking.append(question)
        self.busy[key] = question
        if not counted:
            self.uncounted += 1
        try:
            while True:
                before = self.provisional.get(key) or self.floor.get(key, NOTHING)
                held = frozenset(answer())
                if before:
                    held |= before
                if question.low < question.number:  # part of a cycle asked before: open
                    self.provisional[key] = held
                    self.current[key] = question.number
                    asking[-2].absorb(question, held, before)
                    return held
                if not (question.changed or (question.again and held != before)):
                    belied, unjudged = self.judge(question.assumed, question, held)
                    question.assumed = unjudged or None
                    if not belied:
                        break
                    # Choices made as if these held something known: made again.
                    self.vague |= belied
                # Its cycle found more than was given: each of it answered again.
                self.provisional[key] = held
                if question.members:
                    for member in question.members:
                        del self.current[member]
                    question.stale = (question.stale or []) + question.members
                self.drop(self.waiting.pop(key, ()))  # what took less for it while put off
                question.low, question.members = question.number, None
                question.again = question.changed = False
        finally:
            asking.pop()
            del self.busy[key]
            if not counted:
                self.uncounted -= 1
        self.settled(question, held)
        return held

    def holds(self, key: Key, held: frozenset) -> frozenset | None:
        """What to take of HELD, KEY's answer so far, where it holds something known (a
        value not `unknown`): all of it; None where it holds nothing known (take the other
        way). Asked to choose between ways. Where KEY is not settled and holds nothing known
        so far, nothing, as if it held something known, remembered as an assumption; once
        KEY is `vague`, None, whatever it holds (see Choices above)."""
        if key in self.vague:
            return None
        if not held <= self.unknown:
            return held
        if not self.asking:
            return None
        if key in self.found and key not in self.pending:
            return None  # settled: what it holds is final
        self.asking[-1].assume((key,))
        return NOTHING

    def judge(
        self, assumed: set[Key] | None, question: Question | None = None, held: frozenset = NOTHING
    ) -> tuple[set[Key], set[Key]]:
        """The ASSUMED keys (of QUESTION's cycle, just settled holding HELD, if given) that
        hold nothing known after all (belied), and those whose answers are not final yet (a
        question put off, or one that took one: judged when they are)."""
        belied: set[Key] = set()
        unjudged: set[Key] = set()
        if not assumed:
            return belied, unjudged
        open_cycle = question is not None and bool(
            (question.pending or set()) - {question.key} - set(question.members or ())
        )
        for key in assumed:
            if key in self.vague:
                belied.add(key)  # marked since: the choice is made the other way
                continue
            if question is not None and key == question.key:
                now, final = held, not open_cycle
            elif question is not None and key in self.current:
                now, final = self.provisional[key], not open_cycle
            elif key in self.found:
                now, final = self.found[key], key not in self.pending
            else:
                now, final = NOTHING, False
            if not final:
                unjudged.add(key)
            elif now <= self.unknown:
                belied.add(key)
        return belied, unjudged

    def settled(self, question: Question, held: frozenset) -> None:
        """Remember QUESTION's answer HELD, and those of its cycle's questions, each reading
        what the whole cycle read and taking what it took."""
        key, since, pending = question.key, question.since, question.pending
        if pending:  # took itself while put off: held the same, as a cycle
            pending.discard(key)
            pending.difference_update(question.members or ())
        read = reads_of(question.reads) if question.reads else None
        found, provisional = self.found, self.provisional
        assumed = question.assumed
        for member in question.members or ():
            self.keep(member, provisional.pop(member), read, since, pending, assumed)
            del self.current[member]
        self.keep(key, held, read, since, pending, assumed)
        provisional.pop(key, None)
        for member in question.stale or ():  # of an earlier round, not met in the last
            if member not in found and member not in self.current:
                provisional.pop(member, None)
        final = [] if pending else [*(question.members or ()), key]
        given = self.given.pop(key, None)
        if given is not None:  # put off: what took it took GIVEN
            takers = self.waiting.pop(key, ())
            if held != given:
                self.drop(takers)
            else:  # they took what it holds, and wait for what it waits for
                for taker in takers:
                    waits = self.pending.get(taker)
                    if waits is None:
                        continue  # dropped since
                    waits.discard(key)
                    if assumed:  # and what it was made on
                        self.assume_until(taker, self.assumptions.get(taker, set()) | assumed)
                    if pending:
                        waits.update(pending)
                        for other in pending:
                            self.waiting.setdefault(other, {})[taker] = None
                    elif not waits:
                        del self.pending[taker]
                        final.append(taker)
        self.judge_final(final)  # after the takers: one may be what it assumed on
        if self.asking:
            outer = self.asking[-1]
            if read is not None:
                outer.read(read, since)
            if pending:
                outer.took(pending)
            if assumed:
                outer.assume(assumed)

    def judge_final(self, keys: list[Key]) -> None:
        """KEYS' answers are final (what they took put off held what they were given): their
        assumptions judged, and those of the answers that wait for one of them to be; an
        answer made on one belied is dropped, to be made again."""
        todo = list(keys)
        while todo:
            final = todo.pop()
            for key in (final, *self.judging.pop(final, ())):
                assumed = self.assumptions.pop(key, None)
                if not assumed or key not in self.found:
                    continue
                belied, unjudged = self.judge(assumed)
                if belied:
                    self.vague |= belied
                    self.drop((key,))
                elif unjudged:
                    self.assume_until(key, unjudged)

    def assume_until(self, key: Key, assumed: set[Key]) -> None:
        """KEY's answer was made on ASSUMED, judged once each is final."""
        self.assumptions[key] = assumed
        for other in assumed:
            self.judging.setdefault(other, set()).add(key)

    def keep(
        self,
        key: Key,
        held: frozenset,
        read: Reads | None,
        since: int,
        pending: set[Key] | None,
        assumed: set[Key] | None = None,
    ) -> None:
        if len(held) <= 1:  # most answers are nothing or one value: kept once
            held = self.shared.setdefault(held, held)
        self.found[key] = held
        self.floor.pop(key, None)
        if read is not None:
            self.reads[key] = (read, since)
        if pending:
            self.pending[key] = set(pending)
            for other in pending:
                self.waiting.setdefault(other, {})[key] = None
        else:
            self.pending.pop(key, None)
        if assumed:
            self.assume_until(key, set(assumed))
        else:
            self.assumptions.pop(key, None)

    def take(self, asker: Question, key: Key) -> None:
        """ASKER took KEY's answer: it reads what that read, and takes the questions put off
        that one took (one being answered now: as if met again)."""
        read = self.reads.get(key)
        if read is not None:
            asker.read(*read)
        assumed = self.assumptions.get(key)
        if assumed is not None:
            asker.assume(assumed)
        pending = self.pending.get(key)
        if pending is not None:
            asker.took(pending)
            for other in pending:
                question = self.busy.get(other)
                if question is not None:
                    question.again = True
                    asker.meets(question.number)

    def settle(self) -> None:
        """Ask the questions put off, each as an outermost question, until none is left."""
        self.settling = True
        try:
            while self.put_off:
                key = next(iter(self.put_off))
                self.outermost(key, *self.put_off[key])
        finally:
            self.settling = False

    def drop(self, keys: Iterable[Key]) -> None:
        """Forget the answers of KEYS, found with less than a question they took holds; each
        keeps what it held as the least it will hold."""
        for key in keys:
            held = self.found.pop(key, None)
            if held is None:
                continue
            self.floor[key] = held
            self.reads.pop(key, None)
            self.pending.pop(key, None)
            self.assumptions.pop(key, None)

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
            self.pending.pop(key, None)
            self.assumptions.pop(key, None)
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


def in_order(found: Iterable[tuple[int, T]]) -> list[T]:
    """The values of an answer of (position, value) pairs, each once, in the order of its
    first position (an answer is a set: a cycle's rounds may hold a value at two places)."""
    first: dict[T, int] = {}
    for position, value in found:
        if first.get(value, position) >= position:
            first[value] = position
    return sorted(first, key=first.__getitem__)
