"""What the walk shows, before any widget: the chain laid out as a tree, each step's edges, the
name a re-centred trace uses, the names `/` completes. Snippets in, exact answers out."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from tracer.errors import NameNotFound
from tracer.session import Session
from tui.outline import Branch, Outline, recentre_names
from tui.walker import Walker, highlight_lines
from tui.widgets.chain_tree import step_label

RUNNER = {
    "pkg/__init__.py": "",
    "pkg/runner.py": """
        from dataclasses import dataclass


        @dataclass
        class Args:
            fraction: float = 0.8


        class Runner:
            def __init__(self, args: Args, total: int):
                self.fraction = args.fraction
                self.tokens = self.size(total)

            def size(self, total: int) -> int:
                rest = total * self.fraction
                print(self.fraction)
                return int(rest)
        """,
}
SINKS = ("tokens",)
GUESSED = {
    "pkg/__init__.py": "",
    "pkg/mod.py": """
        class Config:
            def __init__(self, size: int):
                self.size = size


        def grow(cfg):
            doubled = cfg.size * 2  # cfg has no type: Config is a guess by the name `size`
            return doubled
        """,
}


@pytest.fixture
def walker(snippet_session: Callable[[dict[str, str]], Session]) -> Walker:
    return Walker("runner", snippet_session(RUNNER), sinks=SINKS)


def tree(view: Outline, branches: tuple[Branch, ...]) -> list[object]:
    """Branches as (kind, line) with their children nested after them."""
    shown: list[object] = []
    for branch in branches:
        step = view.step(branch.step_id)
        shown.append((view.kind_of(step.id), step.line))
        if branch.children:
            shown.append(tree(view, branch.children))
    return shown


def test_the_spine_comes_first_and_branches_hang_from_it(walker: Walker) -> None:
    view = walker.trace("fraction")
    assert tree(view, view.spine) == [
        ("field", 6),
        ("attr_write", 11),
        [("use", 16)],  # print(self.fraction): read off the spine
        ("formula", 15),
        [("param", 14)],  # the other input of the formula
        ("return", 17),
        ("sink", 12),  # self.tokens = self.size(total)
    ]
    assert view.loose == ()
    assert [view.spine_number(b.step_id) for b in view.spine] == [1, 2, 3, 4, 5]


def test_edges_in_and_out_and_the_one_enter_follows(walker: Walker) -> None:
    view = walker.trace("fraction")
    write = view.chain.spine[1]

    def ends(links: list) -> list[tuple[int, str]]:
        return [(view.step(link.other).line, link.edge.kind) for link in links]

    assert ends(view.incoming(write)) == [(6, "attr")]
    assert ends(view.outgoing(write)) == [(15, "attr"), (16, "attr")]
    chosen = view.default_link(write)
    assert chosen is not None and view.step(chosen.other).line == 15  # along the spine
    sink = view.chain.spine[-1]
    chosen = view.default_link(sink)  # nothing goes out of the sink: back where it came from
    assert chosen is not None and (chosen.outgoing, view.step(chosen.other).line) == (False, 17)
    assert view.confidence(write) == 1.0 and not view.is_guess(write)


def test_recentring_uses_the_most_precise_name_that_binds_the_step(walker: Walker) -> None:
    view = walker.trace("fraction")
    param = next(s for s in view.chain.steps if s.kind == "param")
    assert recentre_names(param) == ["Runner.size.total", "total"]
    forward = walker.recentre(param, "forward")
    assert forward.param == "Runner.size.total"
    assert forward.chain.spine[0] == param.id
    write = view.step(view.chain.spine[1])
    assert recentre_names(write) == [
        "Runner.__init__.fraction",
        "Runner.fraction",
        "fraction",
    ]
    assert walker.recentre(write, "backward").param == "Runner.fraction"
    ret = view.step(view.chain.spine[3])
    with pytest.raises(NameNotFound, match="binds no name"):
        walker.recentre(ret, "forward")


def test_names_complete_plain_and_qualified(walker: Walker) -> None:
    assert walker.complete("fr") == []  # before the names are read
    walker.names()
    assert walker.complete("fr") == ["fraction", "Args.fraction"]
    assert walker.complete("TOT") == ["total", "Runner.__init__.total", "Runner.size.total"]
    assert walker.complete("Runner.s") == ["Runner.size.total"]
    assert walker.complete("") == []


def test_sources_are_highlighted_line_for_line(walker: Walker) -> None:
    lines = walker.source_lines("pkg/runner.py")
    assert [line.plain for line in lines[10:12]] == [
        "        self.fraction = args.fraction",
        "        self.tokens = self.size(total)",
    ]
    assert lines[10].spans  # coloured
    assert all(span.style.bgcolor is None for line in lines for span in line.spans)
    assert [line.plain for line in highlight_lines("a = 1\n\nb = 2\n")] == ["a = 1", "", "b = 2"]


def test_guessed_steps_are_marked(snippet_session: Callable[[dict[str, str]], Session]) -> None:
    view = Walker("guessed", snippet_session(GUESSED)).trace("size")
    [param] = view.spine  # no sink: the spine is where the value starts
    [write] = param.children
    [formula] = write.children
    assert view.step(formula.step_id).line == 7
    assert view.is_guess(formula.step_id)
    assert step_label(view, formula).plain == "↓ ƒ formula mod.py:7 ?0.5  grow"
    assert step_label(view, write).plain == "↓ ✎ write   mod.py:3  Config.__init__"
    assert step_label(view, param).plain == " 1 ▸ param   mod.py:2  Config.__init__"


def test_the_engine_and_the_walker_know_nothing_of_textual() -> None:
    code = (
        "import sys, tracer.cli.main, tracer.session, tracer.trace.chains, "
        "tracer.views.chain_text, tui.walker, tui.outline; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr
