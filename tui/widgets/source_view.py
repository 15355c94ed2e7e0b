"""The source pane: one file, highlighted, scrolled to the current step; the step's lines
lit, the other steps of the chain in this file marked in the gutter."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tracer.views.terminal import visible
from tui.kinds import look_of

LINE_NUMBER_WIDTH = 5
GUTTER_WIDTH = 1 + LINE_NUMBER_WIDTH + 3  # mark, number, " │ "


class SourceView(ScrollView, can_focus=False):
    COMPONENT_CLASSES = {
        "source-view--gutter",
        "source-view--step",
        "source-view--step-gutter",
    }

    class LineClicked(Message):
        """A line of the file was clicked (1-based)."""

        def __init__(self, path: str, line: int) -> None:
            super().__init__()
            self.path = path
            self.line = line

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.path = ""
        self.lines: list[Text] = []
        self.span = (0, 0)  # the current step's first and last line, 1-based
        self.marks: dict[int, str] = {}  # line -> kind of a chain step there
        self.strips: LRUCache[int, Strip] = LRUCache(1024)

    def show(
        self, path: str, lines: list[Text], span: tuple[int, int], marks: dict[int, str]
    ) -> None:
        """Show LINES of PATH with SPAN lit and scrolled into view, MARKS in the gutter."""
        self.path, self.lines, self.span, self.marks = path, lines, span, marks
        self.strips.clear()
        width = max((line.cell_len for line in lines), default=0)
        self.virtual_size = Size(width + GUTTER_WIDTH, len(lines))
        self.border_title = Text(visible(path))
        self.refresh()
        self.centre()

    def centre(self, tries: int = 20) -> None:
        """Put the current step a third of the way down the pane; until the pane is laid out
        for this file (the scroll did not land), try again after the next refresh."""
        first, last = self.span
        height = self.scrollable_content_region.height
        top = max(0, first - 1 - max(0, min(height // 3, height - (last - first + 1))))
        top = min(top, max(0, len(self.lines) - height))
        self.scroll_to(x=0, y=top, animate=False, immediate=True)
        if (height == 0 or self.scroll_offset.y != top) and tries:
            self.call_after_refresh(self.centre, tries - 1)

    def on_resize(self) -> None:
        self.centre()

    @property
    def highlighted_lines(self) -> range:
        return range(self.span[0], self.span[1] + 1)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, base)
        strip = self.strips.get(index)
        if strip is None:
            strip = self.code_strip(index)
            self.strips[index] = strip
        code = strip.crop(scroll_x, scroll_x + max(0, width - GUTTER_WIDTH)).apply_style(base)
        lit = index + 1 in self.highlighted_lines
        if lit:
            step_style = self.get_component_rich_style("source-view--step")
            code = Strip(Segment.apply_style(code, post_style=step_style))
            code = code.extend_cell_length(width - GUTTER_WIDTH, base + step_style)
        return Strip.join([self.gutter_strip(index + 1, lit), code]).adjust_cell_length(width, base)

    def code_strip(self, index: int) -> Strip:
        return Strip(list(self.lines[index].render(self.app.console)))

    def gutter_strip(self, line: int, lit: bool) -> Strip:
        style = self.get_component_rich_style(
            "source-view--step-gutter" if lit else "source-view--gutter"
        )
        kind = self.marks.get(line)
        mark = Segment(" ", style)
        if kind is not None:
            look = look_of(kind)
            mark = Segment(look.glyph, style + Style.parse(look.colour))
        number = Segment(f"{line:>{LINE_NUMBER_WIDTH}} │", style)
        return Strip([mark, number, Segment(" ", self.rich_style)])

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self.path:
            return
        line = self.scroll_offset.y + offset.y + 1
        if line <= len(self.lines):
            self.post_message(self.LineClicked(self.path, line))
