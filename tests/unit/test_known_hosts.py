"""known_hosts lines and ssh config values read as OpenSSH reads them, on strings: the names a
line's host field matches, the lines that are no entry, the tokens of UserKnownHostsFile."""

from __future__ import annotations

import base64
import hashlib
import hmac
from pathlib import Path

import pytest

from tracer.errors import KnownHostsUnusable
from tracer.sources.known_hosts import entries, expanded, lookup_name, names_host

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
    assert expanded("~/.ssh/%n-%p_%r@%h", TOKENS) == Path("/home/me/.ssh/gpu-2222_bob@10.0.0.5")
    assert expanded("${HOSTS}/%%d", TOKENS) == Path("/srv/hosts/%d")
    with pytest.raises(KnownHostsUnusable, match="uses %Z, which OpenSSH does not know"):
        expanded("%d/%Z", TOKENS)
    with pytest.raises(KnownHostsUnusable, match="uses \\${NOT_SET_ANYWHERE}, which is not set"):
        expanded("${NOT_SET_ANYWHERE}/known_hosts", TOKENS)
