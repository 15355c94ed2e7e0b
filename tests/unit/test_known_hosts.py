"""known_hosts lines and ssh config values read as OpenSSH reads them, on strings: the names a
line's host field matches, the lines that are no entry, the tokens of UserKnownHostsFile; the
names a key is looked up under, and the decision ssh makes on a key, with what it records."""

from __future__ import annotations

import base64
import hashlib
import hmac
from pathlib import Path

import pytest

from tracer.errors import HostKeyChanged, HostKeyUnknown, KnownHostsUnusable
from tracer.sources.known_hosts import (
    HostNames,
    KnownHosts,
    check_key,
    entries,
    lookup_name,
    names_host,
    record,
)
from tracer.sources.ssh_config import expanded
from tracer.sources.sshlib import asyncssh

TOKENS = {"%": "%", "d": "/home/me", "h": "10.0.0.5", "n": "gpu", "p": "2222", "r": "bob"}


def hashed(name: str, salt: bytes = b"0123456789abcdefghij") -> str:
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


@pytest.mark.parametrize(
    ("field", "name", "named"),
    [
        ("gpu,10.0.0.5", "10.0.0.5", True),
        ("GPU", "gpu", True),  # OpenSSH compares in lower case
        ("gpu", "[gpu]:2222", False),  # another port is another name
        ("[gpu]:2222", "[gpu]:2222", True),
        ("[gpu]:*", "[gpu]:2222", True),
        ("*.example.com,!bad.example.com", "bad.example.com", False),
        ("*.example.com,!bad.example.com", "ok.example.com", True),
        ("gpu?", "gpu1", True),
        (hashed("[gpu]:2222"), "[gpu]:2222", True),
        (hashed("[gpu]:2222"), "gpu", False),
        ("|1|not base64|x", "gpu", False),
    ],
)
def test_the_names_a_host_field_matches(field: str, name: str, named: bool) -> None:
    assert names_host(field, name) is named


def test_lookup_names_carry_the_port_off_22() -> None:
    assert (lookup_name("gpu", 22), lookup_name("gpu", 2222)) == ("gpu", "[gpu]:2222")


def test_entries_keep_markers_and_refuse_a_line_that_is_none() -> None:
    text = b"# comment\n\n@revoked * ssh-ed25519 AAAA\n  gpu ssh-ed25519 BBBB laptop\n"
    found = entries(Path("kh"), text)
    assert [(e.number, e.marker, e.hosts, e.key) for e in found] == [
        (3, "@revoked", "*", "ssh-ed25519 AAAA"),
        (4, "", "gpu", "ssh-ed25519 BBBB laptop"),
    ]
    for bad in (b"gpu-without-a-key\n", b"@trusted gpu ssh-ed25519 AAAA\n"):
        with pytest.raises(KnownHostsUnusable, match="line 1 of the known_hosts file kh"):
            entries(Path("kh"), bad)


def test_user_known_hosts_file_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    monkeypatch.setenv("HOSTS", "/srv/hosts")
    assert expanded("UserKnownHostsFile", "~/.ssh/%n-%p_%r@%h", TOKENS) == Path(
        "/home/me/.ssh/gpu-2222_bob@10.0.0.5"
    )
    assert expanded("UserKnownHostsFile", "${HOSTS}/%%d", TOKENS) == Path("/srv/hosts/%d")
    with pytest.raises(KnownHostsUnusable, match="uses %Z, which OpenSSH does not know"):
        expanded("UserKnownHostsFile", "%d/%Z", TOKENS)
    with pytest.raises(KnownHostsUnusable, match="uses \\${NOT_SET_ANYWHERE}, which is not set"):
        expanded("UserKnownHostsFile", "${NOT_SET_ANYWHERE}/known_hosts", TOKENS)


# -- the names a key is looked up under --------------------------------------------------------


def test_a_host_key_alias_is_the_name_whatever_the_port() -> None:
    # sshconnect.c: with HostKeyAlias the name is the alias, bare, in lower case.
    assert HostNames.of("10.0.0.5", 22602, "EvilAlias", False).all() == ["evilalias"]
    assert HostNames.of("GPU", 22602, None, False).all() == ["[gpu]:22602", "gpu"]
    assert HostNames.of("gpu", 22, None, False).all() == ["gpu"]


def test_the_address_is_looked_up_under_check_host_ip_off_loopback_only() -> None:
    names = HostNames.of("gpu", 2222, "alias", check_ip=True)
    assert (names.ip("192.0.2.7"), names.ip("192.0.2.7", bare=True)) == (
        "[192.0.2.7]:2222",
        "192.0.2.7",
    )
    assert names.ip("127.0.0.1") is None and names.ip("::1") is None
    assert HostNames.of("gpu", 2222, "alias", check_ip=False).ip("192.0.2.7") is None
    # A host named by its address: the address is its name already.
    assert HostNames.of("192.0.2.7", 2222, None, check_ip=True).ip("192.0.2.7") is None


