"""The walk of a tree and a log full of terminal control sequences: every pane and
notification shows them as escapes, and in a real terminal (tmux) the title stays its own
and nothing clears the screen."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from textual.widgets import Static

from tests.tui.conftest import SIZE, settled
from tests.tui.test_terminal import Terminal, sgtrace, terminal
from tests.unit.test_hostile_output import HOSTILE, controls, hostile
from tracer.cli import presets
from tui.app import WalkApp
from tui.widgets.details import Details

__all__ = ["hostile", "terminal"]  # the fixtures this module's tests take
SHOWN = re.escape("\\x1b]0;OWNED\\x07\\x1b[2J\\x1b[?1049h\\x9b2J")


def test_the_walk_in_a_terminal_runs_none_of_the_sequences(
    terminal: Terminal, hostile: dict[str, Path], tmp_path: Path
) -> None:
    env = {
        "SGTRACE_CACHE": os.environ["SGTRACE_CACHE"],
        "TERM": "xterm-256color",
        "HOME": str(tmp_path),
    }
    terminal.start([*sgtrace(), "walk", str(hostile["root"]), "fraction"], env)

    # The source pane: a comment that would set the title, clear and switch screens.
    screen = terminal.wait_for("spine of 5", "return free  # \\x1b]0;OWNED\\x07\\x1b[2J")
    assert "fraction: float = 0.9" in screen  # nothing cleared the screen
    terminal.send("Down", "Down")  # the formula's step: its code in the details pane
    screen = terminal.wait_for("spine step 3 of 5")
    assert re.search(
        r"40 rest = avail - total \* \(1 - self.fraction\)  #\s+│\n│.*│ " + SHOWN, screen
    )
    assert "OWNED" not in terminal.pane("pane_title")
    terminal.send("q")
    assert terminal.exit_status() == "0", terminal.screen()


def test_every_pane_and_notification_shows_the_sequences_as_escapes(
    hostile: dict[str, Path],
) -> None:
    """The chain, the source, the details with the log's values, the notifications: what
    each renders holds no control character, and the escapes where the sequences were."""
    app = WalkApp(
        str(hostile["root"]),
        "fraction",
        log_text=hostile["log"].read_text(),
        sinks=presets.SINKS,
        explained="fraction",
    )
    rendered: list[str] = []

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            while not app.log_values:
                await pilot.pause(0.1)
            await settled(pilot)
            for _ in range(5):  # each step of the spine
                rendered.append(app.export_screenshot())
                await pilot.press("down")
                await settled(pilot)
            values = app.query_one(Details).query_one("#step-values", Static)
            rendered.append(str(values.render()))

    asyncio.run(asyncio.wait_for(run(), 120))
    notes = [note.message for note in app._notifications]
    assert notes[0] == (
        "3 file(s) had problems and were indexed in part: pkg/title\\x1b]0;OWNED\\x07, "
        "pkg/esc\\x1b[2J\\x1b[?1049h.py and 1 more"
    )
    assert controls("".join(rendered + notes)) == []
    assert HOSTILE not in "".join(rendered)
    assert any("\\x1b]0;OWNED\\x07" in screen for screen in rendered)
