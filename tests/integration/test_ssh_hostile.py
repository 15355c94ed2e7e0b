"""Hostile ssh configs and hosts, as a user meets them: `sgtrace fetch HOST:PATH` with the
ssh config and known_hosts an attacker arranged, through real sshds (a second one as the
jump host), each outcome set beside what the real `ssh -o BatchMode=yes` does with the same
files. A key ssh refuses is refused, with one line naming the host and the cause; a key
accepted is recorded where ssh records it; a config that never ends, or includes itself,
is one line naming the file; a ProxyCommand or `Match exec` runs once, as for ssh."""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncssh
import pytest

from tests.integration.fetching import ROOT, Run, cached_files, write_package
from tests.sshd import SSH, SshServer, ssh_client_env, start_sshd, stop_all, write_client_home

RELAY = Path(__file__).resolve().parents[1] / "relay.py"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SshServer, SshServer]]:
    """The target, and a jump host that lets the same client key in."""
    work = tmp_path_factory.mktemp("hostile-ssh")
    target = start_sshd(work / "target", alias="target")
    jump = start_sshd(
        work / "jump", alias="jump", client_key=target.client_key, client_home=work / "jump-home"
    )
    yield target, jump
    stop_all([target, jump])


@pytest.fixture
def target(servers: tuple[SshServer, SshServer]) -> SshServer:
    return servers[0]


@pytest.fixture
def jump(servers: tuple[SshServer, SshServer]) -> SshServer:
    return servers[1]


