"""ssh configs read as OpenSSH reads them, on files of a few lines: the options asyncssh
would read, each file read once and capped, Includes followed no deeper than OpenSSH's 16
(also from a block that does not apply), the first of ProxyCommand and ProxyJump kept, the
host-key options asyncssh leaves aside kept, a ProxyJump's hosts."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import pytest

from tracer.errors import SshConfigUnusable
from tracer.sources.remote import RemoteSpec, parse_jumps
from tracer.sources.ssh_config import (
    MAX_FILE_BYTES,
    MAX_INCLUDE_DEPTH,
    config_words,
    connection_options,
    read_host_config,
)
from tracer.sources.sshlib import asyncssh

SAMPLE = """\
# a comment, then blank lines

Host gpu gpu2
    HostName 10.0.0.%h
    Port=2222
    User = bob
    IdentityFile ~/.ssh/id_%h_%r
    IdentityFile ~/.ssh/second
    ProxyCommand ssh -W %h:%p jump
Host *
    Port 22
    HostKeyAlias alias-gpu
    UserKnownHostsFile ~/a "~/b c"
    Ciphers aes128-ctr
    SendEnv LANG
    SendEnv LC_*
Match user bob host 10.0.0.*
    Compression yes
Match !user bob
    ConnectTimeout 3
Match exec "true"
    ConnectTimeout 7
