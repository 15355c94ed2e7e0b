"""The SSH test bed itself: a real sshd that the real OpenSSH client and asyncssh both reach
with the fixture's own keys and known_hosts, and SGLang releases laid out by the same
docker/setup-target.sh the demo image runs."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from tests.sshd import SETUP_TARGET, SshServer, Target

VERSION = "0.4.6"


async def run_remote(command: str, **connect: Any) -> str:
    async with asyncssh.connect(connect_timeout=10, **connect) as conn:
        result = await asyncio.wait_for(conn.run(command, check=True), timeout=30)
        return str(result.stdout)


# -- the real OpenSSH client ----------------------------------------------------------------


def test_ssh_client_runs_a_command(sshd: SshServer) -> None:
    assert sshd.ssh("echo ok").stdout == "ok\n"


def test_commands_on_the_target_get_their_own_home(sshd: SshServer) -> None:
    assert sshd.ssh("echo $HOME").stdout.strip() == str(sshd.remote_home)


def test_target_has_the_tools_a_fetch_uses(sshd: SshServer) -> None:
    found = sshd.ssh("command -v tar zstd rsync git python3", check=False)
    assert found.returncode == 0, f"missing on the target: {found.stdout}{found.stderr}"


def test_ssh_client_refuses_an_unknown_host_key(fresh_sshd: SshServer) -> None:
    fresh_sshd.known_hosts.write_text("")
    result = fresh_sshd.ssh("echo ok", check=False)
    assert result.returncode == 255
    assert "Host key verification failed" in result.stderr


# -- asyncssh -------------------------------------------------------------------------------


def test_asyncssh_with_explicit_files(sshd: SshServer) -> None:
    output = asyncio.run(
        run_remote(
            "echo ok",
            host=sshd.host,
            port=sshd.port,
            username=sshd.user,
            client_keys=[str(sshd.client_key)],
            known_hosts=str(sshd.known_hosts),
        )
    )
    assert output == "ok\n"


def test_asyncssh_with_connect_options(sshd: SshServer) -> None:
    assert asyncio.run(run_remote("echo ok", **sshd.connect_options())) == "ok\n"


def test_asyncssh_defaults_read_the_client_home(
    sshd: SshServer, use_client_home: Callable[[SshServer], Path]
) -> None:
    # With HOME moved, asyncssh's own defaults (~/.ssh/config, its Host alias, the key and
    # known_hosts it names) reach the target: what `sgtrace fetch target` would do.
    use_client_home(sshd)
    assert asyncio.run(run_remote("echo ok", host=sshd.alias)) == "ok\n"


def test_asyncssh_refuses_an_empty_known_hosts(sshd: SshServer, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    options = {**sshd.connect_options(), "known_hosts": str(empty)}
    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        asyncio.run(run_remote("echo ok", **options))


def test_rotated_host_key_is_refused_until_trusted(fresh_sshd: SshServer) -> None:
    old = fresh_sshd.host_public_key
    new = fresh_sshd.rotate_host_key()
    assert new != old
    assert old in fresh_sshd.known_hosts.read_text()

    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        asyncio.run(run_remote("echo ok", **fresh_sshd.connect_options()))
    refused = fresh_sshd.ssh("echo ok", check=False)
    assert refused.returncode == 255
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in refused.stderr

    fresh_sshd.trust_host_key()
    assert asyncio.run(run_remote("echo ok", **fresh_sshd.connect_options())) == "ok\n"


def test_sftp_subsystem(sshd: SshServer) -> None:
    (sshd.remote_home / "hello.txt").write_text("hi\n")

    async def read() -> bytes:
        async with asyncssh.connect(**sshd.connect_options()) as conn:
            path = str(sshd.remote_home / "hello.txt")
            async with conn.start_sftp_client() as sftp, sftp.open(path, "rb") as remote:
                return await remote.read()

    assert asyncio.run(read()) == b"hi\n"


def test_killed_connection_then_a_clean_one(fresh_sshd: SshServer) -> None:
    async def interrupted() -> asyncssh.SSHCompletedProcess | BaseException:
        async with asyncssh.connect(**fresh_sshd.connect_options()) as conn:
            process = await conn.create_process("echo started; sleep 60")
            assert await process.stdout.readline() == "started\n"
            assert fresh_sshd.kill_connections(), "no per-connection sshd to kill"
            try:
                return await asyncio.wait_for(process.wait(check=True), timeout=20)
            except (asyncssh.Error, OSError) as error:
                return error

    # asyncssh reports a lost connection as a command without exit status, not as an error:
    # a fetch must check `exit_status is not None`, not only `check=True`.
    outcome = asyncio.run(interrupted())
    if isinstance(outcome, asyncssh.SSHCompletedProcess):
        assert outcome.exit_status is None and outcome.exit_signal is None
    assert asyncio.run(run_remote("echo ok", **fresh_sshd.connect_options())) == "ok\n"
    assert fresh_sshd.idle(within=10), "the closed connection's sshd did not end"


def test_remote_programs_can_be_replaced(fresh_sshd: SshServer, tmp_path: Path) -> None:
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    tar = fakes / "tar"
    tar.write_text("#!/bin/sh\necho hostile tar\n")
    tar.chmod(0o755)
    fresh_sshd.prepend_remote_path(fakes)
    assert fresh_sshd.ssh("tar --version").stdout == "hostile tar\n"
    assert asyncio.run(run_remote("tar -c x", **fresh_sshd.connect_options())) == "hostile tar\n"


# -- three hosts ----------------------------------------------------------------------------


def test_three_servers_answer_at_once(sshd_trio: list[SshServer]) -> None:
    assert len({server.port for server in sshd_trio}) == 3
    home = sshd_trio[0].client_home
    assert all(server.client_home == home for server in sshd_trio)

    async def everyone() -> list[tuple[str, str]]:
        async def one(server: SshServer) -> tuple[str, str]:
            async with asyncssh.connect(**server.connect_options()) as conn:
                key = conn.get_server_host_key()
                assert key is not None
                result = await conn.run("sleep 0.5; echo ok", check=True)
                return str(result.stdout), key.export_public_key().decode().split()[1]

        return await asyncio.gather(*(one(server) for server in sshd_trio))

    answers = asyncio.run(everyone())
    assert [output for output, _ in answers] == ["ok\n"] * 3
    assert [key for _, key in answers] == [s.host_public_key.split()[1] for s in sshd_trio]


def test_three_aliases_through_one_config(sshd_trio: list[SshServer]) -> None:
    processes = [
        subprocess.Popen(
            server.ssh_argv("echo $HOME"),
            stdout=subprocess.PIPE,
            text=True,
            env=server.client_env(),
        )
        for server in sshd_trio
    ]
    outputs = [process.communicate(timeout=60)[0].strip() for process in processes]
    assert outputs == [str(server.remote_home) for server in sshd_trio]
    assert {server.ssh_config for server in sshd_trio} == {sshd_trio[0].ssh_config}


# -- releases laid out on the target --------------------------------------------------------


def test_checkout_layout(
    sshd: SshServer,
    target_checkout: Callable[..., Target],
    make_patch: Callable[[Target, str, str, str], Path],
    tmp_path: Path,
) -> None:
    clean = target_checkout(VERSION)
    assert clean.package_root == clean.root / "python"
    for rel in (
        "python/pyproject.toml",
        "python/sglang/srt/server_args.py",
        "python/sglang/version.py",
    ):
        assert (clean.root / rel).is_file(), rel
    assert sshd.ssh(f"git -C {clean.root} status --porcelain").stdout == ""
    assert sshd.ssh(f"git -C {clean.root} describe --tags").stdout.strip() == f"v{VERSION}"

    patch = make_patch(clean, "sglang/version.py", VERSION, f"{VERSION}+patched")
    patched = target_checkout(VERSION, patch=patch, dest=tmp_path / "patched")
    status = sshd.ssh(f"git -C {patched.root} status --porcelain").stdout
    assert status == " M python/sglang/version.py\n"
    remote = sshd.ssh(f"cat {patched.package_root}/sglang/version.py").stdout
    assert f"{VERSION}+patched" in remote
    # Same release, same commit: the layout is reproducible.
    head = "git -C {} rev-parse HEAD"
    assert sshd.ssh(head.format(clean.root)).stdout == sshd.ssh(head.format(patched.root)).stdout


def test_site_packages_layout(
    target_site_packages: Callable[..., Target],
    target_checkout: Callable[..., Target],
    make_patch: Callable[[Target, str, str, str], Path],
    tmp_path: Path,
) -> None:
    clean = target_site_packages(VERSION)
    assert clean.package_root == clean.root / "lib" / "python3.12" / "site-packages"
    info = clean.package_root / f"sglang-{VERSION}.dist-info"
    assert (info / "RECORD").is_file() and (info / "METADATA").is_file()
    assert f"Version: {VERSION}" in (info / "METADATA").read_text()
    assert (clean.package_root / "sglang" / "srt" / "server_args.py").is_file()
    assert (clean.root / "pyvenv.cfg").is_file()
    assert not (clean.root / ".git").exists()

    patch = make_patch(target_checkout(VERSION), "sglang/version.py", VERSION, "9.9.9")
    patched = target_site_packages(VERSION, patch=patch, dest=tmp_path / "venv")
    assert "9.9.9" in (patched.package_root / "sglang" / "version.py").read_text()


def test_setup_target_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine\n")
    result = subprocess.run(
        [str(SETUP_TARGET), VERSION, str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "not empty" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
