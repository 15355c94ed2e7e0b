"""Explain a logged number: the traced formula of a parameter, each of its variables bound to
what the server's log shows (or to what the log implies), evaluated step by step."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tree_sitter import Node

from tracer.analyses.explain.arith import (
    Evaluated,
    Unbound,
    evaluate,
    number,
    solve,
    statement_target,
    statement_value,
)
from tracer.analyses.explain.bind import PASS_THROUGH, LogBindings
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.caps import Cap, logged_cap
from tracer.analyses.explain.defaults import settings_state
from tracer.analyses.explain.interpvalues import Val
from tracer.analyses.explain.logread import LogLine, read_log
from tracer.analyses.explain.match import Matched, Observation, TemplateFinder, match_lines
from tracer.analyses.explain.measured import Measurements, first_free
from tracer.analyses.explain.observed import after_formula, carriers, find_observed, timeline
from tracer.analyses.explain.settings import StartSettings
from tracer.analyses.explain.split import PassedBy
from tracer.analyses.explain.starts import END, Start, find_starts
from tracer.analyses.explain.templates import calls_in
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


@dataclass(frozen=True, slots=True)
class Evaluation:
    step: Step
    target: str
    expression: str
    shown: str  # the expression with values in
    value: float | None
    missing: str = ""


@dataclass(frozen=True, slots=True)
class WhatIf:
    question: str
    knob: str
    value: float | None
    result: float | None
    why: str


@dataclass
class Explanation:
    source: str
    param: str
    rank: str
    ranks: tuple[str, ...]
    evaluations: list[Evaluation]
    bindings: dict[str, Binding]
    observed: list[Observation]
    timeline: list[Observation]
    notes: list[str] = field(default_factory=list)
    what_if: list[WhatIf] = field(default_factory=list)
    log_lines: int = 0
    matched_lines: int = 0
    start: int = 1  # the start explained (1-based), of
    starts: int = 1
    cap: Cap | None = None  # a setting that caps the result at the logged value
    # From the spine's end to the value the pool is built with: later writes of the sink's
    # attribute on the branches the settings select (page alignment, caps, a draft's share).
    onward: list[Evaluation] = field(default_factory=list)

    @property
    def result(self) -> float | None:
        if self.onward:
            return self.onward[-1].value
        return self.evaluations[-1].value if self.evaluations else None

    @property
    def budget(self) -> Evaluation | None:
        """The memory the pool is given, as the formula computes it: the value a later step
        turns from GiB into bytes (`* (1 << 30)`), else the formula's first value."""
        for index, ev in enumerate(self.evaluations):
            if ev.value is None or not ev.target.isidentifier():
                continue
            reads = re.compile(rf"\b{re.escape(ev.target)}\b")
            for later in self.evaluations[index + 1 :]:
                if "<< 30" in later.expression and reads.search(later.expression):
                    return ev
                if later.target == ev.target and later.value is not None:
                    break  # bound again before it is used: the later value is the budget
        return self.evaluations[0] if self.evaluations else None


def explain(
    session: Session,
    log_text: str,
    param: str,
    sinks: Iterable[str],
    rank: str | None = None,
    tokens: int | None = None,
    given: dict[str, float] | None = None,
    start: int | None = None,
) -> Explanation:
    """Bind LOG_TEXT to the formula on PARAM's spine in SESSION's source and evaluate it, for
    the START-th start of the log (1-based; the last by default)."""
    lines = read_log(log_text)
    if not lines:
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
    matched = match_lines(finder, lines)
    session.facts.flush()
    if not matched:
        raise LogNotFromSource(
            f"none of the {len(lines)} lines of the log was printed by a logging call of "
            f"{session.snapshot.label}",
            "give the log of a server running this source (the same release or checkout)",
        )
    holding = objects_holding(chain.spine, chain.edges)
    binder = Binder(session, spine, first, lines, matched, sinks, rank, given or {}, start)
    binder.holding = holding[first:]
    result = binder.run(param, tokens)
    result.log_lines = len(lines)
    result.matched_lines = len(matched)
    result.start, result.starts = binder.start.number, len(binder.starts)
    unused = unused_given(given or {}, result)
    if unused:
        raise SgtraceError(
            f"--set {', '.join(sorted(unused))}: not a value the formula reads",
            "its values: " + ", ".join(b.name for b in result.bindings.values()),
        )
    result.notes.extend(unmatched_note(lines, matched))
    result.notes.extend(loose_notes(matched))
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


def formula_alone(evaluations: list[Evaluation]) -> str:
    """What the formula gives by itself, or what it lacks to give anything."""
    if evaluations and evaluations[-1].value is not None:
        return number(evaluations[-1].value)
    stop = next((ev for ev in evaluations if ev.value is None and ev.missing), None)
    return f"no number ({stop.missing} is not in the log)" if stop else "no number"


