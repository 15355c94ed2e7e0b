"""The engine side of the walk: one session, the chains traced in it, the sources of their
files highlighted once, the names to complete. Synchronous and free of Textual: the app calls
it from worker threads, one engine call at a time."""

from __future__ import annotations

import bisect
import gc
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text

from tracer.errors import NameNotFound, SgtraceError
from tracer.graph.steps import Step
from tracer.session import Session, open_session
from tracer.sources import NO_PACKAGE, PackageHint
from tracer.sources.safe_write import write_file
from tracer.trace.chains import trace
from tracer.views.chain_text import chain_text, dumps
from tracer.views.graph_formats import chain_to_dot, chain_to_graphml, chain_to_mermaid
from tracer.views.terminal import visible
from tui.outline import Outline, outline, recentre_names

if TYPE_CHECKING:  # the explain view loads only when a log is given
    from tracer.analyses.explain.explain import Explanation

SYNTAX_THEME = "monokai"
MAX_MATCHES = 200


@dataclass(frozen=True, slots=True)
class ExportFormat:
    name: str
    suffix: str
    write: Callable[[Outline], str]


def json_export(view: Outline) -> str:
    return dumps(view.chain, view.source) + "\n"


def text_export(view: Outline) -> str:
    return chain_text(view.chain, view.source) + "\n"


# Text formats only: the walk writes what the picker chose as text (svg/png: `sgtrace export`).
EXPORT_FORMATS = (
    ExportFormat("json", ".json", json_export),
    ExportFormat("text", ".txt", text_export),
    ExportFormat("dot", ".dot", lambda view: chain_to_dot(view.chain)),
    ExportFormat("graphml", ".graphml", lambda view: chain_to_graphml(view.chain)),
    ExportFormat("mermaid", ".mmd", lambda view: chain_to_mermaid(view.chain)),
)


def highlight_lines(code: str) -> list[Text]:
    """CODE as highlighted lines, foreground only: the pane gives the background; `visible`
    (its lines kept, so line N is still the file's line N)."""
    code = visible(code)
    text = Syntax(code, "python", theme=SYNTAX_THEME).highlight(code)
    text.expand_tabs(4)
    plain: dict[Style, Style] = {}
    lines = text.split("\n", allow_blank=True)
    for line in lines:
        line.style = ""
        line.spans = [
            Span(span.start, span.end, without_background(span.style, plain)) for span in line.spans
        ]
    count = code.count("\n") + (not code.endswith("\n"))  # highlight() adds a last newline
    return lines[:count]


def without_background(style: str | Style, seen: dict[Style, Style]) -> Style:
    style = Style.parse(style) if isinstance(style, str) else style
    if style not in seen:
        seen[style] = Style(
            color=style.color, bold=style.bold, italic=style.italic, underline=style.underline
        )
    return seen[style]


def settle() -> None:
    """Keep the collector from scanning what the session holds (millions of objects kept for
    the whole walk): a full collection over them stalls the interface for a second."""
    gc.freeze()


def prefixed(ordered: list[str], prefix: str, limit: int) -> range:
    """Positions of the first LIMIT items of ORDERED (sorted) that start with PREFIX."""
    start = bisect.bisect_left(ordered, prefix)
    end = start
    while end < len(ordered) and end - start < limit and ordered[end].startswith(prefix):
        end += 1
    return range(start, end)