# -- the decision, as ssh -o StrictHostKeyChecking=yes|accept-new makes it ---------------------


KEY = asyncssh.generate_private_key("ssh-ed25519").convert_to_public()
OTHER = asyncssh.generate_private_key("ssh-ed25519").convert_to_public()


def line(names: str, key: asyncssh.SSHKey = KEY, marker: str = "") -> str:
    text = key.export_public_key().decode().split()
    return " ".join([*([marker] if marker else []), names, *text[:2]]) + "\n"


def decide(
    tmp_path: Path, text: str, names: HostNames, accept: bool, address: str = "127.0.0.1"
) -> list[str] | str:
    (tmp_path / "known_hosts").write_text(text)
    known = KnownHosts((tmp_path / "known_hosts",), ())
    try:
        return check_key(known, names, address, KEY, accept, "gpu")
    except (HostKeyChanged, HostKeyUnknown) as error:
        return type(error).__name__


ALIASED = HostNames.of("127.0.0.1", 2222, "alias", False)
PORTED = HostNames.of("gpu", 2222, None, False)
CHECKED = HostNames.of("gpu", 2222, "alias", True)


@pytest.mark.parametrize(
    ("text", "names", "address", "strict", "accepting"),
    [
        ("", PORTED, "127.0.0.1", "HostKeyUnknown", ["[gpu]:2222"]),
        (line("[gpu]:2222"), PORTED, "127.0.0.1", [], []),
        (line("[gpu]:2222", OTHER), PORTED, "127.0.0.1", "HostKeyChanged", "HostKeyChanged"),
        # Found under the name without its port: accepted, nothing recorded.
        (line("gpu"), PORTED, "127.0.0.1", [], []),
        (line("gpu", OTHER), PORTED, "127.0.0.1", "HostKeyUnknown", ["[gpu]:2222"]),
        # The alias alone counts, with the port or not.
        (line("alias", OTHER), ALIASED, "127.0.0.1", "HostKeyChanged", "HostKeyChanged"),
        (line("[alias]:2222"), ALIASED, "127.0.0.1", "HostKeyUnknown", ["alias"]),
        (line("[127.0.0.1]:2222"), ALIASED, "127.0.0.1", "HostKeyUnknown", ["alias"]),
        # Revoked anywhere looked up.
        (
            line("gpu") + line("*", KEY, "@revoked"),
            PORTED,
            "127.0.0.1",
            "HostKeyChanged",
            "HostKeyChanged",
        ),
        # CheckHostIP: the address's line counts too, and is recorded beside the name.
        ("", CHECKED, "192.0.2.7", "HostKeyUnknown", ["alias", "[192.0.2.7]:2222"]),
        (line("alias"), CHECKED, "192.0.2.7", [], ["[192.0.2.7]:2222"]),
        # New to ssh first; with accept-new, the address's line then refuses it.
        (line("[192.0.2.7]:2222", OTHER), CHECKED, "192.0.2.7", "HostKeyUnknown", "HostKeyChanged"),
        (
            line("alias") + line("[192.0.2.7]:2222", OTHER),
            CHECKED,
            "192.0.2.7",
            "HostKeyChanged",
            "HostKeyChanged",
        ),
        (line("[192.0.2.7]:2222"), CHECKED, "192.0.2.7", "HostKeyUnknown", ["alias"]),
    ],
)
def test_a_key_is_accepted_refused_and_recorded_as_by_ssh(
    tmp_path: Path,
    text: str,
    names: HostNames,
    address: str,
    strict: list[str] | str,
    accepting: list[str] | str,
) -> None:
    assert decide(tmp_path, text, names, accept=False, address=address) == strict
    assert decide(tmp_path, text, names, accept=True, address=address) == accepting


def test_a_key_is_recorded_as_ssh_records_it(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    record(known, ["alias", "[192.0.2.7]:2222"], KEY, hashed=False)
    assert known.read_text() == line("alias,[192.0.2.7]:2222")
    record(known, ["alias", "[192.0.2.7]:2222"], KEY, hashed=True)
    hashed = [x.split()[0] for x in known.read_text().splitlines()[1:]]
    assert [names_host(h, "alias") for h in hashed] == [True, False]
    assert [names_host(h, "[192.0.2.7]:2222") for h in hashed] == [False, True]
