"""What the log does not print, solved from the logged result, and what would change the
result: the value of the parameter that gives a number of tokens, or that uses the memory the
log shows left free at the end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tracer.analyses.explain.arith import number, solve
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.evaluate import Evaluation, Formula
from tracer.analyses.explain.explanation import Explanation, WhatIf
from tracer.analyses.explain.match import Observation


def solve_missing(
    formula: Formula,
    bindings: dict[str, Binding],
    observed: list[Observation],
    evaluations: list[Evaluation],
) -> list[Evaluation] | None:
    """The evaluations again with the first value they lack solved from the logged result (the
    first of OBSERVED), its binding replaced in BINDINGS; None when it cannot be solved."""
    # The value that stops the evaluation first; with the logged result, one is solvable.
    first = next((e for e in evaluations if e.value is None), None)
    unbound = bindings.get(first.missing) if first is not None else None
    target = observed[0].value if observed else None
    if unbound is None or unbound.value is not None or target is None:
        return None
    name = unbound.name

    def result_with(value: float) -> float:
        values = formula.evaluate({name: value}, record=False)
        end = values[-1].value
        return end if end is not None else float("nan")

    solved = solve(result_with, target, 1e-9, 1e15)
    if solved is None:
        return None
    # A whole number near the solution that gives the logged result exactly, if any.
    near = range(round(solved) - 8, round(solved) + 9)
    exact = [n for n in near if n > 0 and result_with(n) == target]
    shown = min(exact, key=lambda n: abs(n - solved)) if exact else solved
    old = bindings[name]
    bindings[name] = Binding(
        name,
        float(shown),
        "solved",
        f"not printed; solved from the logged result {number(target)} "
        f"({observed[0].where}): the value that makes the formula give it",
    )
    del old
    return formula.evaluate({})


def decide_by_count(
    formula: Formula,
    bindings: dict[str, Binding],
    observed: list[Observation],
    evaluations: list[Evaluation],
) -> list[Evaluation] | None:
    """Where the formula cannot give the logged count exactly (a value solved from it lands
    near it, not on it) with a setting the code computes through a condition the log cannot
    decide (taken as false), the evaluations with that condition true instead, when the
    formula then gives the count exactly: the log's own count decides the condition. None
    when no such condition does."""
    target = observed[0].value if observed else None
    if target is None or not evaluations or evaluations[-1].value in (None, target):
        return None
    solved = [name for name, b in bindings.items() if b.how == "solved"]
    for name, setting in list(bindings.items()):
        computed = setting.computed
        if computed is None:
            continue
        for assumed in computed.assumed:
            value = assumed.otherwise
            if not isinstance(value, int | float) or isinstance(value, bool):
                continue
            kept = {n: bindings[n] for n in (name, *solved)}
            why = (
                f"{setting.why}; with `{assumed.condition}` (line {assumed.line}) true: taken "
                f"as false it gives {number(setting.value or 0)}, and the formula cannot then "
                f"give the logged {number(target)}"
            )
            bindings[name] = replace(setting, value=float(value), why=why)
            for n in solved:
                bindings[n] = replace(kept[n], value=None, how="unbound")
            again = solve_missing(formula, bindings, observed, formula.evaluate({}, record=False))
            if again is not None and again[-1].value == target:
                return again
            bindings.update(kept)
    return None


def what_ifs(
    formula: Formula,
    bindings: dict[str, Binding],
    param: str,
    tokens: int | None,
    explanation: Explanation,
) -> list[WhatIf]:
    """The value of PARAM that gives TOKENS tokens (if given), and the one that uses the memory
    left free at the end."""
    knob = next((n for n in bindings if n.rsplit(".", 1)[-1] == param), None)
    if knob is None or bindings[knob].value is None:
        return []
    current = bindings[knob].value
    out: list[WhatIf] = []
    # A fraction is searched in [0, 1]; another knob up to a few times its value.
    high = 1.0 if 0 < current <= 1 else max(1.0, 4 * abs(current))

    def result_with(value: float, index: int = -1) -> float:
        values = formula.evaluate({knob: value}, record=False)
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
