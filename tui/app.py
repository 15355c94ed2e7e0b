"""`sgtrace walk`: the chain of a parameter in three panes (chain, source, details). The app
composes the widgets and runs the engine in worker threads, so the interface never waits on
a trace; the widgets only render what they are given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState, get_current_worker

from tracer.analyses.explain.arith import number
from tracer.errors import SgtraceError
from tracer.graph.steps import Step
from tracer.session import Session
from tracer.sources import NO_PACKAGE, PackageHint
from tracer.views.terminal import visible
from tracer.views.warnings import partly_indexed
from tui.logvalues import values_by_step
from tui.outline import Link, Outline
from tui.walker import EXPORT_FORMATS, ExportFormat, Walker
from tui.widgets.chain_tree import ChainTree
from tui.widgets.details import Details
from tui.widgets.export_screen import ExportScreen
from tui.widgets.help_screen import HelpScreen
from tui.widgets.progress_panel import ProgressPanel
from tui.widgets.search_screen import SearchScreen
from tui.widgets.source_view import SourceView

if TYPE_CHECKING:
    from tracer.analyses.explain.explain import Explanation

PROGRESS_STEPS = 100  # progress updates over a whole indexing run


@dataclass(frozen=True, slots=True)
class Place:
    """Where the walk was: a chain and a step in it."""

    view: Outline
    step_id: str


class WalkApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "sgtrace walk"
    ENABLE_COMMAND_PALETTE = False  # every command has its own key
    BINDINGS = [
        Binding("f", "recentre('forward')", "Forward from here"),
        Binding("b", "recentre('backward')", "Backward to here"),
        Binding("backspace", "back", "Back"),
        Binding("slash", "search", "Search"),
        Binding("e", "export", "Export"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        source: str,
        name: str | None = None,
        direction: str = "both",
        ssh_options: object | None = None,
        session: Session | None = None,
        log_text: str | None = None,
        sinks: Sequence[str] = (),
        explained: str | None = None,
        hint: PackageHint = NO_PACKAGE,
    ) -> None:
        """The walk of NAME in SOURCE; SINKS end the spines, EXPLAINED is the parameter whose
        formula LOG_TEXT is bound to, HINT the package a host holds (see Walker)."""
        super().__init__()
        self.log_text = log_text
        self.log_values: dict[str, Text] = {}
        self.walker = Walker(source, session, sinks, explained, hint)
        self.start_name = name
        self.direction = direction
        self.ssh_options = ssh_options
        self.view: Outline | None = None
        self.step_id: str | None = None
        self.history: list[Place] = []

    def compose(self) -> ComposeResult:
        yield Static(Text(visible(f"sgtrace walk {self.walker.source}")), id="status")
        with Horizontal(id="panes"):
            tree = ChainTree(id="chain")
            tree.border_title = "chain"
            yield tree
            with Vertical(id="right"):
                yield SourceView(id="source")
                details = Details(id="details")
                details.border_title = "details"
                yield details
        yield ProgressPanel(id="progress")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ChainTree).focus()
        self.open_source()

    # -- the engine, in worker threads -------------------------------------------------------

    @work(thread=True, group="open", exit_on_error=False)
    def open_source(self) -> None:
        """Fetch and index the source; trace the name given on the command line (or ask for
        one); read the names `/` completes."""
        source = self.walker.source
        self.from_worker(self.progress.start, "open", f"opening {source}")
        every = 1

        def progress(done: int, total: int) -> None:
            nonlocal every
            every = max(1, total // PROGRESS_STEPS)
            if done % every == 0 or done == total:
                self.from_worker(self.progress.advance, "open", f"indexing {source}", done, total)

        session = self.walker.open(progress, self.ssh_options)
        warnings = session.warnings()
        if warnings:
            self.from_worker(self.tell, partly_indexed(warnings), severity="warning")
        if self.start_name:
            name, direction = self.start_name, self.direction
            self.from_worker(
                self.trace_in_background,
                f"tracing {name}",
                lambda: self.walker.trace(name, direction),
            )
        if self.log_text is not None:
            self.from_worker(self.progress.start, "open", "binding the log to the formula")
            try:
                self.bind_log(self.walker.explain(self.log_text))
            except SgtraceError as error:
                self.from_worker(
                    self.tell, str(error), title="explain", severity="error", timeout=10
                )
        self.from_worker(self.progress.start, "open", "reading the names in the index")
        self.walker.names()
        self.from_worker(self.progress.stop, "open")
        if not self.start_name:
            self.from_worker(self.action_search)

    def trace_in_background(
        self, what: str, job: Callable[[], Outline], step_id: str | None = None
    ) -> None:
        """Run JOB (a trace) in a thread; show its chain when it is done, unless a newer
        trace was asked for meanwhile."""
        self.progress.start("trace", what)

        def run() -> None:
            view = job()
            self.from_worker(self.arrive, view, step_id)
            self.from_worker(self.progress.stop, "trace")

        self.run_worker(run, thread=True, group="trace", exclusive=True, exit_on_error=False)

    def from_worker(self, callback: Callable[..., object], *args: object, **kwargs: object) -> None:
        """Run CALLBACK in the interface's thread, unless the app or the worker has ended
        meanwhile (the engine cannot be interrupted; its late results are dropped)."""
        if self.is_running and not get_current_worker().is_cancelled:
            self.call_from_thread(callback, *args, **kwargs)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        self.progress.stop(event.worker.group)
        error = event.worker.error
        if isinstance(error, SgtraceError):
            self.tell(str(error), title="sgtrace", severity="error", timeout=10)
        else:
            self.tell(f"{type(error).__name__}: {error}", title="internal error", severity="error")

    def tell(
        self,
        message: str,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        """A notification of MESSAGE, which may quote a tree, a host or the user: `visible`,
        and read as text, not markup."""
        self.notify(visible(message), title=title, severity=severity, timeout=timeout, markup=False)

    def bind_log(self, explanation: Explanation) -> None:
        values = values_by_step(explanation)

        def show() -> None:
            self.log_values = values
            if self.step_id is not None:
                self.show_step(self.step_id)
            result = explanation.result
            self.notify(
                f"log bound: {explanation.matched_lines} of {explanation.log_lines} lines read; "
                f"the formula gives {'?' if result is None else number(result)}",
                title="explain",
            )

        self.from_worker(show)

    # -- showing chains and steps ------------------------------------------------------------

    @property
    def progress(self) -> ProgressPanel:
        return self.query_one(ProgressPanel)

    @property
    def current_step(self) -> Step | None:
        if self.view is None or self.step_id is None:
            return None
        return self.view.step(self.step_id)

    def arrive(self, view: Outline, step_id: str | None) -> None:
        """Show a newly traced chain, remembering where the walk was."""
        if self.view is not None and self.step_id is not None:
            self.history.append(Place(self.view, self.step_id))
        self.show_outline(view, step_id)

    def show_outline(self, view: Outline, step_id: str | None) -> None:
        self.view = view
        tree = self.query_one(ChainTree)
        tree.show_outline(view)
        if step_id not in view.steps:
            step_id = view.chain.spine[0] if view.chain.spine else view.chain.steps[0].id
        self.show_step(step_id)
        tree.select_step(step_id)

    def show_step(self, step_id: str) -> None:
        """Fill the source and details panes for STEP_ID (from memory: never waits)."""
        if self.view is None or step_id not in self.view.steps:
            return
        self.step_id = step_id
        view = self.view
        step = view.step(step_id)
        self.query_one(Details).show_step(view, step_id, self.log_values.get(step_id))
        marks = {s.line: view.kind_of(s.id) for s in view.in_file(step.file) if s.id != step_id}
        lines = self.walker.cached_lines(step.file)
        if lines is None:
            lines = []
            self.highlight_file(step.file)
        self.query_one(SourceView).show(step.file, lines, (step.line, step.end_line), marks)
        self.show_status()

    @work(thread=True, group="highlight", exit_on_error=False)
    def highlight_file(self, path: str) -> None:
        self.walker.source_lines(path)
        self.from_worker(self.refresh_source, path)

    def refresh_source(self, path: str) -> None:
        step = self.current_step
        if step is not None and step.file == path:
            self.show_step(step.id)

    def show_status(self) -> None:
        view = self.view
        if view is None:
            return
        chain = view.chain
        text = (
            f"{chain.param} in {view.source} · {chain.direction} · {len(chain.steps)} steps "
            f"in {len(view.files())} files · spine of {len(chain.spine)}"
        )
        if self.history:
            text += f" · back: {len(self.history)}"
        self.query_one("#status", Static).update(Text(visible(text)))

    def jump(self, step_id: str) -> None:
        """Go to another step of the same chain, remembering where the walk was."""
        if self.view is None or self.step_id is None or step_id == self.step_id:
            return
        self.history.append(Place(self.view, self.step_id))
        self.show_step(step_id)
        self.query_one(ChainTree).select_step(step_id)

    # -- messages from the widgets -----------------------------------------------------------

    def on_chain_tree_step_highlighted(self, event: ChainTree.StepHighlighted) -> None:
        if event.step_id != self.step_id:
            self.show_step(event.step_id)

    def on_details_link_chosen(self, event: Details.LinkChosen) -> None:
        self.follow(event.link)

    def on_source_view_line_clicked(self, event: SourceView.LineClicked) -> None:
        if self.view is None:
            return
        for step in self.view.in_file(event.path):
            if step.line <= event.line <= step.end_line:
                self.jump(step.id)
                return

    # -- keys --------------------------------------------------------------------------------

    def follow(self, link: Link | None) -> None:
        if link is None:
            self.notify("this step has no edge to follow", severity="warning")
            return
        self.jump(link.other)

    def action_follow(self) -> None:
        self.follow(self.query_one(Details).chosen_link)

    def action_back(self) -> None:
        if not self.history:
            self.notify("nothing to go back to", severity="warning")
            return
        place = self.history.pop()
        if place.view is not self.view:
            self.show_outline(place.view, place.step_id)
        else:
            self.show_step(place.step_id)
            self.query_one(ChainTree).select_step(place.step_id)
        self.show_status()

    def action_recentre(self, direction: str) -> None:
        step = self.current_step
        if step is None:
            return
        self.trace_in_background(
            f"tracing {direction} from {step.symbol}.{step.name or step.kind}",
            lambda: self.walker.recentre(step, direction),
            step.id,
        )

    def action_search(self) -> None:
        def chosen(name: str | None) -> None:
            if name:
                self.trace_in_background(f"tracing {name}", lambda: self.walker.trace(name))

        self.push_screen(SearchScreen(self.walker.complete), chosen)

    def action_export(self) -> None:
        view = self.view
        if view is None:
            self.notify("no chain to export yet", severity="warning")
            return

        def chosen(choice: tuple[ExportFormat, Path] | None) -> None:
            if choice is None:
                return
            form, path = choice
            try:
                written = self.walker.export(view, form, path)
            except OSError as error:
                self.tell(f"cannot write {path}: {error.strerror}", severity="error")
                return
            except SgtraceError as error:  # refused: another user's file, folder or link
                self.tell(str(error), severity="error")
                return
            self.tell(f"{form.name} written to {written}", title="export")

        stem = f"sgtrace-{view.param.replace('.', '-')}"
        self.push_screen(ExportScreen(EXPORT_FORMATS, stem), chosen)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())
