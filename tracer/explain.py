"""Explain a logged number: the traced formula of a parameter, each of its variables bound to
what the server's log shows (or to what the log implies), evaluated step by step."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from tree_sitter import Node

from tracer.arith import (
    Evaluated,
    Unbound,
    evaluate,
    number,
    solve,
    statement_target,
    statement_value,
)
from tracer.errors import SgtraceError
from tracer.logmatch import Matched, Observation, TemplateFinder, match_lines
from tracer.logread import LogLine, read_log
from tracer.logtemplates import calls_in
from tracer.parse import parse
from tracer.session import Session
from tracer.steps import Step
from tracer.trace import trace

PASS_THROUGH = frozenset({"call_arg", "param", "field", "attr_read", "sink", "use", "cli_flag"})
MAX_BACK = 14
FORWARD_DEPTH = 6  # steps walked on from the result to the lines that print it
FORWARD_STEPS = 400  # steps walked back from a formula variable to where its value is measured
FLAG_VALUE = r"(?:=|\s+)['\"]?(?P<v>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)"


class NoFormula(SgtraceError):
    pass


class EmptyLog(SgtraceError):
    pass


@dataclass(frozen=True, slots=True)
class Binding:
    name: str  # as the formula writes it: "self.mem_fraction_static"
    value: float | None
    how: str  # printed, measured, derived, flag, logged-args, default, solved, unbound
    why: str
    observation: Observation | None = None
    per_rank: tuple[tuple[str, float], ...] = ()
    function: str = ""  # for a measured value: the function that measured it
    at: Step | None = None  # ... and the step that called it


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

    @property
    def result(self) -> float | None:
        return self.evaluations[-1].value if self.evaluations else None


def explain(
    session: Session,
    log_text: str,
    param: str,
    sinks: Iterable[str],
    rank: str | None = None,
    tokens: int | None = None,
    given: dict[str, float] | None = None,
) -> Explanation:
    """Bind LOG_TEXT to the formula on PARAM's spine in SESSION's source and evaluate it."""
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
    binder = Binder(session, spine, first, lines, matched, sinks, rank, given or {})
    result = binder.run(param, tokens)
    result.log_lines = len(lines)
    result.matched_lines = len(matched)
    return result


class Binder:
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
    ) -> None:
        self.given = given
        self.session = session
        self.graph = session.graph
        self.spine = spine
        self.steps = spine[first:]
        self.lines = lines
        self.sinks = sinks
        # Lines without a rank tag (the launcher's) belong to every rank.
        ranks = sorted({m.line.rank for m in matched if m.line.rank}, key=rank_order) or [""]
        self.ranks = tuple(ranks)
        self.rank = rank if rank is not None else ranks[0]
        if rank is not None and rank not in ranks:
            raise SgtraceError(
                f"no line of rank {rank} in the log",
                f"ranks seen: {', '.join(r or '(none)' for r in ranks) or 'none'}",
            )
        self.notes: list[str] = []
        self.matched, begin = last_start(matched, self.rank, self.notes)
        self.lines = [line for line in lines if line.number >= begin]
        self.mine = [m for m in self.matched if m.line.rank in (self.rank, "")]
        self.bindings: dict[str, Binding] = {}
        self.observed = self.find_observed()
        self.result_line = min(
            [o.line.number for o in self.observed] + self.after_formula(), default=10**12
        )

    # -- the run ---------------------------------------------------------------------------

    def run(self, param: str, tokens: int | None) -> Explanation:
        evaluations = self.evaluate_all(self.steps, {})
        unknown = [e for e in evaluations if e.value is None]
        if unknown and self.observed:
            evaluations = self.solve_missing(evaluations) or evaluations
        explanation = Explanation(
            source=self.session.snapshot.label,
            param=param,
            rank=self.rank,
            ranks=self.ranks,
            evaluations=evaluations,
            bindings=self.bindings,
            observed=self.observed,
            timeline=self.timeline(),
            notes=self.notes,
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
        for step in steps:
            target = statement_target(step.code) or step.name
            if (
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
                ) -> float | None:
                    if name in overrides:
                        return overrides[name]
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
        return out

    # -- binding a variable --------------------------------------------------------------------

    def bind(self, name: str, at: Step, record: bool = True) -> Binding:
        known = self.bindings.get(name)
        if known is not None:
            return known
        binding = self.find_binding(name, at)
        if record:
            self.bindings[name] = binding
        return binding

    def find_binding(self, name: str, at: Step) -> Binding:
        tail = name.rsplit(".", 1)[-1]
        if tail in self.given or name in self.given:
            value = self.given.get(name, self.given.get(tail))
            return Binding(name, value, "given", "given with --set")
        printed = self.printed(name, at.symbol)
        if printed is not None:
            return Binding(
                name,
                printed.value,
                "printed",
                f"printed by {printed.template.file}:{printed.template.line} ({printed.where})",
                printed,
            )
        tail = name.rsplit(".", 1)[-1]
        frontier = [
            e.src
            for e in self.graph.edges(at.id, forward=False)
            if self.graph.step(e.src).name == tail
        ]
        seen: set[str] = set()
        for _ in range(MAX_BACK):
            following: list[str] = []
            for step_id in frontier:
                if step_id in seen:
                    continue
                seen.add(step_id)
                step = self.graph.step(step_id)
                found = self.from_step(name, step)
                if found is not None:
                    return found
                following.extend(self.value_sources(step))
            frontier = following
            if not frontier:
                break
        return Binding(name, None, "unbound", "not printed in the log, and not derivable from it")

    def value_sources(self, step: Step) -> list[str]:
        """The steps STEP's value is copied from: through parameters, arguments, plain copies
        and returns; a computed value stops the walk (it is not this variable any more)."""
        edges = self.graph.edges(step.id, forward=False)
        if step.kind in PASS_THROUGH:
            return [e.src for e in edges]
        node = statement_value(step.code)
        while node is not None and node.type == "parenthesized_expression":
            node = node.named_children[0]
        if node is None:
            return []
        if node.type == "call":
            return [e.src for e in edges if e.kind == "return_to_result"]
        if node.type in ("identifier", "attribute"):
            return [e.src for e in edges]
        if step.kind == "return":
            return [e.src for e in edges]
        return []

    def from_step(self, name: str, step: Step) -> Binding | None:
        if step.kind in ("field", "cli_flag"):
            return self.setting(name, step)
        printed = self.printed(step.name, step.symbol)
        if printed is not None and step.name:
            return Binding(
                name,
                printed.value,
                "printed",
                f"{step.name} in {step.symbol} is printed by {printed.template.file}:"
                f"{printed.template.line} ({printed.where})",
                printed,
            )
        calls = set(calls_in(parse(step.code.encode()).tree.root_node))
        for function in sorted(calls):
            measured = self.measured(name, step, function)
            if measured is not None:
                return measured
        return None

    def printed(self, name: str, symbol: str) -> Observation | None:
        """The last line before the result that prints NAME itself in the same function (a
        local) or the same class (an attribute)."""
        klass = symbol.split(".")[0]
        best: Observation | None = None
        for matched in self.mine:
            if matched.line.number >= self.result_line:
                break
            for observation in matched.observations:
                if observation.hole.expr != name or observation.value is None:
                    continue
                where = observation.template.symbol
                same = where == symbol if "." not in name else where.split(".")[0] == klass
                if same and not observation.derived:
                    best = observation
        return best

    def measured(self, name: str, step: Step, function: str) -> Binding | None:
        """NAME's value comes from a call of FUNCTION at STEP: bind it to the logged value of
        the same measurement nearest in time (before the result line)."""
        candidates = self.candidates(function, self.mine)
        if not candidates:
            return None
        at_formula = step.symbol == self.steps[0].symbol
        if at_formula:
            chosen = candidates[-1]
            when = f"the last logged {function}() before the result"
        else:
            logged_here = [m.line.number for m in self.mine if m.template.symbol == step.symbol]
            after = max(logged_here, default=0)
            later = [c for c in candidates if position(c) > after]
            chosen = later[0] if later else candidates[0]
            when = f"the first logged {function}() after {step.symbol} ran"
        value = chosen.value
        per_rank: list[tuple[str, float]] = []
        how = "measured"
        why = (
            f"{name} = {function}(...) at {step.file}:{step.line} ({step.symbol}); not printed "
            f"there: {when}, {chosen.template.literal.strip()!r} ({chosen.where})"
        )
        if chosen.derived:
            how = "derived"
            why += f", derived as {chosen.derived}"
        if self.takes_minimum(function, step.code) and len(self.ranks) > 1:
            per_rank = self.across_ranks(chosen, function)
            if per_rank:
                value = min(v for _, v in per_rank)
                why += f"; the code takes the minimum across ranks ({len(per_rank)} ranks)"
        return Binding(name, value, how, why, chosen, tuple(per_rank), function, step)

    def candidates(self, function: str, matched: list[Matched]) -> list[Observation]:
        found = []
        for line in matched:
            if line.line.number >= self.result_line:
                break
            for observation in line.observations:
                hole = observation.hole
                if observation.value is not None and hole.simple and function in hole.measured_by:
                    found.append(observation)
        return sorted(found, key=position)

    def across_ranks(self, chosen: Observation, function: str) -> list[tuple[str, float]]:
        """The same logged measurement on every rank (the Nth of its template on each)."""
        mine = [o for o in self.candidates(function, self.mine) if o.template == chosen.template]
        nth = mine.index(chosen) if chosen in mine else 0
        out: list[tuple[str, float]] = []
        for rank in self.ranks:
            values = [
                o.value
                for m in self.matched
                if m.line.rank == rank and m.template == chosen.template
                for o in m.observations
                if o.hole.expr == chosen.hole.expr and bool(o.derived) == bool(chosen.derived)
            ]
            if len(values) > nth and values[nth] is not None:
                out.append((rank, values[nth]))
        return out

    def takes_minimum(self, function: str, call_code: str) -> bool:
        """FUNCTION reduces with a MIN across processes when a keyword the call passes says so
        (read from FUNCTION's own source)."""
        body = self.function_source(function)
        if not body or not re.search(r"ReduceOp\.MIN|op=.*MIN|all_reduce.*min", body):
            return False
        for keyword in re.findall(r"(\w+)\s*=(?!=)", call_code):
            if re.search(rf"\bif\s+(not\s+)?{keyword}\b", body):
                return not re.search(rf"\b{keyword}\s*=\s*False\b", call_code)
        return False

    def function_source(self, function: str) -> str:
        for path in self.session.facts.mentioning(f"def {function}("):
            text = self.session.snapshot.read(path).decode("utf-8", "replace")
            start = text.find(f"def {function}(")
            body = text.find(":\n", start)  # past the signature, which may span lines
            end = re.compile(r"^\S", re.M).search(text, max(body, start) + 2)
            return text[start : end.start() if end else len(text)]
        return ""

    def setting(self, name: str, step: Step) -> Binding:
        """A setting's value: printed with its class (`ServerArgs(..., name=0.88, ...)`), then
        the command line, then the default in the code."""
        field_name = step.name
        klass = step.symbol.split(".")[0]
        # The field's own class first; then any settings object printed with that field
        # (the value often reaches the field from another settings class).
        for owner in (re.escape(klass), r"[A-Z]\w*"):
            for line in reversed(self.lines):
                found = re.search(
                    rf"\b(?P<c>{owner})\((?:[^()]|\([^()]*\))*?\b{field_name}=(?P<v>[^,)]+)",
                    line.message,
                )
                value = to_float(found["v"]) if found else None
                if found and value is not None:
                    printed = found["c"]
                    return Binding(
                        name,
                        value,
                        "logged-args",
                        f"{printed}.{field_name} as the log prints {printed}(...) "
                        f"(log line {line.number})",
                    )
        flags = (
            set(re.findall(r"[\"'](--[\w-]+)[\"']", step.code))
            if step.kind == "cli_flag"
            else set()
        )
        flags.add("--" + field_name.replace("_", "-"))
        for line in reversed(self.lines):
            for flag in sorted(flags):
                found = re.search(rf"(?<![\w-]){re.escape(flag)}{FLAG_VALUE}", line.message)
                if found:
                    return Binding(
                        name,
                        float(found["v"]),
                        "flag",
                        f"{flag} on the command line (log line {line.number})",
                    )
        default = re.search(r"=\s*(?P<v>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*(?:#.*)?$", step.code)
        if step.kind == "field" and default:
            return Binding(
                name,
                float(default["v"]),
                "default",
                f"not in the log: the default of {klass}.{field_name} in the code",
            )
        return Binding(
            name,
            None,
            "unbound",
            f"{klass}.{field_name}: not in the log (no {klass}(...) line, no "
            f"{' or '.join(sorted(flags))} on a command line); give --set {field_name}=VALUE",
        )

    # -- what the log reports as the result -----------------------------------------------------

    def find_observed(self) -> list[Observation]:
        """Lines printing the result: a hole that reads a sink, or a name that carries the
        sink's value onwards (found by walking the flow graph forward from the spine's end)."""
        carried = self.carriers()
        found: list[Observation] = []
        for matched in self.mine:
            for observation in matched.observations:
                hole = observation.hole
                if observation.value is None or not hole.simple or observation.derived:
                    continue
                tail = hole.expr.rsplit(".", 1)[-1]
                if tail in self.sinks or (observation.template.symbol, tail) in carried:
                    found.append(observation)
                    break
        return found

    def after_formula(self) -> list[int]:
        """Log lines printed, in a function of the spine, below the spine's step there: the
        formula has run by then (the pool is built after it is sized)."""
        below = {}
        for step in self.steps:
            below.setdefault(step.symbol, (step.file, step.line))
        return [
            m.line.number
            for m in self.mine
            if (m.template.file, m.template.symbol) in {(f, s) for s, (f, _) in below.items()}
            and m.template.line > below[m.template.symbol][1]
        ]

    def carriers(self) -> set[tuple[str, str]]:
        """(function, name) of the places the result is copied to, a few steps onwards."""
        start = self.steps[-1].id
        seen = {start}
        frontier = [start]
        carried: set[tuple[str, str]] = set()
        for _ in range(FORWARD_DEPTH):
            following = []
            for step_id in frontier:
                for edge in self.graph.edges(step_id, forward=True):
                    if edge.dst in seen or len(seen) >= FORWARD_STEPS:
                        continue
                    seen.add(edge.dst)
                    step = self.graph.step(edge.dst)
                    if step.kind in ("param", "local_assign", "attr_write", "field", "call_arg"):
                        carried.add((step.symbol, step.name))
                        following.append(edge.dst)
            frontier = following
        return carried

    def timeline(self) -> list[Observation]:
        """Every logged measurement of the functions the formula's variables were bound to."""
        functions = {
            f
            for b in self.bindings.values()
            if b.observation is not None and b.how in ("measured", "derived")
            for f in b.observation.hole.measured_by
        }
        out = []
        for matched in self.mine:
            for observation in matched.observations:
                hole = observation.hole
                if (
                    observation.value is not None
                    and hole.simple
                    and functions & set(hole.measured_by)
                ):
                    out.append(observation)
        return sorted(out, key=position)

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

        def result_with(value: float, index: int = -1) -> float:
            values = self.evaluate_all(self.steps, {knob: value}, record=False)
            end = values[index].value
            return end if end is not None else float("nan")

        if tokens is not None:
            value = solve(result_with, tokens, 0.0, 1.0)
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
        first_value = explanation.evaluations[0].value
        if idle is not None and idle.value and first_value is not None:
            goal = first_value + idle.value
            value = solve(lambda v: result_with(v, 0), goal, 0.0, 1.0)
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
        del current
        return out


def last_start(matched: list[Matched], rank: str, notes: list[str]) -> tuple[list[Matched], int]:
    """The lines of the last server start, when the log holds several: a start begins where
    the first line the server printed (for RANK, or without a rank) is printed again."""
    mine = [m for m in matched if m.line.rank in (rank, "")]
    if not mine:
        return matched, 0
    starts = [m.line.number for m in mine if m.template == mine[0].template]
    if len(starts) < 2:
        return matched, 0
    begin = starts[-1]
    notes.append(
        f"the log holds {len(starts)} server starts; the last one (from log line {begin}) "
        "is explained"
    )
    kept: list[Matched] = []
    for other in {m.line.rank for m in matched} - {rank, ""}:
        lines = [m for m in matched if m.line.rank == other]
        theirs = [m.line.number for m in lines if m.template == lines[0].template]
        # Ranks interleave: another rank's start may be printed just before this one's.
        since = max([n for n in theirs if n <= begin] or theirs[-1:] or [begin])
        kept.extend(m for m in lines if m.line.number >= since)
    kept.extend(m for m in mine if m.line.number >= begin)
    return sorted(kept, key=lambda m: m.line.number), begin


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


def position(observation: Observation) -> float:
    # A derived value was measured before the line that lets us derive it.
    return observation.line.number - (0.5 if observation.derived else 0.0)


def rank_order(rank: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", rank)) or (-1,)


def to_float(text: str) -> float | None:
    try:
        return float(text.strip().strip("'\""))
    except ValueError:
        return None
