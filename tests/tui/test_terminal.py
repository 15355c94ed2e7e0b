"""End to end in a real terminal: tmux runs `sgtrace walk`, keys are typed with send-keys, and
the screen is read back with capture-pane."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, SOURCE
from tracer.session import Session

pytestmark = pytest.mark.release

TIMEOUT = 60.0


class Terminal:
    """One tmux server of its own (its own socket, no user config) with one window."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket
        # The command's exit status, written by the shell that runs it: tmux's own
        # pane_dead_status was seen empty on a dead pane under load.
        self.status = socket.with_name("status")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert done.returncode == 0, f"tmux {' '.join(args)}: {done.stderr}"
        return done.stdout

    def start(self, command: list[str], env: dict[str, str]) -> None:
        width, height = SIZE
        options = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        # COLUMNS and LINES, when set (pytest's process has them), would override the pane's size.
        command = ["env", "-u", "COLUMNS", "-u", "LINES", *command]
        command = ["sh", "-c", '"$@"; echo $? > "$0"', str(self.status), *command]
        self.tmux(
            "new-session", "-d", "-s", "walk", "-x", str(width), "-y", str(height), *options,
            shlex.join(command),
        )  # fmt: skip
        self.tmux("set-option", "-t", "walk", "remain-on-exit", "on")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "walk")

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "walk", *keys)

    def wait_for(self, *texts: str) -> str:
        """The screen, once it shows every one of TEXTS."""
        deadline = time.monotonic() + TIMEOUT
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.2)
        size = self.pane("pane_width") + "x" + self.pane("pane_height")
        raise AssertionError(f"{texts} not shown within {TIMEOUT} s; the {size} screen:\n{screen}")

    def exit_status(self) -> str:
        """How the command in the window ended (once it has): its exit status (128+N: signal N)."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.status.exists() and self.status.read_text().endswith("\n"):
                return self.status.read_text().strip()
            time.sleep(0.2)
        dead = self.pane("pane_dead")
        raise AssertionError(f"not ended after {TIMEOUT} s (dead: {dead!r}):\n{self.screen()}")

    def pane(self, field: str) -> str:
        return self.tmux("display-message", "-p", "-t", "walk", f"#{{{field}}}").strip()


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        pytest.fail(
            "tmux is not installed (the test run installs it: tests/system.py)", pytrace=False
        )
    terminal = Terminal(tmp_path / "tmux.sock")
    yield terminal
    subprocess.run(["tmux", "-S", str(terminal.socket), "kill-server"], capture_output=True)


def sgtrace() -> list[str]:
    # This interpreter, not a `sgtrace` found on PATH: a version manager's shim may read HOME,
    # which the test changes.
    return [sys.executable, "-m", "tracer.cli"]


def test_walk_in_tmux(
    terminal: Terminal, walk_session: Session, release_cache: Path, tmp_path: Path
) -> None:
    # walk_session: the release is downloaded and its facts cached before the clock starts.
    env = {"SGTRACE_CACHE": str(release_cache), "TERM": "xterm-256color", "HOME": str(tmp_path)}
    terminal.start([*sgtrace(), "walk", SOURCE, "mem_fraction_static"], env)

    screen = terminal.wait_for("spine of 27", "sglang/srt/server_args.py", "563 │")
    assert "mem_fraction_static in pypi:sglang==0.4.6" in screen
    # The chain, origin first, each step's place before its function.
    assert "1 » flag    server_args.py:563  ServerArgs.add_cli_args" in screen
    assert '"--mem-fraction-static",' in screen  # the source of the selected step
    assert "27 ◉ sink    model_runner.py:734  ModelRunner.init_memo" in screen

    terminal.send("Down")  # the namespace the parser returns
    screen = terminal.wait_for("spine step 2 of 27")
    assert "1261 │     raw_args = parser.parse_args(argv)" in screen

    terminal.send("Down", "Down", "Down", "Down")  # through from_cli_args into the field
    screen = terminal.wait_for("spine step 6 of 27")
    assert "69 │     mem_fraction_static: Optional[float] = None" in screen

    terminal.send("Enter")  # along the spine: the ServerArgs object made there, returned
    screen = terminal.wait_for("spine step 7 of 27", "1213 │")
    assert "return cls(**{attr: getattr(args, attr) for attr in attrs})" in screen

    terminal.send("Enter")  # ... into from_cli_args's caller
    screen = terminal.wait_for("spine step 8 of 27", "1262 │")
    assert "server_args = ServerArgs.from_cli_args(raw_args)" in screen

    terminal.send("Enter", "Enter")  # returned, into launch_server.py
    screen = terminal.wait_for("sglang/launch_server.py", "spine step 10 of 27")
    assert "11 │     server_args = prepare_server_args(sys.argv[1:])" in screen

    terminal.send("BSpace")
    terminal.wait_for("spine step 9 of 27", "sglang/srt/server_args.py")

    terminal.send("q")
    assert terminal.exit_status() == "0", terminal.screen()


def test_walk_reports_a_missing_source_in_the_interface(terminal: Terminal, tmp_path: Path) -> None:
    env = {"TERM": "xterm-256color", "HOME": str(tmp_path)}
    terminal.start([*sgtrace(), "walk", str(tmp_path / "nowhere"), "x"], env)
    screen = terminal.wait_for("does not exist")
    assert "Traceback" not in screen
    terminal.send("q")
