"""Fixtures for remote sources: real OpenSSH sshd on 127.0.0.1, and SGLang releases laid out on
the "remote" side by docker/setup-target.sh (the remote is this machine: a remote path is a
local path that sshd serves).

    sshd              one SshServer per test module (tests/sshd.py lists its attributes)
    fresh_sshd        one SshServer per test, for tests that rotate keys, kill or restart
    sshd_trio         three SshServers per module, aliases target-1..3, one client_home
    use_client_home   use_client_home(server): HOME=server.client_home, no ssh agent, for the
                      rest of the test, so asyncssh's defaults read only the fixture's files
    target_checkout   target_checkout("0.4.6", patch=None, dest=None) -> Target
    target_site_packages   the same, laid out as a site-packages install
    make_patch        make_patch(target, "sglang/srt/server_args.py", old, new) -> patch file

Moving HOME also moves sgtrace's default cache (~/.cache/sgtrace) into client_home: set
SGTRACE_CACHE explicitly in a test that checks what a fetch cached.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.fetching import Run, in_process
from tests.sshd import (
    SetupTargetFailed,
    SshdUnavailable,
    SshServer,
    Target,
    require_openssh,
    setup_target,
    start_sshd,
    start_sshd_group,
)
from tracer.sources.cache import cache_root


def openssh_or_fail() -> None:
    try:
        require_openssh()
    except SshdUnavailable as error:
        pytest.fail(str(error), pytrace=False)


def started(workdir: Path) -> SshServer:
    openssh_or_fail()
    try:
        return start_sshd(workdir)
    except SshdUnavailable as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    server = started(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture
def fresh_sshd(tmp_path: Path) -> Iterator[SshServer]:
    server = started(tmp_path / "sshd")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def sshd_trio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[SshServer]]:
    openssh_or_fail()
    try:
        servers = start_sshd_group(tmp_path_factory.mktemp("sshd-trio"), 3)
    except SshdUnavailable as error:
        pytest.fail(str(error), pytrace=False)
    yield servers
    for server in servers:
        server.stop()


@pytest.fixture
def use_client_home(monkeypatch: pytest.MonkeyPatch) -> Callable[[SshServer], Path]:
    """Point HOME at a server's client_home (and drop SSH_AUTH_SOCK) until the test ends."""

    def use(server: SshServer) -> Path:
        monkeypatch.setenv("HOME", str(server.client_home))
        monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
        return server.client_home

    return use


@pytest.fixture(scope="session")
def setup_env() -> dict[str, str]:
    """setup-target.sh's environment, fixed at session start so a test that moves HOME still
    reuses the machine's wheel cache."""
    env = dict(os.environ)
    env["SGTRACE_TEST_CACHE"] = os.environ.get("SGTRACE_TEST_CACHE", str(cache_root()))
    env["PYTHON"] = sys.executable
    return env


def lay_out(
    env: dict[str, str], version: str, dest: Path, layout: str, patch: Path | None
) -> Target:
    try:
        return setup_target(version, dest, layout=layout, patch=patch, env=env)
    except SetupTargetFailed as error:
        pytest.fail(str(error), pytrace=False)


def target_factory(
    layout: str, env: dict[str, str], factory: pytest.TempPathFactory
) -> Callable[..., Target]:
    shared: dict[tuple[str, Path | None], Target] = {}

    def get(version: str, patch: Path | None = None, dest: Path | None = None) -> Target:
        """A release laid out as LAYOUT. Without DEST, one shared read-only copy per
        (version, patch) for the session; with DEST, a new copy there that the test may edit."""
        if dest is not None:
            return lay_out(env, version, dest, layout, patch)
        key = (version, patch)
        if key not in shared:
            dest = factory.mktemp(f"{layout}-{version}") / "sglang"
            shared[key] = lay_out(env, version, dest, layout, patch)
        return shared[key]

    return get


@pytest.fixture(scope="session")
def target_checkout(
    setup_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., Target]:
    return target_factory("checkout", setup_env, tmp_path_factory)


@pytest.fixture(scope="session")
def target_site_packages(
    setup_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., Target]:
    return target_factory("site-packages", setup_env, tmp_path_factory)


@pytest.fixture
def make_patch(tmp_path: Path) -> Callable[[Target, str, str, str], Path]:
    """make_patch(target, "sglang/version.py", old, new): a patch, in checkout form
    (a/python/sglang/...), that replaces the first OLD with NEW in that file of TARGET; it
    applies to either layout through setup-target.sh --patch."""
    count = 0

    def make(target: Target, rel: str, old: str, new: str) -> Path:
        nonlocal count
        count += 1
        text = (target.package_root / rel).read_text()
        assert old in text, f"{old!r} not in {rel}"
        work = tmp_path / f"patch-{count}"
        for side, content in (("a", text), ("b", text.replace(old, new, 1))):
            path = work / side / "python" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        diff = subprocess.run(
            ["git", "diff", "--no-index", "--no-prefix", f"a/python/{rel}", f"b/python/{rel}"],
            cwd=work,
            env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"},
            capture_output=True,
            text=True,
        )
        assert diff.returncode == 1, diff.stderr  # 1: the files differ
        out = work / "change.patch"
        out.write_text(diff.stdout)
        return out

    return make


# -- the fetch tests: a cache of their own, the CLI in-process, the server as a client sees it


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("SGTRACE_CACHE", str(root))
    return root


@pytest.fixture
def sgtrace(capsys: pytest.CaptureFixture[str], cache: Path) -> Callable[..., Run]:
    """`sgtrace ARGS` in this process, with this test's cache; HOME as use_client_home set it."""
    return in_process(capsys)


@pytest.fixture
def client(sshd: SshServer, use_client_home: Callable[[SshServer], Path]) -> SshServer:
    """The module's server, reached through the client home's ~/.ssh (alias `target`)."""
    use_client_home(sshd)
    return sshd


@pytest.fixture
def fresh_client(fresh_sshd: SshServer, use_client_home: Callable[[SshServer], Path]) -> SshServer:
    use_client_home(fresh_sshd)
    return fresh_sshd
