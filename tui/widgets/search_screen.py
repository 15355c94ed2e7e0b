"""The `/` screen: type a parameter name, pick from the names the index knows."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from tracer.views.terminal import visible

SHOWN_MATCHES = 50

Complete = Callable[[str], list[str]]


class PrefixSuggester(Suggester):
    """Suggests the shortest known name that starts with what was typed."""

    def __init__(self, complete: Complete) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.complete = complete

    async def get_suggestion(self, value: str) -> str | None:
        found = self.complete(value)
        return found[0] if found else None


class SearchScreen(ModalScreen[str | None]):
    """Dismissed with the chosen name, or None."""

    BINDINGS = [
        Binding("escape", "dismiss_none", "Cancel"),
        Binding("down", "focus_matches", "Matches", show=False),
    ]

    def __init__(self, complete: Complete, value: str = "") -> None:
        super().__init__()
        self.complete = complete
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="search-box") as box:
            box.border_title = "trace a parameter"
            yield Input(
                value=self.value,
                placeholder="mem_fraction_static, ServerArgs.mem_fraction_static, ...",
                suggester=PrefixSuggester(self.complete),
                id="search-input",
            )
            yield OptionList(id="search-matches")
            yield Label("enter traces · tab/→ completes · ↓ picks from the list · esc cancels")

    def on_mount(self) -> None:
        self.show_matches(self.value)

    @on(Input.Changed)
    def on_input_changed(self, event: Input.Changed) -> None:
        self.show_matches(event.value)

    def show_matches(self, value: str) -> None:
        matches = self.query_one(OptionList)
        matches.clear_options()
        found = self.complete(value)[:SHOWN_MATCHES]
        matches.add_options(Option(Text(visible(name)), id=name) for name in found)

    @on(Input.Submitted)
    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    @on(OptionList.OptionSelected)
    def on_match_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_focus_matches(self) -> None:
        matches = self.query_one(OptionList)
        if matches.option_count:
            matches.focus()
            matches.highlighted = 0

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