def loose_notes(matched: list[Matched]) -> list[str]:
    """One note per logging call that lines matched loosely: what they show that the call
    does not print, what it prints that they do not show."""
    by_call: dict[tuple[str, int], list[Matched]] = {}
    for m in matched:
        if m.loose is not None:
            by_call.setdefault((m.template.file, m.template.line), []).append(m)
    notes: list[str] = []
    for (path, line), found in by_call.items():
        first = found[0]
        assert first.loose is not None
        differs = []
        if first.loose.extra:
            differs.append("it also shows " + ", ".join(first.loose.extra))
        if first.loose.missing:
            differs.append("it does not show " + ", ".join(first.loose.missing))
        if first.loose.reordered:
            differs.append("its fields in another order")
        count = f"{len(found)} lines" if len(found) > 1 else "1 line"
        where = f"log line {first.line.number}" + (
            f" ({first.line.rank})" if first.line.rank else ""
        )
        notes.append(
            f"{count} matched {path}:{line} loosely ({where}: "
            f"{first.line.message.strip()[first.loose.start :][:60]!r}): another build of the call"
            + (f" ({'; '.join(differs)})" if differs else "")
            + "; its values are read by their labels"
        )
    return notes


def unused_given(given: dict[str, float], result: Explanation) -> set[str]:
    names = {n for b in result.bindings.values() for n in (b.name, b.name.rsplit(".", 1)[-1])}
    for b in result.bindings.values():
        if b.computed is not None:  # what the code's default computation reads
            names |= {i.name for i in b.computed.inputs} | {b.computed.missing_name}
    return set(given) - names


def unmatched_note(lines: list[LogLine], matched: list[Matched]) -> list[str]:
    """Lines in the server's own format that no logging call of the source prints: a log
    from another build loses values that way."""
    printed = {m.line.number for m in matched}
    stamped = [line for line in lines if line.time or line.ranks]
    missed = [line for line in stamped if line.number not in printed]
    if not missed or len(missed) == len(stamped):
        return []
    first = missed[0]
    return [
        f"{len(missed)} of the log's {len(stamped)} server lines match no logging call of this "
        f"source (first: log line {first.number}, {first.message.strip()[:60]!r}); a log from "
        "another build of the server loses those values"
    ]


