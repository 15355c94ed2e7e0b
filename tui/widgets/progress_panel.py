"""Shown while the source is fetched, indexed or traced: what is running, and how far."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar


class ProgressPanel(Horizontal):
    def compose(self) -> ComposeResult:
        yield Label(id="progress-label")
        yield ProgressBar(id="progress-bar", show_eta=False)

    def start(self, what: str, total: int | None = None) -> None:
        self.query_one(Label).update(what)
        self.query_one(ProgressBar).update(total=total, progress=0)
        self.display = True

    def advance(self, what: str, done: int, total: int) -> None:
        self.query_one(Label).update(what)
        self.query_one(ProgressBar).update(total=total, progress=done)

    def stop(self) -> None:
        self.display = False
