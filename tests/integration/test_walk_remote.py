"""`sgtrace walk HOST:PATH`: the walk over a source fetched from a real sshd on 127.0.0.1
(SGLang 0.4.6 laid out as a git checkout), driven with Textual's Pilot; a host whose key is
unknown is a notification, not a traceback."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.sshd import SshServer, Target
from tests.tui.conftest import SIZE, settled
from tracer.cli import presets
from tracer.cli.common import PACKAGE
from tracer.sources.remote import SshOptions
from tui.app import WalkApp
from tui.widgets.source_view import SourceView

pytestmark = pytest.mark.release

VERSION = "0.4.6"


@pytest.fixture
def client(
    sshd: SshServer,
    use_client_home: Callable[[SshServer], Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> SshServer:
    """The module's server through the client home's ~/.ssh (alias `target`), a fresh cache."""
    use_client_home(sshd)
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    return sshd


def walk(app: WalkApp, scenario: Callable[[Pilot], object]) -> None:
    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            await scenario(pilot)  # type: ignore[misc]

    asyncio.run(run())


def test_walk_over_ssh(client: SshServer, target_checkout: Callable[..., Target]) -> None:
    target = target_checkout(VERSION)
    source = f"{client.alias}:{target.package_root}"
    app = WalkApp(
        source, "mem_fraction_static", ssh_options=SshOptions(), sinks=presets.SINKS, hint=PACKAGE
    )

    async def scenario(pilot: Pilot) -> None:
        assert app.view is not None, [n.message for n in app._notifications]
        step = app.current_step
        assert step is not None
        assert (step.kind, step.file, step.line) == ("cli_flag", "sglang/srt/server_args.py", 563)
        assert app.query_one(SourceView).path == "sglang/srt/server_args.py"
        assert len(app.view.chain.spine) == 27
        await pilot.press("down", "enter")  # the parsed namespace, then along its spine edge
        await pilot.pause()
        step = app.current_step
        assert step is not None
        # The namespace handed to the constructor of ServerArgs, which copies the flag's value.
        assert (step.kind, step.file, step.line) == (
            "call_arg",
            "sglang/srt/server_args.py",
            1262,
        )

    walk(app, scenario)


def test_unknown_host_key_is_a_notification(
    client: SshServer, target_checkout: Callable[..., Target], tmp_path: Path
) -> None:
    target = target_checkout(VERSION)
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    # Every known_hosts file the config names is read: a config naming only the empty one.
    config = tmp_path / "config"
    config.write_text(client.ssh_config.read_text().replace(str(client.known_hosts), str(empty)))
    app = WalkApp(
        f"{client.alias}:{target.package_root}",
        "mem_fraction_static",
        ssh_options=SshOptions(config=config),
        hint=PACKAGE,
    )

    async def scenario(pilot: Pilot) -> None:
        messages = [n.message for n in app._notifications]
        assert any("--accept-new-host-key" in m for m in messages), messages
        assert app.view is None
        assert app.is_running

    walk(app, scenario)
