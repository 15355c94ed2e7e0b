"""The `e` screen: pick an export format and a file name for the current chain."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from tui.walker import ExportFormat


class ExportScreen(ModalScreen[tuple[ExportFormat, Path] | None]):
    """Dismissed with the format and the path to write, or None."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, formats: tuple[ExportFormat, ...], stem: str) -> None:
        super().__init__()
        self.formats = formats
        self.stem = stem

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box") as box:
            box.border_title = "export the chain"
            yield OptionList(
                *(Option(f"{form.name}  ({form.suffix})", id=form.name) for form in self.formats),
                id="export-formats",
            )
            yield Input(value=self.file_name(self.formats[0]), id="export-path")
            yield Label("↑↓ format · tab file name · enter writes · esc cancels")

    def on_mount(self) -> None:
        formats = self.query_one(OptionList)
        formats.highlighted = 0
        formats.focus()

    def file_name(self, form: ExportFormat) -> str:
        return f"{self.stem}{form.suffix}"

    @property
    def chosen(self) -> ExportFormat:
        highlighted = self.query_one(OptionList).highlighted or 0
        return self.formats[highlighted]

    @on(OptionList.OptionHighlighted)
    def on_format_highlighted(self) -> None:
        path = self.query_one(Input)
        if Path(path.value).stem == self.stem:  # keep a name the user typed
            path.value = self.file_name(self.chosen)

    @on(OptionList.OptionSelected)
    @on(Input.Submitted)
    def on_chosen(self) -> None:
        value = self.query_one(Input).value.strip()
        self.dismiss((self.chosen, Path(value)) if value else None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
