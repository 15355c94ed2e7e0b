"""Snapshots (pytest-textual-snapshot) of the walk at a fixed size over SGLang 0.4.6.

After a deliberate change of the look: `pytest tests/tui --snapshot-update`, check the SVGs
under __snapshots__/, and copy the main screen to docs/walk.svg (the README's screenshot)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_textual_snapshot import normalize_svg
from textual.pilot import Pilot

from tests.tui.conftest import SIZE, settled
from tui.app import WalkApp

pytestmark = pytest.mark.release

SNAPSHOTS = Path(__file__).parent / "__snapshots__" / Path(__file__).stem
README_SCREENSHOT = Path(__file__).parents[2] / "docs" / "walk.svg"


async def at_the_formula(pilot: Pilot) -> None:
    await settled(pilot)
    view = pilot.app.view  # type: ignore[attr-defined]
    kinds = [view.step(step_id).kind for step_id in view.chain.spine]
    # Down from the origin, counted on the spine, to the formula; then its branch unfolded.
    await pilot.press(*["down"] * kinds.index("formula"), "space")
    await pilot.pause()


async def with_help(pilot: Pilot) -> None:
    await settled(pilot)
    await pilot.press("question_mark")
    await pilot.pause()


def test_main_screen(walk_app: Callable[..., WalkApp], snap_compare: Callable[..., bool]) -> None:
    """mem_fraction_static at the formula it ends in (step 23 of 26): the spine with the
    formula's branch unfolded, the formula lit in model_runner.py with the other steps marked,
    its edges."""
    assert snap_compare(walk_app(), terminal_size=SIZE, run_before=at_the_formula)


def test_help_screen(walk_app: Callable[..., WalkApp], snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(walk_app(), terminal_size=SIZE, run_before=with_help)


def test_the_readme_screenshot_is_the_main_screen_snapshot() -> None:
    snapshot = SNAPSHOTS / "test_main_screen.svg"
    assert normalize_svg(README_SCREENSHOT.read_text()) == normalize_svg(snapshot.read_text()), (
        f"copy {snapshot} to {README_SCREENSHOT}"
    )
