"""Server logs built from a release's own logging templates, with chosen numbers: each line is
printed by the logging call whose literal text is given, its holes filled in order."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from pathlib import Path

from tracer.analyses.explain.templates import Hole, Template, file_templates
from tracer.session import Session


def real_logs() -> Path:
    """Where the startup logs SGLang users posted are kept (never copied into the project):
    the folder SGTRACE_REAL_LOGS names, else ../shared/logs beside the checkout, else beside
    the checkout this one was cloned from (CI runs on a fresh clone)."""
    named = os.environ.get("SGTRACE_REAL_LOGS")
    if named:
        return Path(named)
    checkout = Path(__file__).resolve().parents[2]
    candidates = [checkout.parent / "shared" / "logs"]
    origin = subprocess.run(
        ["git", "-C", str(checkout), "config", "--get", "remote.origin.url"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if origin and Path(origin).is_dir():
        candidates.append(Path(origin).resolve().parent / "shared" / "logs")
    return next((c for c in candidates if c.is_dir()), candidates[0])


REAL_LOGS = real_logs()
# Where a message's literal text is cut: holes, and the spaces after punctuation.
PIECE = re.compile(r"\{\}|(?<=[.,:=])\s")


def template_for(session: Session, literal: str) -> Template:
    """The logging call of the release that prints LITERAL (the first, in path order). `{}`
    in LITERAL stands for a hole; a choice between literals (`'a' if x else 'b'`) is read as
    the one LITERAL shows."""
    # Implicit concatenation and choices split a message in the source: grep its longest piece
    # that the source holds as it is, trying the longer ones first.
    pieces = sorted(PIECE.split(literal), key=len, reverse=True)
    for needle in [p.strip() for p in pieces if len(p.strip()) >= 3]:
        for path in session.snapshot.grep(needle):
            for template in file_templates(path, session.snapshot.read(path)):
                if choices_for(template, literal) is not None:
                    return template
    raise AssertionError(f"no logging call prints {literal!r}")


def choices_for(template: Template, literal: str) -> list[str] | None:
    """The literal alternative of each choice in TEMPLATE with which it prints LITERAL's
    pieces in order, or None when it cannot print them."""
    options = [p for p in template.parts if isinstance(p, tuple)]
    for chosen in itertools.product(*options):
        queue = list(chosen)
        text = "".join(
            "{}" if isinstance(p, Hole) else queue.pop(0) if isinstance(p, tuple) else p
            for p in template.parts
        )
        if re.search(".*?".join(map(re.escape, literal.split("{}"))), text, re.S):
            return list(chosen)
    return None


def printed(template: Template, values: list[object], literal: str = "") -> str:
    """The line TEMPLATE prints with its holes holding VALUES, in order, and its choices those
    LITERAL shows (their first when it shows none)."""
    queue = list(values)
    choices = choices_for(template, literal) or [
        p[0] for p in template.parts if isinstance(p, tuple)
    ]
    out: list[str] = []
    for part in template.parts:
        if isinstance(part, Hole):
            out.append(format(queue.pop(0), part.spec))
        elif isinstance(part, tuple):
            out.append(choices.pop(0))
        else:
            out.append(part)
    assert not queue, f"{len(queue)} values left over for {template.literal!r}"
    return "".join(out)


def build_log(
    session: Session, lines: list[tuple[str, str, list[object]]], time: str = "2026-11-29 10:00:00"
) -> str:
    """LINES are (rank tags or "", literal of the logging call or raw text, values)."""
    out = []
    for rank, literal, values in lines:
        tags = f" {rank}" if rank else ""
        message = printed(template_for(session, literal), values, literal) if values else literal
        out.append(f"[{time}{tags}] {message}")
    return "\n".join(out) + "\n"
