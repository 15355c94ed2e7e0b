"""Shown while the source is fetched, indexed or traced: what is running, and how far."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar

from tracer.views.terminal import visible


class ProgressPanel(Horizontal):
    """One line per running job would be too much: the panel shows the latest job started
    and stays until every job has stopped."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.jobs: dict[str, str] = {}  # job -> what it is doing, in the order started

    def compose(self) -> ComposeResult:
        yield Label(id="progress-label")
        yield ProgressBar(id="progress-bar", show_eta=False)

    def start(self, job: str, what: str) -> None:
        """JOB began WHAT, of unknown length."""
        self.jobs.pop(job, None)
        self.jobs[job] = what
        self.query_one(Label).update(shown(what))
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.display = True

    def advance(self, job: str, what: str, done: int, total: int) -> None:
        self.jobs[job] = what
        self.query_one(Label).update(shown(what))
        self.query_one(ProgressBar).update(total=total, progress=done)
        self.display = True

    def stop(self, job: str) -> None:
        self.jobs.pop(job, None)
        if self.jobs:
            self.query_one(Label).update(shown(list(self.jobs.values())[-1]))
            self.query_one(ProgressBar).update(total=None)
        else:
            self.display = False


def shown(what: str) -> Text:
    """WHAT (it names sources, names and steps) `visible`, as text, not markup."""
    return Text(visible(what))
