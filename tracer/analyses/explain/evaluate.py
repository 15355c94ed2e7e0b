"""The formula evaluated step by step with the values the log binds: each step's expression
with its values in (`arith.py` evaluates it), a value carried unchanged through parameters,
arguments, copies and objects, a reassignment the spine passes by (`split.py`), and the onward
steps from the sink's first value to the one the pool is built with."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from tracer.analyses.explain.arith import (
    Evaluated,
    Unbound,
    evaluate,
    number,
    statement_target,
    statement_value,
)
from tracer.analyses.explain.bind import PASS_THROUGH, Neutral
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.split import PassedBy
from tracer.analyses.explain.templates import calls_in
from tracer.graph.flow import FlowGraph
from tracer.graph.steps import Step


@dataclass(frozen=True, slots=True)
class Evaluation:
    step: Step
    target: str
    expression: str
    shown: str  # the expression with values in
    value: float | None
    missing: str = ""


class Formula:
    """The formula's steps (from the spine's first formula to the sink, with the steps a
    reassignment passes by), evaluated with what BIND binds each variable to."""

    def __init__(
        self,
        steps: list[Step],
        holding: list[str],
        passed: PassedBy,
        graph: FlowGraph,
        bind: Callable[[str, Step, bool, Neutral | None], Binding],
    ) -> None:
        self.steps = steps
        self.holding = holding  # per step: the attribute of an object it holds the value in
        self.passed = passed
        self.graph = graph
        self.bind = bind

    def evaluate(self, overrides: dict[str, float], record: bool = True) -> list[Evaluation]:
        """Each step's value, with OVERRIDES in place of what the log binds (RECORD: keep the
        bindings made on the way), and the onward steps after the sink."""
        steps = self.steps
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
                    carried: str = previous_name,
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
                    binding = self.bind(name, step, record, neutral(at, carried))
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


def neutral(node: Node, carried: str) -> Neutral | None:
    """What the value NODE reads does least to the value on its way (named CARRIED), where
    it adjusts it: a term added to it or taken from it (`carried - NODE`, `carried -= NODE`:
    0), a scale (`carried *= NODE`: 1), the step of a rounding down (`carried // NODE * NODE`:
    1); None otherwise (a divisor that turns bytes into tokens is what the logged count
    solves; `1 - NODE` is no adjustment of the value)."""
    parent = outer(node)
    if parent is None or not carried:
        return None
    right = parent.child_by_field_name("right")
    left = parent.child_by_field_name("left")
    operator = parent.child_by_field_name("operator")
    kind = operator.type if operator is not None else ""
    if right != node or left is None or not reads(left, carried):
        return None
    if kind in ("+", "-", "+=", "-="):
        return 0.0, "added to or taken from the value on its way: taken as 0"
    if kind in ("*=", "/=", "//="):
        return 1.0, "the value on its way is scaled by it: taken as 1"
    if kind == "//":
        rounding = outer(parent)
        if rounding is not None and rounding.type == "binary_operator":
            again = rounding.child_by_field_name("right")
            times = rounding.child_by_field_name("operator")
            if again is not None and again.text == node.text and times and times.type == "*":
                return 1.0, "the value is rounded down to a multiple of it: taken as 1"
    return None


def reads(node: Node, name: str) -> bool:
    """Does NODE read the name NAME (as a name or an attribute's last part)?"""
    if node.type == "identifier":
        return node.text.decode() == name
    if node.type == "attribute":
        attribute = node.child_by_field_name("attribute")
        if attribute is not None and attribute.text.decode() == name:
            return True
    return any(reads(child, name) for child in node.named_children)


def outer(node: Node) -> Node | None:
    """NODE's parent, through parentheses."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent


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
