"""Host keys checked as OpenSSH checks them, through the real sshd: every known_hosts file the
ssh config names (UserKnownHostsFile with its tokens, GlobalKnownHostsFile) and
--known-hosts; a key recorded for the host in any of them that differs from the one offered
is refused, with or without --accept-new-host-key, and no file changes; hashed names,
wildcards, @revoked and @cert-authority lines read as OpenSSH reads them; a known_hosts that
cannot be used is one line naming it."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import asyncssh
import pytest

from tests.integration.fetching import ROOT, Run, cached_files, write_package
from tests.sshd import SshServer, ssh_client_env, write_client_home


@pytest.fixture
def home(sshd: SshServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A client home of this test's own for the module's server: the client key, the
    server's key in ~/.ssh/known_hosts, a config whose `target` names that file."""
    home = write_client_home(tmp_path / "home", [sshd], sshd.client_key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})


def configure(home: Path, server: SshServer, *lines: str) -> None:
    """The server's Host block in HOME's ssh config, LINES in place of its known_hosts ones."""
    block = server.config_block(home).splitlines()
    kept = [line for line in block if "KnownHostsFile" not in line]
    (home / ".ssh" / "config").write_text("\n".join(kept + [f"    {x}" for x in lines]) + "\n")


def wrong_key() -> str:
    """A fresh ed25519 public key, `TYPE BASE64`: what an attacker's host would offer."""
    key = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
    return " ".join(key.split()[:2])


def name(server: SshServer) -> str:
    return f"[{server.host}]:{server.port}"