"""


def read(path: Path, host: str = "gpu") -> dict[str, object]:
    return read_host_config([(path, False)], host, None, None)._options


def test_the_options_are_those_asyncssh_reads(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(SAMPLE)
    theirs = asyncssh.config.SSHClientConfig.load(
        None, [config], False, False, False, getpass.getuser(), (), "gpu", ()
    )
    assert read(config) == theirs._options
    assert read(config)["ProxyCommand"] == "ssh -W 10.0.0.gpu:2222 jump"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("Port 22", ("port", ["22"])),
        ("Port=22", ("port", ["22"])),
        ("Port = 22", ("port", ["22"])),
        ("Port =22", ("port", ["22"])),
        ('IdentityFile "~/my key"', ("identityfile", ["~/my key"])),
        ("IdentityFile ~/a=b", ("identityfile", ["~/a=b"])),  # an option's = is its value's
        ("Match user=bob host=gpu", ("match", ["user", "bob", "host", "gpu"])),
    ],
)
def test_a_line_splits_as_asyncssh_splits_it(line: str, words: tuple[str, list[str]]) -> None:
    assert config_words(line) == words


def test_a_line_that_is_no_option_names_the_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("Host *\n    Port twenty\n")
    with pytest.raises(SshConfigUnusable, match=f"{config} line 2: Invalid Port integer"):
        read(config)


# -- what is read, and how much ------------------------------------------------------------


def test_a_file_past_the_cap_is_refused_naming_it_before_it_is_read_whole() -> None:
    with pytest.raises(SshConfigUnusable, match="the ssh config /dev/zero is larger than 1 MB"):
        read(Path("/dev/zero"))


def test_an_included_file_past_the_cap_is_refused_naming_it(tmp_path: Path) -> None:
    big = tmp_path / "big.conf"
    with big.open("wb") as file:  # sparse: no disk used
        file.truncate(MAX_FILE_BYTES + 1)
    config = tmp_path / "config"
    config.write_text(f"Include {big}\n")
    with pytest.raises(SshConfigUnusable, match=f"the ssh config {big} is larger than 1 MB"):
        read(config)


def test_a_fifo_with_no_writer_reads_as_empty(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read(fifo) == {}


def test_a_file_that_cannot_be_read_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SshConfigUnusable, match=f"cannot read the ssh config {tmp_path} "):
        read(tmp_path)
    with pytest.raises(SshConfigUnusable, match="the ssh config /nonexistent does not exist"):
        read(Path("/nonexistent"))


# -- Include -------------------------------------------------------------------------------


def test_a_config_that_includes_itself_is_refused_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(f"Include {config}\nPort 2222\n")
    with pytest.raises(SshConfigUnusable, match=f"the ssh config {config} includes files more"):
        read(config)


def test_includes_go_sixteen_deep_as_openssh_allows(tmp_path: Path) -> None:
    # config -> 1 -> ... -> 16 is read; one more level is refused, as by OpenSSH.
    for depth in range(MAX_INCLUDE_DEPTH + 1):
        nested = f"Include {tmp_path / str(depth + 1)}\n" if depth < MAX_INCLUDE_DEPTH else ""
        (tmp_path / str(depth)).write_text(nested + f"SendEnv LEVEL{depth}\n")
    assert read(tmp_path / "0")["SendEnv"] == [f"LEVEL{n}" for n in range(17)][::-1]
    (tmp_path / str(MAX_INCLUDE_DEPTH)).write_text(f"Include {tmp_path / 'more'}\n")
    (tmp_path / "more").write_text("")
    with pytest.raises(SshConfigUnusable, match="more than 16 deep"):
        read(tmp_path / "0")


def test_an_include_in_a_block_that_does_not_apply_is_read_for_its_includes(
    tmp_path: Path,
) -> None:
    # OpenSSH reads it (and refuses the loop) without applying what it sets.
    config = tmp_path / "config"
    config.write_text(f"Host elsewhere\n    Include {config}\n")
    with pytest.raises(SshConfigUnusable, match="includes files more than 16 deep"):
        read(config)
    inert = tmp_path / "inert"
    inert.write_text("Host *\n    Port 2222\n")
    config.write_text(f"Host elsewhere\n    Include {inert}\nHost *\n    User bob\n")
    assert read(config) == {"User": "bob"}


def test_relative_includes_are_in_dot_ssh_in_name_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / ".ssh" / "conf.d"
    folder.mkdir(parents=True)
    (folder / "b.conf").write_text("SendEnv B\n")
    (folder / "a.conf").write_text("SendEnv A\nPort 2200\n")
    (folder / "sub").mkdir()  # a folder the pattern matches is passed over
    config = tmp_path / "config"
    config.write_text("Include conf.d/*\nPort 2222\n")
    assert read(config) == {"SendEnv": ["A", "B"], "Port": 2200}


def test_a_fan_of_includes_stops(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (tmp_path / "empty").write_text("")
    config.write_text(f"Include {' '.join([str(tmp_path / 'empty')] * 300)}\n")
    with pytest.raises(SshConfigUnusable, match="includes more than 256 files"):
        read(config)


# -- the options of OpenSSH's host key check ------------------------------------------------


def test_the_host_key_options_are_kept(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "Host gpu\n    CheckHostIP yes\n    HashKnownHosts no\n    RevokedHostKeys ~/revoked\n"
        "Host *\n    HashKnownHosts yes\n"
    )
    assert read(config) == {
        "CheckHostIP": True,
        "HashKnownHosts": False,
        "RevokedHostKeys": "~/revoked",
    }


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        (["ProxyCommand nc %h %p", "ProxyJump jump"], {"ProxyCommand": "nc gpu 22"}),
        (["ProxyJump jump", "ProxyCommand nc %h %p"], {"ProxyJump": "jump"}),
        (["ProxyJump none", "ProxyJump jump"], {"ProxyJump": None}),
        (["ProxyCommand=nc %h %p"], {"ProxyCommand": "nc gpu 22"}),
    ],
)
def test_of_proxycommand_and_proxyjump_the_first_wins(
    tmp_path: Path, lines: list[str], kept: dict[str, object]
) -> None:
    config = tmp_path / "config"
    config.write_text("\n".join(lines) + "\n")
    assert read(config) == kept


def test_asyncssh_is_handed_the_options_read(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(f"Host gpu\n    HostName 10.1.2.3\n    Port 2222\n    Include {config}x\n")
    settings = connection_options(read_host_config([(config, False)], "gpu", None, None))
    config.unlink()  # asyncssh reads no file again
    assert (settings.host, settings.port) == ("10.1.2.3", 2222)
    again = asyncssh.SSHClientConnectionOptions(settings, config=[], host="gpu")
    assert (again.host, again.port) == ("10.1.2.3", 2222)


# -- a ProxyJump's hosts -------------------------------------------------------------------


def test_a_proxyjump_names_its_hosts_in_order() -> None:
    hops = parse_jumps("alice@bastion:2222,ssh://bob@[fe80::1]:22,plain")
    assert hops == [
        RemoteSpec("bastion", "alice", 2222, None, "alice@bastion:2222"),
        RemoteSpec("fe80::1", "bob", 22, None, "ssh://bob@[fe80::1]:22"),
        RemoteSpec("plain", None, None, None, "plain"),
    ]
    with pytest.raises(SshConfigUnusable, match="names a host as 'a b'"):
        parse_jumps("ok,a b")
