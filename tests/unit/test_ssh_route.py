"""The hosts sgtrace goes through to reach one, as `ssh -J` goes: `ProxyJump a,b` reaches the
target through b and b through a, b's own ProxyJump left aside (ssh runs `ssh -J a ... b`),
a's own followed (ssh runs `ssh ... a`); each host's config read once, on files alone; a loop
or a way too long is one error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracer.errors import SshConfigUnusable
from tracer.sources.remote import RemoteSpec, SshOptions
from tracer.sources.ssh import MAX_HOPS, route


def hosts(config: Path, target: str = "target") -> list[tuple[str, str, int]]:
    """The way to TARGET as (label, host name, port) from the first host to the target."""
    spec = RemoteSpec(target, None, None, None, target)
    return [
        (h.label, h.settings.host, h.settings.port) for h in route(spec, SshOptions(config=config))
    ]


def test_a_proxyjump_list_is_gone_through_as_ssh_j_goes(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "Host target\n    ProxyJump a,bob@b:2200\n"
        "Host b\n    HostName 10.0.0.2\n    ProxyJump ignored\n"  # b is reached through a
        "Host a\n    HostName 10.0.0.1\n    ProxyJump c\n"  # a as its own block says
        "Host c\n    HostName 10.0.0.3\n    Port 2222\n"
    )
    assert hosts(config) == [
        ("c (jump host to target)", "10.0.0.3", 2222),
        ("a (jump host to target)", "10.0.0.1", 22),
        ("bob@b:2200 (jump host to target)", "10.0.0.2", 2200),
        ("target", "target", 22),
    ]


def test_a_proxycommand_given_first_leaves_the_proxyjump_aside(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("Host target\n    ProxyCommand nc %h %p\n    ProxyJump a\n")
    assert hosts(config) == [("target", "target", 22)]


def test_a_proxyjump_that_comes_back_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "Host target\n    ProxyJump a\nHost a\n    ProxyJump b\nHost b\n    ProxyJump a\n"
    )
    with pytest.raises(SshConfigUnusable, match=r"the ProxyJump of target loops \(at a\)"):
        hosts(config)


def test_a_way_through_too_many_hosts_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("".join(f"Host h{n}\n    ProxyJump h{n + 1}\n" for n in range(MAX_HOPS + 1)))
    with pytest.raises(SshConfigUnusable, match=f"goes through over {MAX_HOPS} hosts"):
        hosts(config, "h0")