@pytest.fixture
def home(
    servers: tuple[SshServer, SshServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A client home of this test's own: both servers in ~/.ssh/config and known_hosts."""
    home = write_client_home(tmp_path / "home", servers, servers[0].client_key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})


def config(home: Path) -> Path:
    return home / ".ssh" / "config"


def known_hosts(home: Path) -> Path:
    return home / ".ssh" / "known_hosts"


def add_to_block(home: Path, server: SshServer, *lines: str) -> None:
    """LINES added to SERVER's Host block of HOME's ssh config, before its other options."""
    text = config(home).read_text()
    head = f"Host {server.alias}\n"
    config(home).write_text(text.replace(head, head + "".join(f"    {x}\n" for x in lines)))


def wrong_key() -> str:
    """A fresh ed25519 public key, `TYPE BASE64`: the key the host had before, or another
    host's."""
    key = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
    return " ".join(key.split()[:2])


def ssh(home: Path, *options: str, host: str = "target") -> subprocess.CompletedProcess[str]:
    """The real `ssh -o BatchMode=yes` on HOME's files (it reads no $HOME: -F)."""
    return subprocess.run(
        [SSH, "-F", str(config(home)), "-o", "BatchMode=yes", *options, host, "true"],
        capture_output=True,
        text=True,
        timeout=60,
        env=ssh_client_env(home),
        stdin=subprocess.DEVNULL,
    )


def sgtrace_process(home: Path, cache: Path, *args: str, memory: int | None = None) -> Run:
    """`sgtrace ARGS` as its own process with this HOME, its address space capped at MEMORY
    bytes if given."""

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    done = subprocess.run(
        [sys.executable, "-m", "tracer.cli", *args],
        cwd=ROOT,
        env={**ssh_client_env(home), "SGTRACE_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit,
    )
    return Run(done.returncode, done.stdout, done.stderr)


# -- 1. HostKeyAlias with a Port: the alias alone is the name ---------------------------------


def test_a_changed_key_recorded_under_a_host_key_alias_is_refused_whatever_the_port(
    target: SshServer, home: Path, sgtrace: Callable[..., Run], cache: Path, tree: Path
) -> None:
    # The attack: the config aliases the host's key (Port is not 22); known_hosts records
    # the alias with the key it had, as OpenSSH records it; the host now offers another.
    add_to_block(home, target, "HostKeyAlias evilalias")
    known_hosts(home).write_text(f"evilalias {wrong_key()}\n")
    before = known_hosts(home).read_bytes()

    for flags in ((), ("--accept-new-host-key",)):
        line = sgtrace("fetch", f"target:{tree}", *flags).error_line()
        assert "the host key of target has CHANGED" in line
        assert f"ssh-keygen -R evilalias -f {known_hosts(home)}" in line

    assert known_hosts(home).read_bytes() == before
    assert cached_files(cache) == {}
    refused = ssh(home, "-o", "StrictHostKeyChecking=accept-new")
    assert refused.returncode == 255 and "REMOTE HOST IDENTIFICATION HAS CHANGED" in refused.stderr


def test_a_key_accepted_under_a_host_key_alias_is_recorded_as_ssh_records_it(
    target: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path, tmp_path: Path
) -> None:
    add_to_block(home, target, "HostKeyAlias EvilAlias")
    known_hosts(home).write_text("")
    theirs = write_client_home(tmp_path / "theirs", [target], target.client_key)
    add_to_block(theirs, target, "HostKeyAlias EvilAlias")
    known_hosts(theirs).write_text("")

    assert "is not in" in sgtrace("fetch", f"target:{tree}").error_line()
    assert sgtrace("fetch", f"target:{tree}", "--accept-new-host-key").code == 0
    assert ssh(theirs, "-o", "StrictHostKeyChecking=accept-new").returncode == 0

    assert known_hosts(home).read_text() == known_hosts(theirs).read_text()
    assert known_hosts(home).read_text() == f"evilalias {target.host_public_key}\n"
    assert ssh(home, "-o", "StrictHostKeyChecking=yes").returncode == 0


# -- 3. a config that never ends -----------------------------------------------------------


def test_an_ssh_config_that_never_ends_is_one_line_naming_it(
    home: Path, cache: Path, tree: Path
) -> None:
    # In 512 MB of address space, as its own process: /dev/zero read whole once took 3.8 GB.
    run = sgtrace_process(
        home, cache, "fetch", f"target:{tree}", "--ssh-config", "/dev/zero", memory=512 << 20
    )
    assert "the ssh config /dev/zero is larger than 1 MB" in run.error_line()


def test_an_included_file_that_never_ends_is_one_line_naming_it(
    home: Path, cache: Path, tree: Path
) -> None:
    huge = home / "huge.conf"
    with huge.open("wb") as file:
        file.truncate(4 << 30)  # sparse: 4 GB that take no disk
    config(home).write_text(f"Include {huge}\n" + config(home).read_text())

    run = sgtrace_process(home, cache, "fetch", f"target:{tree}", memory=512 << 20)

    assert f"the ssh config {huge} is larger than 1 MB" in run.error_line()


# -- 8. a config that includes itself ------------------------------------------------------


def test_an_ssh_config_that_includes_itself_is_one_line_naming_it(
    home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    config(home).write_text("Include ~/.ssh/config\n" + config(home).read_text())

    line = sgtrace("fetch", f"target:{tree}").error_line()

    assert f"the ssh config {config(home)} includes files more than 16 deep" in line
    assert "Too many recursive configuration includes" in ssh(home).stderr


# -- 9. a jump host is checked as ssh -J checks it -------------------------------------------


def test_a_jump_host_with_an_unknown_key_is_refused_naming_it_and_then_recorded(
    target: SshServer,
    jump: SshServer,
    home: Path,
    sgtrace: Callable[..., Run],
    tree: Path,
    tmp_path: Path,
) -> None:
    add_to_block(home, target, "ProxyJump jump")
    known_hosts(home).write_text(target.known_hosts_line())  # the jump host's key is unknown
    # What ssh records with accept-new (the jump's ssh reads it from the config, not -o).
    theirs = tmp_path / "theirs"
    shutil.copytree(home, theirs)
    text = config(theirs).read_text().replace(str(home), str(theirs))
    config(theirs).write_text(
        text.replace("StrictHostKeyChecking yes", "StrictHostKeyChecking accept-new")
    )

    line = sgtrace("fetch", f"target:{tree}").error_line()
    assert f"the host key of jump (jump host to target) is not in {known_hosts(home)}" in line
    assert "--accept-new-host-key" in line
    assert known_hosts(home).read_text() == target.known_hosts_line()
    assert ssh(home).returncode == 255

    assert sgtrace("fetch", f"target:{tree}", "--accept-new-host-key").code == 0
    assert ssh(theirs).returncode == 0
    assert known_hosts(home).read_text() == known_hosts(theirs).read_text()
    assert known_hosts(home).read_text() == target.known_hosts_line() + jump.known_hosts_line()
    assert ssh(home).returncode == 0


def test_a_jump_host_whose_key_changed_is_refused_naming_it(
    target: SshServer, jump: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    add_to_block(home, target, "ProxyJump jump")
    known_hosts(home).write_text(
        target.known_hosts_line() + f"{jump.known_hosts_name} {wrong_key()}\n"
    )
    before = known_hosts(home).read_bytes()

    line = sgtrace("fetch", f"target:{tree}", "--accept-new-host-key").error_line()

    assert "the host key of jump (jump host to target) has CHANGED" in line
    assert f"ssh-keygen -R {jump.known_hosts_name} -f {known_hosts(home)}" in line
    assert known_hosts(home).read_bytes() == before
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in ssh(home).stderr


def test_a_jump_host_that_does_not_answer_is_named(
    target: SshServer, jump: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    add_to_block(home, target, "ProxyJump jump")
    config(home).write_text(config(home).read_text().replace(f"Port {jump.port}", "Port 1"))

    line = sgtrace("fetch", f"target:{tree}").error_line()

    assert "cannot connect to jump (jump host to target) (Connect call failed" in line
    assert "('127.0.0.1', 1)" in line


def test_a_proxyjump_that_loops_is_one_line(
    target: SshServer, jump: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    # OpenSSH has no bound here: its ssh -W processes fork one another until killed.
    add_to_block(home, target, "ProxyJump jump")
    add_to_block(home, jump, "ProxyJump target")

    line = sgtrace("fetch", f"target:{tree}").error_line()

    assert "the ProxyJump of target loops (at target)" in line


# -- 12. what the config runs runs once ------------------------------------------------------


@pytest.mark.parametrize("flags", [(), ("--accept-new-host-key",)], ids=["known", "accepted"])
def test_match_exec_and_proxycommand_run_once_as_for_ssh(
    target: SshServer,
    home: Path,
    sgtrace: Callable[..., Run],
    tree: Path,
    tmp_path: Path,
    flags: tuple[str, ...],
) -> None:
    runs = tmp_path / "runs"
    add_to_block(home, target, f"ProxyCommand {sys.executable} {RELAY} %h %p {runs}")
    config(home).write_text(f'Match exec "echo exec >> {runs}"\n' + config(home).read_text())
    if flags:
        known_hosts(home).write_text("")

    assert sgtrace("fetch", f"target:{tree}", *flags).code == 0
    ours = runs.read_text()
    runs.unlink()
    ssh(home, "-o", "StrictHostKeyChecking=yes")

    assert ours == runs.read_text() == f"exec\nrelay {target.host} {target.port}\n"