class Walker:
    """What the walk asks of the engine. Every method may take seconds on a big tree, except
    the `cached_*` ones, which only look up what an earlier call computed. SINKS end the
    spines, EXPLAINED is the parameter whose formula a log is bound to, HINT the package a
    host holds (looked for where the source names no path)."""

    def __init__(
        self,
        source: str,
        session: Session | None = None,
        sinks: Sequence[str] = (),
        explained: str | None = None,
        hint: PackageHint = NO_PACKAGE,
    ) -> None:
        self.source = source
        self.session = session
        self.sinks = tuple(sinks)
        self.explained = explained
        self.hint = hint
        self.lock = threading.Lock()  # the flow graph grows as it is walked: one walker at once
        self.outlines: dict[tuple[str, str], Outline] = {}
        self.highlighted: dict[str, list[Text]] = {}
        self._names: list[str] | None = None
        self._folded: list[str] = []
        self._last_parts: list[str] = []  # of the qualified names, lower case, sorted
        self._qualified: list[str] = []  # in the order of their last parts

    def open(self, progress: Callable[[int, int], None], ssh_options: object | None) -> Session:
        if self.session is None:
            self.session = open_session(
                self.source, progress=progress, ssh_options=ssh_options, hint=self.hint
            )
            settle()
        return self.session

    def trace(self, name: str, direction: str = "both") -> Outline:
        """The chain of NAME laid out, with the sources of its files highlighted."""
        key = (name, direction)
        if key not in self.outlines:
            with self.lock:
                # The presets' sinks hint where a value may end; the engine's rule decides.
                chain = trace(self.graph_session().graph, name, direction, hints=self.sinks)
            self.outlines[key] = outline(chain, self.source, self.sinks)
            settle()
        found = self.outlines[key]
        for path in found.files():
            self.source_lines(path)
        return found

    def recentre(self, step: Step, direction: str) -> Outline:
        """A FORWARD or BACKWARD trace from STEP, under the most precise name that binds it."""
        candidates = recentre_names(step)
        if not candidates:
            raise NameNotFound(
                f"the {step.kind} step at {step.file}:{step.line} binds no name",
                "re-centre on a step that assigns, stores or receives the value",
            )
        graph = self.graph_session().graph
        with self.lock:
            exact = [name for name in candidates if step.id in graph.seeds(name)]
        return self.trace((exact or candidates[-1:])[0], direction)

    def source_lines(self, path: str) -> list[Text]:
        """The lines of PATH, syntax-highlighted (kept: a walk returns to the same files)."""
        lines = self.highlighted.get(path)
        if lines is None:
            code = self.graph_session().snapshot.read(path).decode("utf-8", "replace")
            lines = highlight_lines(code)
            self.highlighted[path] = lines
        return lines

    def cached_lines(self, path: str) -> list[Text] | None:
        return self.highlighted.get(path)

    def names(self) -> list[str]:
        """Every field, parameter and attribute name, plain and qualified, sorted for prefix
        search without regard to case."""
        if self._names is None:
            index = self.graph_session().index
            found: set[str] = set()
            for _, klass in index.classes.values():
                for definition in klass.fields:
                    found.update((definition.name, f"{klass.qualname}.{definition.name}"))
            for _, function in index.functions.values():
                if function.is_lambda:
                    continue
                for param in function.params:
                    if param.name not in ("self", "cls"):
                        found.update((param.name, f"{function.qualname}.{param.name}"))
            ordered = sorted(found, key=lambda n: (n.lower(), n))
            qualified = sorted((n.rpartition(".")[2].lower(), n) for n in ordered if "." in n)
            self._last_parts = [last for last, _ in qualified]
            self._qualified = [name for _, name in qualified]
            self._folded = [n.lower() for n in ordered]
            self._names = ordered
        return self._names

    def complete(self, prefix: str, limit: int = MAX_MATCHES) -> list[str]:
        """Names starting with PREFIX (any case), shortest first, then the qualified names
        whose last part starts with it; [] until `names()` ran."""
        if self._names is None or not prefix:
            return []
        folded = prefix.lower()
        found = sorted(
            (self._names[i] for i in prefixed(self._folded, folded, limit)),
            key=lambda n: (len(n), n),
        )
        if "." not in prefix:
            more = prefixed(self._last_parts, folded, limit - len(found))
            found += [self._qualified[i] for i in more]
        return list(dict.fromkeys(found))

    def explain(self, log_text: str) -> Explanation:
        """The formula of the explained parameter bound to LOG_TEXT (see `sgtrace explain`)."""
        from tracer.analyses.explain.explain import explain

        if self.explained is None:
            raise SgtraceError("no parameter to explain was given", "walk without the log")
        with self.lock:
            found = explain(self.graph_session(), log_text, self.explained, self.sinks)
        settle()
        return found

    def export(self, view: Outline, form: ExportFormat, path: Path) -> Path:
        """Write VIEW to PATH as every output of sgtrace is written (a link followed, a
        device written through, a replaced file keeping its mode and owner)."""
        write_file(path, form.write(view).encode())
        return path

    def graph_session(self) -> Session:
        if self.session is None:
            raise SgtraceError(f"{self.source} is not open yet", "wait for indexing to finish")
        return self.session
