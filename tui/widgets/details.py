"""The details pane: the step's code, the edges in and out (why the tracer went there), and
how sure the chain is of the step. The edge list picks the edge `enter` follows."""

from __future__ import annotations

from pathlib import PurePosixPath

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tracer.views.terminal import visible
from tui.kinds import look_of
from tui.outline import Link, Outline, reason
from tui.walker import highlight_lines


class EdgeList(OptionList):
    BINDINGS = [
        Binding("up", "cursor_up", "Up", show=True),
        Binding("down", "cursor_down", "Down", show=True),
        Binding("enter", "select", "Follow edge", show=True),
    ]


class Details(Vertical):
    class LinkChosen(Message):
        """An edge was chosen (enter or click on it) to be followed."""

        def __init__(self, link: Link) -> None:
            super().__init__()
            self.link = link

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.links: list[Link] = []

    def compose(self) -> ComposeResult:
        yield Static(id="step-heading")
        yield Static(id="step-code")
        yield Static(id="step-values")
        yield Static(id="step-confidence")
        yield EdgeList(id="edges")

    def show_step(self, view: Outline, step_id: str, values: Text | None = None) -> None:
        step = view.step(step_id)
        kind = view.kind_of(step_id)
        look = look_of(kind)
        heading = Text()
        heading.append(f"{look.glyph} {look.word}", style=look.colour)
        if kind != step.kind:
            heading.append(f" ({step.kind})", style="dim")
        heading.append(visible(f"  {step.symbol or '<module>'}"), style="bold")
        span = f"{step.line}" if step.end_line == step.line else f"{step.line}-{step.end_line}"
        heading.append(visible(f"  {step.file}:{span}"), style="dim")
        number = view.spine_number(step_id)
        if number is not None:
            heading.append(f"  spine step {number} of {len(view.chain.spine)}", style="bold")
        self.query_one("#step-heading", Static).update(heading)
        self.query_one("#step-code", Static).update(numbered(step.code, step.line))
        shown = self.query_one("#step-values", Static)
        shown.update(values or "")
        shown.display = values is not None
        confidence = view.confidence(step_id)
        sure = Text(f"confidence {confidence:.1f}", style="bold")
        if confidence < 1.0:
            sure.append("  guessed: reached by a name-only match", style="italic red")
        self.query_one("#step-confidence", Static).update(sure)
        self.show_links(view, step_id)

    def show_links(self, view: Outline, step_id: str) -> None:
        self.links = view.incoming(step_id) + view.outgoing(step_id)
        edges = self.query_one(EdgeList)
        edges.clear_options()
        edges.add_options(Option(link_label(view, link)) for link in self.links)
        if not self.links:
            edges.add_option(Option(Text("no edges in this chain", style="dim"), disabled=True))
            return
        chosen = view.default_link(step_id)
        edges.highlighted = self.links.index(chosen) if chosen in self.links else 0

    @property
    def chosen_link(self) -> Link | None:
        highlighted = self.query_one(EdgeList).highlighted
        if highlighted is None or highlighted >= len(self.links):
            return None
        return self.links[highlighted]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_index < len(self.links):
            self.post_message(self.LinkChosen(self.links[event.option_index]))


def link_label(view: Outline, link: Link) -> Text:
    """`→ to   ▸ param ModelRunner.__init__ model_runner.py:109  argument bound to ...`"""
    other = view.step(link.other)
    look = look_of(view.kind_of(other.id))
    label = Text(overflow="ellipsis")
    label.append("→ to   " if link.outgoing else "← from ", style="bold")
    label.append(f"{look.glyph} {look.word} ", style=look.colour)
    label.append(visible(f"{other.symbol or '<module>'}  "))
    label.append(visible(f"{PurePosixPath(other.file).name}:{other.line}"), style="dim")
    label.append(f"\n        {visible(reason(link.edge))}", style="italic dim")
    return label


def numbered(code: str, first: int) -> Text:
    """CODE highlighted, each line after its number in the file."""
    lines = highlight_lines(code)
    width = len(str(first + len(lines) - 1))
    text = Text()
    for number, line in enumerate(lines, first):
        text.append(f"{number:>{width}} ", style="dim")
        text.append_text(line)
        text.append("\n")
    text.rstrip()
    return text
