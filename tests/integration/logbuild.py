"""Server logs built from a release's own logging templates, with chosen numbers: each line is
printed by the logging call whose literal text is given, its holes filled in order."""

from __future__ import annotations

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


def template_for(session: Session, literal: str) -> Template:
    """The logging call of the release that prints LITERAL (the first, in path order)."""
    # Implicit concatenation splits a message in the source: grep its first sentence.
    needle = re.split(r"(?<=[.,:=])\s|\{", literal)[0]
    for path in session.snapshot.grep(needle):
        for template in file_templates(path, session.snapshot.read(path)):
            text = "".join(p for p in template.parts if isinstance(p, str))
            if all(piece in text for piece in literal.split("{}")):
                return template
    raise AssertionError(f"no logging call prints {literal!r}")


def printed(template: Template, values: list[object]) -> str:
    """The line TEMPLATE prints with its holes holding VALUES, in order."""
    queue = list(values)
    out: list[str] = []
    for part in template.parts:
        if isinstance(part, Hole):
            out.append(format(queue.pop(0), part.spec))
        elif isinstance(part, tuple):
            out.append(part[0])
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
        message = printed(template_for(session, literal), values) if values else literal
        out.append(f"[{time}{tags}] {message}")
    return "\n".join(out) + "\n"
