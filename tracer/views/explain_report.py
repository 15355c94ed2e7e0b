"""An explanation as text for people and as JSON for programs."""

from __future__ import annotations

import math

from tracer.analyses.explain.arith import Unbound, evaluate, number, statement_value
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.check import Sizes, other_sizes, verdict
from tracer.analyses.explain.defaults import Computed
from tracer.analyses.explain.evaluate import Evaluation, expression_text
from tracer.analyses.explain.explanation import Explanation
from tracer.analyses.explain.match import Observation
from tracer.views.terminal import visible

UNIT_LITERALS = ("1 << 30", "1<<30", "2**30", "2 ** 30", "1024**3", "1024 ** 3")


def explanation_text(e: Explanation) -> str:
    """E for people; what it quotes of the tree and the log made `visible`."""
    out: list[str] = []
    ranks = f"rank {e.rank}" if e.rank else "no rank tags"
    if len(e.ranks) > 1:
        ranks += f" (of {', '.join(e.ranks)}; --rank picks another)"
    out.append(
        f"{e.source} · {e.param} · {ranks} · {e.matched_lines} of {e.log_lines} log lines "
        "printed by this source's logging calls"
    )
    out.append(verdict(e).line)
    first = e.evaluations[0].step
    out.append(f"\nThe formula ({first.file}:{first.line}, {first.symbol}):")
    for evaluation in e.evaluations:
        out.extend(step_lines(evaluation))
    if e.onward:
        out.append(
            "  then, on the branches the settings select, to the value the pool is built with:"
        )
        for evaluation in e.onward:
            out.extend(step_lines(evaluation))
    if e.observed:
        out.append("\nWhat the log reports:")
        for observation in e.observed[:3]:
            out.append(f"  {observation.line.message.strip()}   [{observation.where}]")
            check = sizes_check(e, observation)
            if check:
                out.append(f"    {check}")
        out.append(f"  {result_check(e)}")
    out.append("\nWhere each value comes from:")
    for binding in e.bindings.values():
        out.extend(binding_lines(binding))
    reserve = reserve_line(e)
    if reserve:
        out.append("\n" + reserve)
    for note in notes(e):
        out.append("\nNote: " + note)
    if e.timeline:
        steps = " → ".join(f"{label(o)} {number(o.value or 0)}" for o in e.timeline)
        out.append(f"\nFree memory as logged ({e.rank or 'the log'}): {steps}")
    if e.what_if:
        out.append("\nWhat would change it:")
        for what in e.what_if:
            if what.value is None:
                out.append(f"  {what.question}: {what.why}")
                continue
            out.append(
                f"  {what.question}: {what.knob.rsplit('.', 1)[-1]} = {what.value:.3f} "
                f"→ {number(what.result or 0)}   ({what.why})"
            )
    return visible("\n".join(out))


def step_lines(evaluation: Evaluation) -> list[str]:
    step = evaluation.step
    where = f"{step.file.rsplit('/', 1)[-1]}:{step.line}"
    head = f"{evaluation.target} = " if evaluation.target and step.kind != "return" else ""
    if step.kind == "return":
        head = "return "
    lines = [f"  {head}{evaluation.expression}   [{where}, {step.kind}]"]
    pad = " " * (2 + len(head))
    if evaluation.value is None:
        missing = evaluation.missing or "the step before"
        lines.append(f"{pad}= ?   ({missing} has no value)")
    elif evaluation.shown and evaluation.shown != number(evaluation.value):
        lines.append(f"{pad}= {evaluation.shown}")
        lines.append(f"{pad}= {number(evaluation.value)}")
    else:
        lines.append(f"{pad}= {number(evaluation.value)}")
    return lines


def binding_lines(binding: Binding) -> list[str]:
    value = "?" if binding.value is None else number(binding.value)
    mark = "≈" if binding.how == "solved" else "="
    lines = [f"  {binding.name} {mark} {value}   ({binding.how}) {binding.why}"]
    if binding.per_rank:
        ranks = ", ".join(f"{rank} {number(v)}" for rank, v in binding.per_rank)
        lines.append(f"      per rank: {ranks}")
    return lines


def fitted(e: Explanation) -> list[str]:
    """Values solved from the logged result: with them the result agrees by construction."""
    return [b.name for b in e.bindings.values() if b.how == "solved"]


def result_check(e: Explanation) -> str:
    logged = e.observed[0].value if e.observed else None
    if e.result is None or logged is None:
        return "the formula gives no value to set beside the logged one"
    if fitted(e):
        return (
            f"the formula gives {number(e.result)} as logged, by construction: "
            f"{', '.join(fitted(e))} was solved from that number (the sizes are the check)"
        )
    gap = e.result - logged
    if abs(gap) <= max(1.0, abs(e.result) * 1e-3):
        return f"the formula gives {number(e.result)}: it matches the logged value"
    return f"the formula gives {number(e.result)}: {number(abs(gap))} off the logged value"


def sizes_check(e: Explanation, observation: Observation) -> str:
    """The sizes the line prints (K + V) against the memory the formula gives the pool."""
    sizes = other_sizes(observation)
    first = e.budget
    if not sizes or first is None or first.value is None:
        return ""
    check = Sizes(observation, tuple(sizes), first.target, first.value)
    verdict = "close" if check.close else "far apart: the logged sizes do not fit these values"
    return (
        f"sum of its sizes: {' + '.join(number(s) for s in sizes)} = {number(check.total)}, "
        f"against {first.target} = {number(first.value)} ({verdict})"
    )


