"""The walk with a server log (`sgtrace walk SOURCE NAME --log FILE`): the values the log
gives are shown beside the formula's steps, in the details pane."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Static

from tests.integration.logbuild import REAL_LOGS
from tests.tui.conftest import SIZE, SOURCE, settled
from tracer.cli import presets
from tracer.session import Session
from tui.app import WalkApp

pytestmark = pytest.mark.release

# A real log of SGLang 0.4.6 from the issue tracker (its URL is in the file's first line).
LOG = REAL_LOGS / "sglang-0.4.6-qwen3-8b-tp1.log"  # a user's log, read where it is kept


def shown(app: WalkApp) -> str:
    values = app.query_one("#step-values", Static)
    return str(values.render()) if values.display else ""


def test_log_values_beside_the_formula(walk_session: Session) -> None:
    app = WalkApp(
        SOURCE,
        "mem_fraction_static",
        session=walk_session,
        log_text=LOG.read_text(),
        sinks=presets.SINKS,
        explained=presets.EXPLAIN_PARAMETER,
    )
    seen: dict[str, str] = {}

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            assert app.view is not None
            seen["origin"] = shown(app)  # the flag: not a step of the formula
            formula = next(s for s in app.view.chain.steps if s.kind == "formula")
            app.show_step(formula.id)
            await pilot.pause()
            seen["formula"] = shown(app)
            sink = app.view.chain.spine[-1]
            app.show_step(sink)
            await pilot.pause()
            seen["sink"] = shown(app)

    asyncio.run(run())
    assert seen["origin"] == ""
    lines = seen["formula"].splitlines()
    assert lines[0] == "from the log: rest_memory = 63.49 - 78.84 * (1 - 0.9) = 55.606"
    assert "  total_gpu_memory = 78.84  derived, log line 6" in lines
    assert "  self.mem_fraction_static = 0.9  flag" in lines
    assert seen["sink"] == "from the log: self.max_total_num_tokens = 404890"
