"""What a server log says about the steps of a chain: for each step of the explained formula,
its expression with the logged values in and its value (from `tracer.analyses.explain.explain`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from tracer.analyses.explain.arith import number
from tracer.views.terminal import visible

if TYPE_CHECKING:
    from tracer.analyses.explain.explain import Explanation

HOW_STYLE = {"solved": "italic yellow", "unbound": "bold red", "derived": "italic"}


def values_by_step(explanation: Explanation) -> dict[str, Text]:
    """Step id -> the lines the details pane shows under the step's code; what they quote of
    the tree and the log made `visible`."""
    found: dict[str, Text] = {}
    rank = f" ({explanation.rank})" if explanation.rank else ""
    for index, evaluation in enumerate(explanation.evaluations):
        text = Text()
        text.append(f"from the log{rank}: ", style="bold green")
        if evaluation.value is None:
            text.append(visible(f"{evaluation.target} = ?"), style="bold")
            missing = evaluation.missing or "the step before"
            text.append(f"  ({missing} has no value)", style="dim")
        else:
            shown = evaluation.shown
            if shown and shown != number(evaluation.value):
                text.append(visible(f"{evaluation.target} = {shown} = "))
            else:
                text.append(visible(f"{evaluation.target} = "))
            text.append(number(evaluation.value), style="bold")
        if index == 0:
            for binding in explanation.bindings.values():
                value = "?" if binding.value is None else number(binding.value)
                mark = "≈" if binding.how == "solved" else "="
                text.append(visible(f"\n  {binding.name} {mark} {value}"), style="bold")
                text.append(f"  {binding.how}", style=HOW_STYLE.get(binding.how, "dim"))
                if binding.observation is not None:
                    text.append(visible(f", {binding.observation.where}"), style="dim")
            for observation in explanation.observed[:1]:
                text.append("\n  the log reports ", style="dim")
                text.append(visible(observation.line.message.strip()), style="italic")
        found[evaluation.step.id] = text
    return found
