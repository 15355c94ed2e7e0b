"""Shared fixtures: small trees written from snippets, and real SGLang releases from PyPI."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.system import SystemIncomplete, ensure_programs
from tracer.graph.steps import Step
from tracer.session import Session, open_session
from tracer.sources.cache import cache_root
from tracer.store.cache import FactCache
from tracer.trace.chains import Chain, trace


def pytest_sessionstart(session: pytest.Session) -> None:
    """The programs the tests run (sshd, ssh, rsync, zstd, git, tmux, Graphviz) installed
    before any test when missing (tests/system.py); the run stops at once when they cannot be."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(line)

    try:
        ensure_programs(say)
    except SystemIncomplete as error:
        pytest.exit(str(error), returncode=4)


@pytest.fixture
def write_tree(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Write {relative path: source} under a fresh folder; sources are dedented."""

    def write(files: dict[str, str]) -> Path:
        root = tmp_path / "tree"
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"))
        return root

    return write


@pytest.fixture
def snippet_session(
    write_tree: Callable[[dict[str, str]], Path], tmp_path: Path
) -> Callable[[dict[str, str]], Session]:
    """An indexed session over a tree of snippets, with its own empty cache."""

    def make(files: dict[str, str]) -> Session:
        root = write_tree(files)
        return open_session(str(root), cache=FactCache(tmp_path / "cache"))

    return make


def spine_of(session: Session, chain: Chain) -> list[tuple[str, int, str]]:
    """The spine as (file, line, kind), the shape the tests assert exactly."""
    steps = {s.id: s for s in chain.steps}
    return [(steps[i].file, steps[i].line, steps[i].kind) for i in chain.spine]


def spine_code(chain: Chain) -> list[str]:
    """The first code line of each spine step."""
    steps: dict[str, Step] = {s.id: s for s in chain.steps}
    return [steps[i].code.splitlines()[0].strip() for i in chain.spine]


@pytest.fixture(scope="session")
def release_cache() -> Path:
    """Releases downloaded once per machine (from the package index), reused by every run."""
    root = Path(os.environ.get("SGTRACE_TEST_CACHE", cache_root()))
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="session")
def release(release_cache: Path) -> Callable[[str], Session]:
    """`release("0.5.9")`: an indexed session over that SGLang release from PyPI."""
    sessions: dict[str, Session] = {}

    def get(version: str) -> Session:
        if version not in sessions:
            os.environ["SGTRACE_CACHE"] = str(release_cache)
            sessions[version] = open_session(
                f"pypi:sglang=={version}", cache=FactCache(release_cache)
            )
        return sessions[version]

    return get


__all__ = ["spine_of", "spine_code", "trace"]
