"""A reassignment the spine passes by: the spine's value handed to a method under a condition
and given back changed (`if hybrid: rest = self.split(rest)`, a state pool taking its share of
the memory before the KV pool is sized). The method is read from its code (`interpret.py`)
with the settings the log binds and the values the log prints by name; a value the code
computes from one unknown that the log prints is solved from it. The branch is taken when its
condition says so, or, when the condition cannot be known, when the log shows what the method
sets."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tree_sitter import Node

from tracer.analyses.explain.arith import number, solve, statement_value
from tracer.analyses.explain.classcode import Program, program, walk
from tracer.analyses.explain.interpret import Construction
from tracer.analyses.explain.interpvalues import (
    Fit,
    Raised,
    Returned,
    Surroundings,
    TooLong,
    Val,
    Write,
    nothing_logged,
)
from tracer.analyses.explain.logread import LogLine
from tracer.extract.parse import text
from tracer.graph.flow import FlowGraph
from tracer.graph.steps import Step
from tracer.sources.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class Reassigned:
    step: Step
    value: float | None  # what the variable holds after the step
    taken: bool
    expression: str
    shown: str
    why: str  # one line: whether the branch is taken, and what the method read


def passed_by(graph: FlowGraph, steps: list[Step]) -> list[tuple[int, Step]]:
    """(index in STEPS, step): reassignments of the variable STEPS[index - 1] binds that reach
    STEPS[index] too, from between the two in the same function (the spine took the other
    definition)."""
    out: list[tuple[int, Step]] = []
    for index in range(1, len(steps)):
        before, step = steps[index - 1], steps[index]
        if before.symbol != step.symbol or before.kind not in ("formula", "local_assign"):
            continue
        for edge in graph.edges(step.id, forward=False):
            other = graph.step(edge.src)
            if (
                edge.kind == "local"
                and edge.src != before.id
                and other.symbol == step.symbol
                and other.name == before.name
                and before.line < other.line < step.line
            ):
                out.append((index, other))
    return out


def reassigned(
    prog: Program, step: Step, previous: float | None, around: Surroundings
) -> Reassigned:
    """STEP (`name = self.method(name)`) evaluated with the variable holding PREVIOUS."""
    node = statement_value(step.code)
    expression = " ".join(text(node).split()) if node is not None else step.code
    if node is None or previous is None:
        return Reassigned(step, previous, False, expression, "", "")
    guard = guard_of(prog, step)
    local = {step.name: Val(previous, frozenset({step.name}))}
    decided = None
    if guard is not None:
        condition = Construction(prog, {}, no_external, frozenset(), fresh(around, {}))
        test = condition.value(guard, {})
        decided = None if not test.known else bool(test.value)
    where = f"{step.file.rsplit('/', 1)[-1]}:{step.line}"
    shown_guard = f"`{' '.join(text(guard).split())}`" if guard is not None else "its condition"
    if decided is False:
        return Reassigned(
            step, previous, False, expression, number(previous), f"{shown_guard} is false"
        )
    value, run, solved = evaluate(prog, node, local, around)
    if decided is None and not run.fits:
        return Reassigned(
            step,
            previous,
            False,
            expression,
            number(previous),
            f"{where} not taken: {shown_guard} is not known from the log, and the log shows "
            "nothing the call sets",
        )
    reads = [
        f"{fit.name} = {number(float(fit.value.value))} as the log prints it" for fit in run.fits
    ]
    reads += [f"{name} ≈ {number(u)} solved from it" for name, u in solved.items()]
    reads += [
        f"{name} = {shown(v.value)}"
        for name, v in sorted(around.bag.items())
        if name in value.deps and name not in {f.name for f in run.fits}
    ]
    taken = (
        f"{shown_guard} is true"
        if decided
        else f"{shown_guard} is not known from the log; taken, as the log prints what the call sets"
    )
    result = float(value.value) if value.known and is_number(value.value) else None
    why = f"{where} taken: {taken}; read from the code with " + ", ".join(reads)
    return Reassigned(
        step,
        result,
        True,
        expression,
        re.sub(rf"\b{re.escape(step.name)}\b", number(previous), expression),
        why,
    )


def onward(prog: Program, sink: Step, value: float, around: Surroundings) -> list[Write]:
    """The writes of SINK's attribute (`self.max_total_num_tokens = ...`) after SINK in its
    method, SINK's value being VALUE: the rest of the method read with the settings (a
    parameter named like a setting holds it), the branches they select taken, conditions
    that cannot be known taken as false."""
    method = prog.methods.get(sink.symbol.rsplit(".", 1)[-1])
    attribute = sink.name
    if method is None or not attribute:
        return []
    body = method.child_by_field_name("body")
    later = [n for n in body.named_children if n.start_point[0] + 1 > sink.end_line]
    local = {
        name: around.bag[name]
        for param in method.child_by_field_name("parameters").named_children
        if (name := text(param.child_by_field_name("name") or param)) in around.bag
    }
    run = fresh(around, {})
    reader = Construction(prog, {attribute: Val(value)}, no_external, frozenset(), run)
    reader.stack.append(sink.symbol)
    try:
        for statement in later:
            reader.statement(statement, local)
    except (Returned, Raised, TooLong):
        pass
    return [w for w in reader.run.history if w.field == attribute]


def evaluate(
    prog: Program, node: Node, local: dict[str, Val], around: Surroundings
) -> tuple[Val, Surroundings, dict[str, float]]:
    """NODE's value; when it reads one unknown through a value the log prints by name, that
    unknown solved from the printed value."""
    run = fresh(around, {})
    value = Construction(prog, {}, no_external, frozenset(), run).value(node, dict(local))
    solved: dict[str, float] = {}
    if value.known or not run.fits:
        return value, run, solved
    fit = run.fits[0]
    unknown = solve_fit(prog, fit, around)
    if unknown is None:
        return value, run, solved
    solved[fit.unknown] = unknown
    run = fresh(around, solved)
    value = Construction(prog, {}, no_external, frozenset(), run).value(node, dict(local))
    run.fits[:0] = [fit]
    return value, run, solved


def solve_fit(prog: Program, fit: Fit, around: Surroundings) -> float | None:
    target = fit.value.value
    if not is_number(target):
        return None

    def gives(u: float) -> float:
        inner = fresh(around, {fit.unknown: u})
        inner.logged = nothing_logged
        found = Construction(prog, {}, no_external, frozenset(), inner).value(
            fit.expression, dict(fit.local)
        )
        return float(found.value) if found.known and is_number(found.value) else math.nan

    return solve(gives, float(target), 1e-9, 1e15)  # type: ignore[arg-type]


def fresh(around: Surroundings, overrides: dict[str, float]) -> Surroundings:
    return Surroundings(around.bag_name, dict(around.bag), around.logged, dict(overrides))


def guard_of(prog: Program, step: Step) -> Node | None:
    """The condition of the innermost `if` around STEP's line in its method."""
    method = prog.methods.get(step.symbol.rsplit(".", 1)[-1])
    if method is None:
        return None
    best = None
    for node in walk(method):
        if node.type == "if_statement":
            first = node.start_point[0] + 1
            last = node.end_point[0] + 1
            if first < step.line <= last:
                best = node
    return best.child_by_field_name("condition") if best is not None else None


