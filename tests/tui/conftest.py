"""Fixtures for the walk: the app over a real SGLang release, driven by Textual's Pilot."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.worker import WorkerFailed

from tracer.cli import presets
from tracer.session import Session
from tui.app import WalkApp

RELEASE = "0.4.6"  # the smallest of the releases the tests download
SOURCE = f"pypi:sglang=={RELEASE}"
SIZE = (160, 45)


@pytest.fixture(scope="session")
def walk_session(release: Callable[[str], Session]) -> Session:
    return release(RELEASE)


@pytest.fixture
def walk_app(walk_session: Session) -> Callable[..., WalkApp]:
    """walk_app(name=None, direction="both"): the app over SGLang 0.4.6, already indexed."""

    def make(name: str | None = "mem_fraction_static", direction: str = "both") -> WalkApp:
        return WalkApp(SOURCE, name, direction, session=walk_session, sinks=presets.SINKS)

    return make


async def settled(pilot: Pilot) -> None:
    """Wait until every engine call has finished and the panes show its result."""
    for _ in range(2):  # a finished trace may start highlighting a file
        with contextlib.suppress(WorkerFailed):  # failures show as notifications
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()
