"""The test run's own set-up: what it does when a program the tests need is missing."""

from __future__ import annotations

import subprocess

import pytest

from tests import system
from tests.system import PROGRAMS, Program, SystemIncomplete, ensure_programs


def test_every_program_names_a_debian_package_and_why() -> None:
    assert {p.package for p in PROGRAMS} == {
        "openssh-server",
        "openssh-client",
        "rsync",
        "zstd",
        "git",
        "tmux",
        "graphviz",
    }
    assert all(p.why for p in PROGRAMS)


def test_nothing_is_run_when_every_program_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system, "PROGRAMS", (Program("sh", "dash", "a shell"),))
    monkeypatch.setattr(system, "missing", lambda programs=None: [])
    ran: list[list[str]] = []
    assert ensure_programs(print, run=lambda c, **_: ran.append(c)) == []
    assert ran == []


def absent_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = Program("sgtrace-test-no-such-tool", "no-such-package", "a test")
    monkeypatch.setattr(system, "missing", lambda programs=None: [tool])


def test_a_missing_program_stops_a_user_who_is_not_root_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    absent_tool(monkeypatch)
    with pytest.raises(SystemIncomplete) as raised:
        ensure_programs(print, is_root=False)
    message = str(raised.value)
    assert "\n" not in message
    assert "sgtrace-test-no-such-tool" in message
    assert "sudo apt-get install no-such-package" in message


def test_as_root_apt_get_installs_the_package_then_the_program_is_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    absent_tool(monkeypatch)
    ran: list[list[str]] = []
    told: list[str] = []

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        ran.append(command)
        assert kwargs["env"]["DEBIAN_FRONTEND"] == "noninteractive"  # type: ignore[index]
        return subprocess.CompletedProcess(command, 0, b"done\n")

    monkeypatch.setattr(system.shutil, "which", lambda name: "/usr/bin/apt-get")
    with pytest.raises(SystemIncomplete, match="is still not found"):
        ensure_programs(told.append, run=run, is_root=True)
    assert ran == [
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", "no-such-package"],
    ]
    assert told == [
        "tests: installing no-such-package with apt-get (sgtrace-test-no-such-tool missing)"
    ]


def test_a_failed_apt_get_is_one_line_with_its_last_words(monkeypatch: pytest.MonkeyPatch) -> None:
    absent_tool(monkeypatch)
    monkeypatch.setattr(system.shutil, "which", lambda name: "/usr/bin/apt-get")

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        return subprocess.CompletedProcess(
            command, 100, b"Reading...\nE: Unable to locate package\n"
        )

    with pytest.raises(SystemIncomplete) as raised:
        ensure_programs(print, run=run, is_root=True)
    assert str(raised.value) == (
        "`apt-get update -q` failed (E: Unable to locate package): install no-such-package by hand"
    )


def test_this_machine_has_every_program_after_the_session_started() -> None:
    # pytest_sessionstart (tests/conftest.py) installed what was missing before any test ran.
    assert system.missing() == []