def reserve_line(e: Explanation) -> str:
    """The part of the formula the parameter keeps back: `a - b` where b reads the parameter."""
    for evaluation in e.evaluations:
        node = statement_value(evaluation.step.code)
        if node is None or node.type != "binary_operator" or node.children[1].type != "-":
            continue
        kept = node.children[2]
        if e.param not in kept.text.decode():
            continue
        knob = next((b for b in e.bindings.values() if b.name.endswith(e.param)), None)
        values = {b.name: b.value for b in e.bindings.values() if b.value is not None}
        try:
            result = evaluate(kept, lambda name, _node, values=values: values.get(name))
        except Unbound:
            return ""
        text = expression_text(kept)
        return (
            f"The reserve: {text} = {result.shown} = {number(result.value)} is kept back "
            f"by {e.param}" + (f" = {number(knob.value)}" if knob and knob.value else "")
        )
    return ""


def notes(e: Explanation) -> list[str]:
    out: list[str] = list(e.notes)
    first = e.evaluations[0].step
    for binding in e.bindings.values():
        if binding.how not in ("measured", "derived") or binding.observation is None:
            continue
        if binding.at is None or binding.at.symbol == first.symbol:
            continue
        out.append(
            f"{binding.name} is not a fixed size: it is what {binding.function}() returned in "
            f"{binding.at.symbol} ({binding.at.file}:{binding.at.line}), before "
            f"{binding.observation.template.literal.strip()!r} was logged "
            f"({number(binding.value or 0)} here)."
        )
    units = [u for u in UNIT_LITERALS if any(u in ev.step.code for ev in e.evaluations)]
    if units:
        out.append(
            f"{units[0]} = {number(float(1 << 30))}: values are in GiB where the code "
            "divides or multiplies by it (the log's 'GB')."
        )
    if any(b.how == "unbound" for b in e.bindings.values()):
        out.append("some values are not in the log; give them with --set NAME=VALUE")
    return out


def explanation_json(e: Explanation) -> dict[str, object]:
    return {
        "source": e.source,
        "param": e.param,
        "rank": e.rank or None,
        "ranks": [r for r in e.ranks if r],
        "log_lines": e.log_lines,
        "matched_lines": e.matched_lines,
        "result": plain(e.result),
        "logged_result": plain(e.observed[0].value) if e.observed else None,
        "fitted": fitted(e),  # solved from the logged result: no check of the formula
        "reproduced": verdict(e).reproduced,  # the exit status: 0 if so, 1 if not
        "verdict": verdict(e).line,
        "start": e.start,
        "starts": e.starts,
        "steps": [step_json(ev) for ev in e.evaluations],
        "onward": [step_json(ev) for ev in e.onward],
        "bindings": [
            {
                "name": b.name,
                "value": b.value,
                "how": b.how,
                "why": b.why,
                "log_line": b.observation.line.number if b.observation else None,
                "loose": bool(b.observation and b.observation.loose),
                "per_rank": dict(b.per_rank),
                "computed": computed_json(b.computed) if b.computed else None,
            }
            for b in e.bindings.values()
        ],
        "observed": [observation_json(o) for o in e.observed],
        "timeline": [observation_json(o) for o in e.timeline],
        "what_if": [
            {"question": w.question, "knob": w.knob, "value": w.value, "result": w.result}
            for w in e.what_if
        ],
        "notes": notes(e),
    }


def step_json(ev: Evaluation) -> dict[str, object]:
    return {
        "file": ev.step.file,
        "line": ev.step.line,
        "kind": ev.step.kind,
        "symbol": ev.step.symbol,
        "code": ev.step.code,
        "target": ev.target,
        "expression": ev.expression,
        "evaluated": ev.shown,
        "value": plain(ev.value),
        "missing": ev.missing,
    }


def computed_json(c: Computed) -> dict[str, object]:
    """A default the code computes when the server starts: where, on which branches, from what."""
    return {
        "file": c.path,
        "line": c.write.line if c.write else None,
        "function": c.write.function if c.write else "",
        "code": c.write.code if c.write else "",
        "branch": [
            {"line": d.line, "condition": d.condition, "taken": d.taken} for d in c.decisions
        ],
        "inputs": [
            {"name": i.name, "value": json_value(i.value), "how": i.how, "why": i.why}
            for i in c.inputs
        ],
        "assumed_false": [
            {"line": a.line, "condition": a.condition, "unknown": a.unknown} for a in c.assumed
        ],
        "missing": c.missing,
    }


def json_value(value: object) -> object:
    return value if value is None or isinstance(value, bool | int | float | str) else repr(value)


def plain(value: float | None) -> float | int | None:
    """Whole numbers as integers in JSON (404890, not 404890.0)."""
    if value is not None and math.isfinite(value) and value == int(value) and abs(value) < 2**53:
        return int(value)
    return value


def observation_json(o: Observation) -> dict[str, object]:
    return {
        "log_line": o.line.number,
        "rank": o.line.rank,
        "message": o.line.message.strip(),
        "printed_by": f"{o.template.file}:{o.template.line}",
        "expression": o.hole.expr,
        "value": o.value,
        "derived": o.derived,
        "loose": o.loose,
    }


def label(observation: Observation) -> str:
    """`Load weight end · avail mem`: the line's first words and the words before the value."""
    parts = observation.template.parts
    head = next((p for p in parts if isinstance(p, str)), "").strip()
    head = head.split(". ")[0].rstrip(".:= ").strip()
    if observation.derived:
        return f"{head} · {observation.hole.expr} (derived)"
    before = ""
    for part in parts:
        if part == observation.hole:
            break
        if isinstance(part, str):
            before = part
    words = before.strip(" ,.").rsplit(". ", 1)[-1].rsplit(", ", 1)[-1].rstrip("=: ")
    return f"{head} · {words}" if words and words != head else head
