"""The `?` screen: every key of the walk, and what the glyphs in the chain mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.kinds import KIND_LOOKS

KEYS = (
    ("up / down", "move between steps (between edges in the edge list)"),
    ("enter", "follow the selected edge to the step at its other end"),
    ("tab", "move between the chain and the edge list"),
    ("space", "fold or unfold a branch"),
    ("backspace", "go back to where you were before the last jump"),
    ("f", "re-centre: trace forward from the selected step"),
    ("b", "re-centre: trace backward to the selected step"),
    ("/", "trace another parameter (names complete from the index)"),
    ("e", "export the current chain"),
    ("?", "this help"),
    ("q", "quit"),
    ("mouse", "click a step, an edge, a marked line of the source, or a fold"),
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close"),
        Binding("q", "dismiss", "Close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = "sgtrace walk: keys"
            yield Static(keys_table())
            yield Static(kinds_table())

    def on_click(self) -> None:
        self.dismiss()


def keys_table() -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold")
    table.add_column()
    for key, what in KEYS:
        table.add_row(key, what)
    return table


def kinds_table() -> Table:
    table = Table(title="Steps", title_justify="left", box=None, show_header=False)
    table.add_column()
    table.add_column()
    for kind, look in KIND_LOOKS.items():
        table.add_row(Text(f"{look.glyph} {look.word}", style=look.colour), kind)
    table.add_row(Text("?0.5", style="italic red"), "guessed: reached by a name-only match")
    return table