def sgtrace_process(
    home: Path, cache: Path, *args: str, preexec: Callable[[], None] | None = None
) -> Run:
    """`sgtrace ARGS` as its own process with this HOME and CACHE, killed after 60 s (a
    regression here would hang on a FIFO)."""
    done = subprocess.run(
        [sys.executable, "-m", "tracer.cli", *args],
        cwd=ROOT,
        env={**ssh_client_env(home), "SGTRACE_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        preexec_fn=preexec,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


# -- a key recorded anywhere OpenSSH looks is never replaced ----------------------------------


def test_changed_key_in_the_file_the_config_names_is_refused_even_when_accepting(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], cache: Path, tree: Path
) -> None:
    # The attack: ~/.ssh/known_hosts knows nothing, the file the config names has the
    # host's old key; the host now offers another.
    default = home / ".ssh" / "known_hosts"
    default.write_text("")
    named = home / ".ssh" / f"hosts-{sshd.port}"
    named.write_text(f"{name(sshd)} {wrong_key()}\n")
    configure(home, sshd, "UserKnownHostsFile ~/.ssh/known_hosts %d/.ssh/hosts-%p")
    before = snapshot(default, named)

    for flags in ((), ("--accept-new-host-key",)):
        line = sgtrace("fetch", f"{sshd.alias}:{tree}", *flags).error_line()
        assert f"the host key of {sshd.alias} has CHANGED" in line
        assert f"{named} line 1" in line
        assert f"ssh-keygen -R {name(sshd)} -f {named}" in line

    assert snapshot(default, named) == before
    assert cached_files(cache) == {}


def test_changed_key_in_the_global_file_is_refused_even_when_accepting(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tmp_path: Path, tree: Path
) -> None:
    (home / ".ssh" / "known_hosts").write_text("")
    system = tmp_path / "ssh_known_hosts"
    system.write_text(f"{name(sshd)} {wrong_key()}\n")
    configure(home, sshd, "UserKnownHostsFile ~/.ssh/known_hosts", f"GlobalKnownHostsFile {system}")
    before = snapshot(home / ".ssh" / "known_hosts", system)

    line = sgtrace("fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key").error_line()

    assert "has CHANGED" in line and f"{system} line 1" in line
    assert snapshot(home / ".ssh" / "known_hosts", system) == before


def test_changed_key_in_a_config_file_is_refused_with_another_known_hosts_given(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tmp_path: Path, tree: Path
) -> None:
    (home / ".ssh" / "known_hosts").write_text(f"{name(sshd)} {wrong_key()}\n")
    mine = tmp_path / "mine"

    line = sgtrace(
        "fetch", f"{sshd.alias}:{tree}", "--known-hosts", str(mine), "--accept-new-host-key"
    ).error_line()

    assert "has CHANGED" in line
    assert not mine.exists()


def test_hashed_names_are_matched(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    known = home / ".ssh" / "known_hosts"
    subprocess.run(["ssh-keygen", "-H", "-f", str(known)], check=True, capture_output=True)
    assert known.read_text().startswith("|1|")
    assert sgtrace("fetch", f"{sshd.alias}:{tree}").code == 0  # the right key, hashed

    known.write_text(f"{name(sshd)} {wrong_key()}\n")
    subprocess.run(["ssh-keygen", "-H", "-f", str(known)], check=True, capture_output=True)
    hashed = known.read_bytes()
    line = sgtrace("fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key").error_line()
    assert "has CHANGED" in line
    assert known.read_bytes() == hashed


def test_wildcards_and_negations_are_matched_as_openssh_does(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    known = home / ".ssh" / "known_hosts"
    known.write_text(f"[127.0.0.?]:* {wrong_key()}\n")
    assert "has CHANGED" in sgtrace("fetch", f"{sshd.alias}:{tree}").error_line()

    # A negation excludes the host: that line says nothing about it.
    known.write_text(f"[127.0.0.?]:*,!{name(sshd)} {wrong_key()}\n")
    line = sgtrace("fetch", f"{sshd.alias}:{tree}").error_line()
    assert f"the host key of {sshd.alias} is not in {known}" in line


def test_a_revoked_key_is_refused_even_when_also_recorded(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    known = home / ".ssh" / "known_hosts"
    known.write_text(known.read_text() + f"@revoked * {sshd.host_public_key}\n")
    before = known.read_bytes()

    line = sgtrace("fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key").error_line()

    assert f"is marked @revoked in {known} line 2" in line
    assert known.read_bytes() == before


def test_a_certificate_authority_alone_leaves_a_plain_key_new(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    # As for OpenSSH: a @cert-authority line vouches for certificates, and records no key.
    known = home / ".ssh" / "known_hosts"
    authority = f"@cert-authority {name(sshd)} {wrong_key()}\n"
    known.write_text(authority)

    refused = sgtrace("fetch", f"{sshd.alias}:{tree}").error_line()
    assert "is not in" in refused and "--accept-new-host-key" in refused
    assert sgtrace("fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key").code == 0
    assert known.read_text() == authority + sshd.known_hosts_line()


# -- where a new key goes ---------------------------------------------------------------------


def test_an_accepted_key_goes_to_the_first_file_the_config_names(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    first = home / "first" / f"{sshd.alias}-{sshd.port}"  # its folder is made
    second = home / ".ssh" / "known_hosts"  # holds the key, but only OpenSSH's default
    configure(home, sshd, "UserKnownHostsFile ~/first/%n-%p ~/.ssh/second")

    refused = sgtrace("fetch", f"{sshd.alias}:{tree}").error_line()
    assert f"is not in {first} (" in refused
    accepted = sgtrace("fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key")

    assert accepted.code == 0, accepted.err
    assert first.read_text() == sshd.known_hosts_line()
    assert stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    assert second.read_text() == sshd.known_hosts_line()  # not read, not written
    assert sgtrace("fetch", f"{sshd.alias}:{tree}").code == 0


def test_no_user_file_still_checks_the_key(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    # `UserKnownHostsFile none` once made asyncssh skip the check altogether.
    configure(home, sshd, "UserKnownHostsFile none", "GlobalKnownHostsFile /dev/null")

    for flags in ((), ("--accept-new-host-key",)):
        line = sgtrace("fetch", f"{sshd.alias}:{tree}", *flags).error_line()
        assert "is not in /dev/null" in line
    assert "give --known-hosts FILE" in line


# -- what held ------------------------------------------------------------------------------


def test_strict_host_key_checking_no_is_ignored(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    (home / ".ssh" / "known_hosts").write_text("")
    configure(home, sshd, "StrictHostKeyChecking no")
    assert "is not in" in sgtrace("fetch", f"{sshd.alias}:{tree}").error_line()


def test_user_known_hosts_file_dev_null_is_refused(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tree: Path
) -> None:
    configure(home, sshd, "UserKnownHostsFile /dev/null", "GlobalKnownHostsFile /dev/null")
    assert "is not in /dev/null" in sgtrace("fetch", f"{sshd.alias}:{tree}").error_line()


# -- what a known_hosts file is -----------------------------------------------------------------


def test_a_known_hosts_fifo_is_written_through_not_replaced(
    sshd: SshServer, home: Path, cache: Path, tmp_path: Path, tree: Path
) -> None:
    # `--known-hosts /dev/null --accept-new-host-key` once made /dev/null a regular file; a
    # FIFO stands in for the device here, so that a failure harms no other test.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    (home / ".ssh" / "known_hosts").write_text("")

    run = sgtrace_process(
        home,
        cache,
        "fetch",
        f"{sshd.alias}:{tree}",
        "--known-hosts",
        str(fifo),
        "--accept-new-host-key",
    )

    reader.join(10)
    assert run.code == 0, run.err
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received == [sshd.known_hosts_line().encode()]


def test_a_symlinked_known_hosts_keeps_its_link(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tmp_path: Path, tree: Path
) -> None:
    real = tmp_path / "dotfiles" / "known_hosts"
    real.parent.mkdir()
    real.write_text("# mine\n")
    real.chmod(0o600)
    known = home / ".ssh" / "known_hosts"
    known.unlink()
    known.symlink_to(real)

    assert sgtrace("fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key").code == 0

    assert known.is_symlink() and known.resolve() == real
    assert real.read_text() == "# mine\n" + sshd.known_hosts_line()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


@pytest.mark.parametrize("kind", ["folder", "garbage", "under a file"])
def test_an_unusable_known_hosts_is_one_line_naming_it(
    sshd: SshServer, home: Path, sgtrace: Callable[..., Run], tmp_path: Path, tree: Path, kind: str
) -> None:
    known = home / ".ssh" / "known_hosts"
    known.unlink()
    if kind == "folder":
        known.mkdir()
        expected = f"cannot read the known_hosts file {known} (it is a folder)"
    elif kind == "garbage":
        known.write_bytes(sshd.known_hosts_line().encode() + b"\x89PNG\r\n\x1a\n\x00\xff")
        expected = f"line 2 of the known_hosts file {known} is not a known_hosts entry"
    else:
        (tmp_path / "file").write_text("")
        known = tmp_path / "file" / "known_hosts"
        configure(home, sshd, f"UserKnownHostsFile {known}")
        expected = f"cannot read the known_hosts file {known} (Not a directory)"

    line = sgtrace("fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key").error_line()

    assert expected in line


def test_a_known_hosts_that_cannot_be_written_is_one_line_naming_it(
    sshd: SshServer, home: Path, cache: Path, tree: Path
) -> None:
    # A disk that refuses the write (full, read-only, an immutable file): here a file-size
    # limit on the process, which every file system enforces, even for root.
    known = home / ".ssh" / "known_hosts"
    known.write_text("# padding\n" * 2000)  # 20 kB

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 10, resource.RLIM_INFINITY))

    run = sgtrace_process(
        home, cache, "fetch", f"{sshd.alias}:{tree}", "--accept-new-host-key", preexec=limited
    )

    assert f"cannot record the host key in {known} (File too large)" in run.error_line()
    assert known.read_text() == "# padding\n" * 2000