class Binder(LogBindings):
    def __init__(
        self,
        session: Session,
        spine: list[Step],
        first: int,
        lines: list[LogLine],
        matched: list[Matched],
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
        seen = sorted({m.line.rank for m in matched if m.line.rank}, key=rank_order) or [""]
        if rank is not None and rank not in seen:
            raise SgtraceError(
                f"no line of rank {rank} in the log",
                f"ranks seen: {', '.join(r or '(none)' for r in seen) or 'none'}",
            )
        settings = frozenset(s.symbol.split(".")[0] for s in spine if s.kind == "field")
        self.starts = find_starts(lines, matched, rank or seen[0], settings)
        self.start = chosen_start(self.starts, start)
        self.lines = [line for line in lines if self.start.holds(line.number)]
        self.matched = [m for m in matched if self.start.holds(m.line.number)]
        ranks = sorted({m.line.rank for m in self.matched if m.line.rank}, key=rank_order)
        self.ranks = tuple(ranks or [""])
        if rank is not None and rank not in self.ranks:
            raise SgtraceError(
                f"no line of rank {rank} in start {self.start.number} of the log",
                f"its ranks: {', '.join(r or '(none)' for r in self.ranks)}",
            )
        self.rank = rank if rank is not None else self.ranks[0]
        if len(self.starts) > 1:
            self.notes.append(starts_note(self.starts, self.start))
        self.mine = [m for m in self.matched if m.line.rank in (self.rank, "")]
        self.bindings: dict[str, Binding] = {}
        self.observed = find_observed(self.mine, self.sinks, carriers(self.graph, self.steps))
        self.result_line = min(
            [o.line.number for o in self.observed] + after_formula(self.steps, self.mine),
            default=10**12,
        )
        self.settings = StartSettings(
            session.snapshot, self.graph, self.lines, first_free(self.mine), given
        )
        self.measurements = Measurements(
            session, self.mine, self.matched, self.ranks, self.result_line
        )

    # -- the run ---------------------------------------------------------------------------

    def run(self, param: str, tokens: int | None) -> Explanation:
        self.passed = PassedBy(self.session.snapshot, self.settings_now(), self.mine_lines())
        holding = self.holding if len(self.holding) == len(self.steps) else [""] * len(self.steps)
        self.steps, self.holding = self.passed.insert(self.graph, self.steps, holding)
        evaluations = self.evaluate_all(self.steps, {})
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
            evaluations = self.solve_missing(evaluations) or evaluations
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
            explanation.what_if = self.what_ifs(param, tokens, explanation)
        return explanation

    def evaluate_all(
        self, steps: list[Step], overrides: dict[str, float], record: bool = True
    ) -> list[Evaluation]:
        env: dict[str, float] = {}
        last: dict[str, float] = {}  # last name segment -> value, for attribute reads
        previous: float | None = None
        previous_function = ""
        previous_name = ""
        out: list[Evaluation] = []
        # Names the steps compute: never bound from the log (their value is the step's).
        computed = {statement_target(s.code) or s.name for s in steps} | {s.name for s in steps}
        for index, step in enumerate(steps):
            target = statement_target(step.code) or step.name
            holding = self.holding if len(self.holding) == len(steps) else [""] * len(steps)
            held = holding[index]
            # Taken out of the object here: `x.LABEL` is the value the object held.
            taken = holding[index - 1] if index and not held else ""
            if held:
                # The value rides in an object here: it is the object's .HELD, unchanged.
                value = previous
                node = statement_value(step.code)
                code = expression_text(node) if node is not None else " ".join(step.code.split())
                shown = f"holds .{held} = {number(value)}" if value is not None else ""
                out.append(Evaluation(step, target, code, shown, value))
            elif step.id in self.passed.ids:
                # A reassignment the spine passes by: read from the code of what it calls.
                found = self.passed.evaluate(step, previous)
                value = found.value
                out.append(Evaluation(step, target, found.expression, found.shown, value))
            elif (
                step.kind in PASS_THROUGH
                or (previous_function and calls_only(step.code, previous_function))
                or copies(step.code, previous_name)
            ):
                value = previous
                node = statement_value(step.code)
                shown = expression_text(node) if node is not None else step.code
                out.append(Evaluation(step, target, shown, number_or(value), value))
            else:
                node = statement_value(step.code)
                if node is None:
                    out.append(Evaluation(step, target, step.code, "", None, "no expression"))
                    previous = None
                    continue

                def lookup(
                    name: str,
                    at: Node,
                    step: Step = step,
                    previous: float | None = previous,
                    previous_function: str = previous_function,
                    taken: str = taken,
                ) -> float | None:
                    if name in overrides:
                        return overrides[name]
                    if taken and name.endswith("." + taken):
                        return previous
                    if name in env:
                        return env[name]
                    if name in computed:
                        return None
                    if at.type == "call":
                        called = calls_in(at)[:1]
                        if called and called[0] == previous_function and previous is not None:
                            return previous
                        return None
                    tail = name.rsplit(".", 1)[-1]
                    if "." in name and tail in last:
                        return last[tail]
                    binding = self.bind(name, step, record)
                    return binding.value

                try:
                    result: Evaluated | None = evaluate(node, lookup)
                    missing = ""
                except Unbound as exc:
                    result, missing = None, exc.what
                value = result.value if result else None
                out.append(
                    Evaluation(
                        step,
                        target,
                        expression_text(node),
                        result.shown if result else "",
                        value,
                        missing,
                    )
                )
            previous = value
            previous_name = step.name
            previous_function = step.symbol.rsplit(".", 1)[-1] if step.kind == "return" else ""
            if value is not None:
                for name in {target, step.name}:
                    if name:
                        env[name] = value
                        last[name.rsplit(".", 1)[-1]] = value
        if steps and steps[-1].kind == "attr_write" and previous is not None:
            out.extend(self.onward(steps[-1], previous))
        return out

    def onward(self, sink: Step, value: float) -> list[Evaluation]:
        """From the sink's first value to the one the pool is built with: the later writes of
        its attribute in the same method, on the branches the settings select."""
        out: list[Evaluation] = []
        previous = value
        for step, write in self.passed.onward(self.graph, sink, value):
            if not write.value.known or not isinstance(write.value.value, int | float):
                break  # what the code does next is not known from the log: the value stands
            value = float(write.value.value)
            shown = self.passed.with_values(write.code, sink.name, previous)
            target = statement_target(step.code) or step.name
            out.append(Evaluation(step, target, write.code, shown, value))
            previous = value
        return out

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

    # -- solving for what the log does not print ---------------------------------------------

    def solve_missing(self, evaluations: list[Evaluation]) -> list[Evaluation] | None:
        # The value that stops the evaluation first; with the logged result, one is solvable.
        first = next((e for e in evaluations if e.value is None), None)
        unbound = self.bindings.get(first.missing) if first is not None else None
        target = self.observed[0].value if self.observed else None
        if unbound is None or unbound.value is not None or target is None:
            return None
        name = unbound.name

        def result_with(value: float) -> float:
            values = self.evaluate_all(self.steps, {name: value}, record=False)
            end = values[-1].value
            return end if end is not None else float("nan")

        solved = solve(result_with, target, 1e-9, 1e15)
        if solved is None:
            return None
        # A whole number near the solution that gives the logged result exactly, if any.
        near = range(round(solved) - 8, round(solved) + 9)
        exact = [n for n in near if n > 0 and result_with(n) == target]
        shown = min(exact, key=lambda n: abs(n - solved)) if exact else solved
        old = self.bindings[name]
        self.bindings[name] = Binding(
            name,
            float(shown),
            "solved",
            f"not printed; solved from the logged result {number(target)} "
            f"({self.observed[0].where}): the value that makes the formula give it",
        )
        del old
        return self.evaluate_all(self.steps, {})

    # -- what would change it ----------------------------------------------------------------

    def what_ifs(self, param: str, tokens: int | None, explanation: Explanation) -> list[WhatIf]:
        knob = next((n for n in self.bindings if n.rsplit(".", 1)[-1] == param), None)
        if knob is None or self.bindings[knob].value is None:
            return []
        current = self.bindings[knob].value
        out: list[WhatIf] = []
        # A fraction is searched in [0, 1]; another knob up to a few times its value.
        high = 1.0 if 0 < current <= 1 else max(1.0, 4 * abs(current))

        def result_with(value: float, index: int = -1) -> float:
            values = self.evaluate_all(self.steps, {knob: value}, record=False)
            end = values[index].value
            return end if end is not None else float("nan")

        if tokens is not None:
            value = solve(result_with, tokens, 0.0, high)
            if value is not None:
                value = at_least(result_with, tokens, value, high)
            out.append(
                WhatIf(
                    f"{tokens} tokens",
                    knob,
                    value,
                    result_with(value) if value is not None else None,
                    "the smallest value giving at least that many"
                    if value is not None
                    else "out of reach with this memory",
                )
            )
        idle = explanation.timeline[-1] if explanation.timeline else None
        budget = explanation.budget
        at = explanation.evaluations.index(budget) if budget is not None else 0
        if idle is not None and idle.value and budget is not None and budget.value is not None:
            goal = budget.value + idle.value
            value = solve(lambda v: result_with(v, at), goal, 0.0, high)
            if value is not None:
                out.append(
                    WhatIf(
                        f"use the {number(idle.value)} left free at the end",
                        knob,
                        value,
                        result_with(value),
                        f"{idle.template.literal.strip()!r} ({idle.where}) shows what stays free; "
                        "leave some of it for activations",
                    )
                )
        return out


def at_least(function: Callable[[float], float], target: float, value: float, high: float) -> float:
    """VALUE nudged up until FUNCTION gives at least TARGET (a bisection over a floor may
    stop one token short)."""
    step = max(abs(value), 1e-9) * 1e-9
    while function(value) < target and value < high:
        value = min(high, value + step)
        step *= 2
    return value


def calls_only(code: str, function: str) -> bool:
    """CODE assigns or passes the result of a call of FUNCTION and nothing else."""
    node = statement_value(code)
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[0]
    return node is not None and node.type == "call" and calls_in(node)[:1] == [function]


def copies(code: str, name: str) -> bool:
    """CODE copies a value named NAME (`x = config.NAME`, `self.x = NAME`)."""
    node = statement_value(code)
    if not name or node is None or node.type not in ("identifier", "attribute"):
        return False
    return node.text.decode().rsplit(".", 1)[-1] == name


def expression_text(node: Node) -> str:
    """NODE's source on one line, as a person would write it there."""
    flat = " ".join(node.text.decode("utf-8", "replace").split())
    return re.sub(r"([(\[]) | ([)\]])", lambda m: m[1] or m[2], flat)


def number_or(value: float | None) -> str:
    return number(value) if value is not None else ""


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


def starts_note(starts: list[Start], start: Start) -> str:
    end = f"to log line {start.end - 1}" if start.end < END else "to the end"
    at: dict[str, list[str]] = {}
    for each in starts:
        at.setdefault(each.marker, []).append(str(each.at))
    begun = "; ".join(
        f"{marker} at log line{'s' if len(lines) > 1 else ''} {', '.join(lines)}"
        for marker, lines in at.items()
    )
    return (
        f"the log holds {len(starts)} server starts (each begins with {begun}); start "
        f"{start.number} (log lines {start.begin} {end}) is explained, with its own lines "
        "only: --start N explains another"
    )


def rank_order(rank: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", rank)) or (-1,)
