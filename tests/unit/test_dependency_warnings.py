"""A dependency's warnings never reach the user's terminal: an error is one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

WARNING = "this optional module is deprecated (a test's warning)"


@pytest.fixture
def warning_dependency(tmp_path: Path) -> dict[str, str]:
    """An environment where asyncssh's optional `pkcs11` is a module that warns when it is
    imported, then is found missing (asyncssh goes on without it, as with no pkcs11)."""
    folder = tmp_path / "site"
    (folder / "pkcs11").mkdir(parents=True)
    (folder / "pkcs11" / "__init__.py").write_text(
        textwrap.dedent(
            f"""
            import warnings
            warnings.warn({WARNING!r}, UserWarning)
            raise ImportError("pkcs11 is not really here")
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    return {
        **env,
        "PYTHONPATH": str(folder),
        "HOME": str(tmp_path),
        "SGTRACE_CACHE": str(tmp_path / "c"),
    }


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again: nothing listens there


def test_the_dependency_warns_when_imported(warning_dependency: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import asyncssh"],
        env=warning_dependency,
        capture_output=True,
        text=True,
    )
    assert WARNING in done.stderr


def test_a_failing_remote_command_prints_its_error_alone(
    warning_dependency: dict[str, str],
) -> None:
    port = closed_port()
    done = subprocess.run(
        [sys.executable, "-m", "tracer.cli", "fetch", f"ssh://127.0.0.1:{port}/srv/tree"],
        env=warning_dependency,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"sgtrace: error: ssh://127.0.0.1:{port}/srv/tree: cannot connect")


def test_warnings_the_user_asks_for_are_shown(warning_dependency: dict[str, str]) -> None:
    port = closed_port()
    done = subprocess.run(
        [sys.executable, "-W", "default", "-m", "tracer.cli", "fetch", f"ssh://127.0.0.1:{port}/x"],
        env=warning_dependency,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert WARNING in done.stderr


def test_the_filter_keeps_sgtraces_own_warnings_and_drops_the_others() -> None:
    import warnings

    from tracer.cli.main import quiet_dependencies

    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        quiet_dependencies([])
        for module in ("tracer.sources.fetch", "tui.app", "asyncssh.crypto.misc", "tracerx"):
            warnings.warn_explicit("w", UserWarning, f"{module}.py", 1, module=module)
        warnings.warn_explicit("r", ResourceWarning, "tracer/x.py", 1, module="tracer.x")
    assert [w.filename for w in caught] == ["tracer.sources.fetch.py", "tui.app.py", "tracer/x.py"]
