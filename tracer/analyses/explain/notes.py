"""Notes an explanation gives in one line each: what the formula gives alone, the lines that
match a logging call loosely or none at all, and the starts a log holds."""

from __future__ import annotations

from tracer.analyses.explain.arith import number
from tracer.analyses.explain.evaluate import Evaluation
from tracer.analyses.explain.starts import END, Start
from tracer.analyses.explain.survey import Survey

SHOWN_ENDS = 5  # the starts a note names at each end of a long list


def formula_alone(evaluations: list[Evaluation]) -> str:
    """What the formula gives by itself, or what it lacks to give anything."""
    if evaluations and evaluations[-1].value is not None:
        return number(evaluations[-1].value)
    stop = next((ev for ev in evaluations if ev.value is None and ev.missing), None)
    return f"no number ({stop.missing} is not in the log)" if stop else "no number"


def loose_notes(found: Survey) -> list[str]:
    """One note per logging call that lines matched loosely: what they show that the call
    does not print, what it prints that they do not show."""
    notes: list[str] = []
    for (path, line), call in found.loose_calls.items():
        first = call.first
        assert first.loose is not None
        differs = []
        if first.loose.extra:
            differs.append("it also shows " + ", ".join(first.loose.extra))
        if first.loose.missing:
            differs.append("it does not show " + ", ".join(first.loose.missing))
        if first.loose.reordered:
            differs.append("its fields in another order")
        count = f"{call.count} lines" if call.count > 1 else "1 line"
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


def unmatched_note(found: Survey) -> list[str]:
    """Lines in the server's own format that no logging call of the source prints: a log
    from another build loses values that way."""
    first = found.first_missed
    if first is None or found.missed == found.server:
        return []
    return [
        f"{found.missed} of the log's {found.server} server lines match no logging call of this "
        f"source (first: log line {first.number}, {first.message.strip()[:60]!r}); a log from "
        "another build of the server loses those values"
    ]


def starts_note(starts: list[Start], start: Start) -> str:
    end = f"to log line {start.end - 1}" if start.end < END else "to the end"
    at: dict[str, list[str]] = {}
    for each in starts:
        at.setdefault(each.marker, []).append(str(each.at))
    begun = "; ".join(
        f"{marker} at log line{'s' if len(lines) > 1 else ''} {', '.join(shortened(lines))}"
        for marker, lines in at.items()
    )
    return (
        f"the log holds {len(starts)} server starts (each begins with {begun}); start "
        f"{start.number} (log lines {start.begin} {end}) is explained, with its own lines "
        "only: --start N explains another"
    )


def shortened(numbers: list[str]) -> list[str]:
    """NUMBERS, or their first and last few when there are many (a log of many restarts)."""
    if len(numbers) <= 2 * SHOWN_ENDS:
        return numbers
    return [*numbers[:SHOWN_ENDS], "...", *numbers[-SHOWN_ENDS:]]
