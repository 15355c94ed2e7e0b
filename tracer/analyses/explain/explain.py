"""Explain a logged number: the traced formula of a parameter, each of its variables bound to
what the server's log shows (or to what the log implies), evaluated step by step. The Binder
holds one start of the log and the chain; binding is `bind.py`'s, evaluating `evaluate.py`'s,
solving and what-ifs `whatif.py`'s; the result is an `Explanation` (`explanation.py`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from tracer.analyses.explain.arith import number
from tracer.analyses.explain.bind import LogBindings
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.caps import logged_cap
from tracer.analyses.explain.defaults import settings_state
from tracer.analyses.explain.evaluate import Evaluation, Formula
from tracer.analyses.explain.explanation import Explanation
from tracer.analyses.explain.interpvalues import Val
from tracer.analyses.explain.logread import Log, LogLine
from tracer.analyses.explain.match import TemplateFinder
from tracer.analyses.explain.measured import Measurements, first_free
from tracer.analyses.explain.notes import formula_alone, loose_notes, starts_note, unmatched_note
from tracer.analyses.explain.observed import after_formula, carriers, find_observed, timeline
from tracer.analyses.explain.settings import StartSettings
from tracer.analyses.explain.split import PassedBy
from tracer.analyses.explain.starts import Start
from tracer.analyses.explain.survey import Survey, start_lines, survey
from tracer.analyses.explain.whatif import decide_by_count, solve_missing, what_ifs
from tracer.errors import SgtraceError
from tracer.graph.steps import Edge, Step
from tracer.session import Session
from tracer.trace.chains import trace


class NoFormula(SgtraceError):
    pass


class EmptyLog(SgtraceError):
    pass


class LogNotFromSource(SgtraceError):
    pass


def explain(
    session: Session,
    log: str | Log,
    param: str,
    sinks: Iterable[str],
    rank: str | None = None,
    tokens: int | None = None,
    given: dict[str, float] | None = None,
    start: int | None = None,
) -> Explanation:
    """Bind LOG (a text, or a Log read as it arrives) to the formula on PARAM's spine in
    SESSION's source and evaluate it, for the START-th start of the log (1-based; the last by
    default)."""
    log = log if isinstance(log, Log) else Log.of_text(log)
    if next(iter(log), None) is None:
        raise EmptyLog("the log is empty", "give the server's log: --log FILE, - or --journal")
    sinks = tuple(sinks)
    chain = trace(session.graph, param, sinks=sinks)
    spine = [session.graph.step(s) for s in chain.spine]
    first = next((i for i, s in enumerate(spine) if s.kind == "formula"), None)
    if first is None:
        raise NoFormula(
            f"the chain of {param!r} reaches no formula in {session.snapshot.label}",
            "`sgtrace trace` shows where it goes; explain needs a computed value on its way",
        )
    finder = TemplateFinder(session.facts)
    settings = frozenset(s.symbol.split(".")[0] for s in spine if s.kind == "field")
    surveyed = survey(finder, log, settings)
    session.facts.flush()
    if not surveyed.matched:
        raise LogNotFromSource(
            f"none of the {surveyed.lines} lines of the log was printed by a logging call of "
            f"{session.snapshot.label}",
            "give the log of a server running this source (the same release or checkout)",
        )
    holding = objects_holding(chain.spine, chain.edges)
    binder = Binder(session, spine, first, surveyed, sinks, rank, given or {}, start)
    binder.read_start(finder, log)
    binder.holding = holding[first:]
    result = binder.run(param, tokens)
    result.log_lines = surveyed.lines
    result.matched_lines = surveyed.matched
    result.start, result.starts = binder.start.number, len(binder.starts)
    unused = unused_given(given or {}, result)
    if unused:
        raise SgtraceError(
            f"--set {', '.join(sorted(unused))}: not a value the formula reads",
            "its values: " + ", ".join(b.name for b in result.bindings.values()),
        )
    result.notes.extend(unmatched_note(surveyed))
    result.notes.extend(loose_notes(surveyed))
    return result


def objects_holding(spine: tuple[str, ...], edges: Iterable[Edge]) -> list[str]:
    """Per step of SPINE, the attribute of an object the step holds the value in (between a
    `store` edge into the object and the `read` edge out of it), or ""."""
    joins = {(e.src, e.dst): e for e in edges if e.kind in ("store", "read")}
    out: list[str] = []
    inside = ""
    for before, step in zip(("", *spine), spine, strict=False):
        join = joins.get((before, step))
        if join is not None:
            inside = join.label if join.kind == "store" else ""
        out.append(inside)
    return out


def unused_given(given: dict[str, float], result: Explanation) -> set[str]:
    names = {n for b in result.bindings.values() for n in (b.name, b.name.rsplit(".", 1)[-1])}
    for b in result.bindings.values():
        if b.computed is not None:  # what the code's default computation reads
            names |= {i.name for i in b.computed.inputs} | {b.computed.missing_name}
    return set(given) - names


class Binder(LogBindings):
    def __init__(
        self,
        session: Session,
        spine: list[Step],
        first: int,
        surveyed: Survey,
        sinks: tuple[str, ...],
        rank: str | None,
        given: dict[str, float],
        start: int | None = None,
    ) -> None:
        self.given = given
        self.holding: list[str] = []  # per formula step: the attribute of an object it holds
        self.session = session
        self.graph = session.graph
        self.spine = spine
        self.steps = spine[first:]
        self.sinks = sinks
        self.notes: list[str] = []
        # Lines without a rank tag (the launcher's) belong to every rank.
        seen = sorted(surveyed.ranks, key=rank_order) or [""]
        if rank is not None and rank not in seen:
            raise SgtraceError(
                f"no line of rank {rank} in the log",
                f"ranks seen: {', '.join(r or '(none)' for r in seen) or 'none'}",
            )
        self.asked = rank
        self.starts = surveyed.marks.starts(rank or seen[0])
        self.start = chosen_start(self.starts, start)
        if len(self.starts) > 1:
            self.notes.append(starts_note(self.starts, self.start))

    def read_start(self, finder: TemplateFinder, log: Log) -> None:
        """Read the lines of the start explained (the survey kept none) and bind to them."""
        self.lines, self.matched = start_lines(finder, log, self.start)
        self.session.facts.flush()
        ranks = sorted({m.line.rank for m in self.matched if m.line.rank}, key=rank_order)
        self.ranks = tuple(ranks or [""])
        if self.asked is not None and self.asked not in self.ranks:
            raise SgtraceError(
                f"no line of rank {self.asked} in start {self.start.number} of the log",
                f"its ranks: {', '.join(r or '(none)' for r in self.ranks)}",
            )
        self.rank = self.asked if self.asked is not None else self.ranks[0]
        self.mine = [m for m in self.matched if m.line.rank in (self.rank, "")]
        self.bindings: dict[str, Binding] = {}
        self.observed = find_observed(self.mine, self.sinks, carriers(self.graph, self.steps))
        self.result_line = min(
            [o.line.number for o in self.observed] + after_formula(self.steps, self.mine),
            default=10**12,
        )
        self.settings = StartSettings(
            self.session.snapshot, self.graph, self.lines, first_free(self.mine), self.given
        )
        self.measurements = Measurements(
            self.session, self.mine, self.matched, self.ranks, self.result_line
        )

    # -- the run ---------------------------------------------------------------------------

    def run(self, param: str, tokens: int | None) -> Explanation:
        self.passed = PassedBy(self.session.snapshot, self.settings_now(), self.mine_lines())
        holding = self.holding if len(self.holding) == len(self.steps) else [""] * len(self.steps)
        self.steps, self.holding = self.passed.insert(self.graph, self.steps, holding)
        self.formula = Formula(self.steps, self.holding, self.passed, self.graph, self.bind)
        evaluations = self.formula.evaluate({})
        unknown = [e for e in evaluations if e.value is None]
        cap = logged_cap(self.observed[0], self.lines, self.sinks) if self.observed else None
        if cap is not None and evaluations[-1].value is not None:
            cap = cap if evaluations[-1].value >= cap.value else None  # a cap binds from above
        if cap is not None:
            self.notes.append(
                f"the logged count {number(cap.value)} is {cap.name} = {number(cap.value)} "
                f"(log line {cap.line}): the cap binds, so nothing is solved from the count; "
                f"the formula alone gives {formula_alone(evaluations)}"
            )
        elif unknown and self.observed:
            solved = solve_missing(self.formula, self.bindings, self.observed, evaluations)
            evaluations = solved or evaluations
            decided = decide_by_count(self.formula, self.bindings, self.observed, evaluations)
            evaluations = decided or evaluations
        for ev in evaluations:
            if ev.step.id in self.passed.ids:
                self.notes.append(self.passed.evaluate(ev.step, self.before(evaluations, ev)).why)
        spine_ids = {s.id for s in self.steps}
        onward = [ev for ev in evaluations if ev.step.id not in spine_ids]
        evaluations = [ev for ev in evaluations if ev.step.id in spine_ids]
        explanation = Explanation(
            source=self.session.snapshot.label,
            param=param,
            rank=self.rank,
            ranks=self.ranks,
            evaluations=evaluations,
            onward=onward,
            bindings=self.bindings,
            observed=self.observed,
            timeline=timeline(self.bindings, self.mine),
            notes=self.notes,
            cap=cap,
        )
        if explanation.result is not None:
            explanation.what_if = what_ifs(self.formula, self.bindings, param, tokens, explanation)
        return explanation

    def settings_now(self) -> tuple[str, dict[str, Val]]:
        """The settings class of the spine's field, and its fields once the server started."""
        field_step = next((s for s in self.spine if s.kind == "field"), None)
        if field_step is None:
            return "", {}
        klass = field_step.symbol.split(".")[0]
        source = self.session.snapshot.read(field_step.file)
        return klass, settings_state(
            source, klass, self.lines, self.settings.first_free, self.given
        )

    def mine_lines(self) -> list[LogLine]:
        return [line for line in self.lines if line.rank in (self.rank, "")]

    @staticmethod
    def before(evaluations: list[Evaluation], ev: Evaluation) -> float | None:
        index = evaluations.index(ev)
        return evaluations[index - 1].value if index else None


def chosen_start(starts: list[Start], number: int | None) -> Start:
    if number is None:
        return starts[-1]
    if not 1 <= number <= len(starts):
        raise SgtraceError(
            f"--start {number}: the log holds {len(starts)} start"
            + ("s" if len(starts) > 1 else ""),
            f"give --start 1 to {len(starts)}" if len(starts) > 1 else "leave out --start",
        )
    return starts[number - 1]


def rank_order(rank: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", rank)) or (-1,)