def no_external(name: str, call: str, line: int) -> Val | None:
    return None


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def shown(value: object) -> str:
    return number(float(value)) if is_number(value) else repr(value)  # type: ignore[arg-type]


class PassedBy:
    """The reassignments a formula's steps pass by, read against one start of a log: the
    settings the log binds (SETTINGS), the values its lines print by name (LINES)."""

    def __init__(
        self, snapshot: Snapshot, settings: tuple[str, dict[str, Val]], lines: list[LogLine]
    ) -> None:
        self.snapshot = snapshot
        self.bag_name = snake(settings[0])
        self.bag = settings[1]
        self.lines = lines
        self.ids: set[str] = set()
        self.programs: dict[tuple[str, str], Program | None] = {}
        self.done: dict[tuple[str, float | None], Reassigned] = {}
        self.later: dict[tuple[str, float], list[tuple[Step, Write]]] = {}

    def insert(
        self, graph: FlowGraph, steps: list[Step], holding: list[str]
    ) -> tuple[list[Step], list[str]]:
        """STEPS with the reassignments they pass by in place (HOLDING kept beside them)."""
        steps, holding = list(steps), list(holding)
        for index, step in reversed(passed_by(graph, steps)):
            steps.insert(index, step)
            holding.insert(index, "")
            self.ids.add(step.id)
        return steps, holding

    def evaluate(self, step: Step, previous: float | None) -> Reassigned:
        key = (step.id, previous)
        if key not in self.done:
            prog = self.program(step)
            if prog is None:
                expression = " ".join(step.code.split())
                self.done[key] = Reassigned(step, previous, False, expression, "", "")
            else:
                self.done[key] = reassigned(prog, step, previous, self.around())
        return self.done[key]

    def onward(self, graph: FlowGraph, sink: Step, value: float) -> list[tuple[Step, Write]]:
        """The writes of SINK's attribute after it in its method (page alignment, caps, a
        draft model's share), each with its step in GRAPH."""
        key = (sink.id + "#onward", value)
        if key not in self.later:
            prog = self.program(sink)
            writes = onward(prog, sink, value, self.around()) if prog is not None else []
            steps = {
                (s.file, s.line): s for s in map(graph.step, graph.attribute_writes(sink.name))
            }
            self.later[key] = [
                (steps[sink.file, w.line], w) for w in writes if (sink.file, w.line) in steps
            ]
        return self.later[key]

    def with_values(self, code: str, name: str, value: float) -> str:
        """CODE with `self.NAME` as VALUE and each setting it reads as the setting's value."""

        def setting(found: re.Match[str]) -> str:
            held = self.bag.get(found[1])
            return shown(held.value) if held is not None and held.known else found[0]

        code = re.sub(rf"\bself\.{re.escape(name)}\b", number(value), code)
        return re.sub(rf"\b(?:self\.)?{re.escape(self.bag_name)}\.(\w+)\b", setting, code)

    def program(self, step: Step) -> Program | None:
        klass = step.symbol.split(".")[0]
        if (step.file, klass) not in self.programs:
            self.programs[step.file, klass] = program(self.snapshot.read(step.file), klass)
        return self.programs[step.file, klass]

    def around(self) -> Surroundings:
        return Surroundings(self.bag_name, self.bag, self.logged)

    def logged(self, name: str) -> Val | None:
        """The value a line of the log prints labelled NAME (`name: 85292`, `name=85292`)."""
        label = re.compile(rf"(?<![\w.]){re.escape(name)}\s*[:=]\s*(?P<v>-?\d+(?:\.\d+)?)\b")
        for line in self.lines:
            found = label.search(line.message)
            if found is not None:
                raw = found["v"]
                return Val(float(raw) if "." in raw else int(raw), frozenset({name}))
        return None


def snake(klass: str) -> str:
    """The name code gives an object of KLASS: `server_args` for ServerArgs."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", klass).lower()
