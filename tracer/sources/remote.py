"""Remote source specs (`host:/path`, `user@host`, `ssh://user@host:port/path`), the hosts of
a ProxyJump, and the one shell script that probes the remote side. Nothing here touches the
network."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tracer.errors import SshConfigUnusable

SSH_URL = re.compile(
    r"^ssh://(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]]+\]|[^:/]+)(?::(?P<port>\d+))?(?P<path>/.*)?$"
)
JUMP = re.compile(
    r"^(?:ssh://)?(?:(?P<user>[^/\s]+)@)?(?P<host>\[[^\]/\s]+\]|[^:@/\[\]\s]+)"
    r"(?::(?P<port>\d+))?/?$"
)
SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>[A-Za-z0-9_.\-\[\]]+)(?::(?P<path>.*))?$")


@dataclass(frozen=True, slots=True)
class RemoteSpec:
    host: str  # a host name, an address, or a Host alias of ~/.ssh/config
    user: str | None
    port: int | None
    path: str | None  # None: find the package (a PackageHint) on the host
    text: str  # as the user wrote it

    @property
    def label(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.host}{port}"


# Seconds a host may stay silent in the middle of an answer: the probe's `find` and
# `git status` over a large tree on a cold disk, or `python -c 'import PKG'`, say nothing
# while they work.
IDLE_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class SshOptions:
    known_hosts: Path | None = None  # read before the ssh config's files; new keys go here
    config: Path | None = None  # None: ~/.ssh/config
    identities: tuple[Path, ...] = ()
    accept_new_host_key: bool = False  # like OpenSSH's StrictHostKeyChecking=accept-new
    check_host_key: bool = True  # False only when the user explicitly opts out
    timeout: float = 15.0  # to connect
    idle_timeout: float = IDLE_TIMEOUT  # between two pieces of an answer


def parse_remote(text: str, bare_host: bool = False) -> RemoteSpec | None:
    """TEXT as a remote source, or None if it is not one. `host:path` and `user@host[:path]`
    are remote; a bare `host` only when BARE_HOST (the `fetch` command's arguments)."""
    match = SSH_URL.match(text)
    if match:
        return RemoteSpec(
            host=match["host"].strip("[]"),
            user=match["user"],
            port=int(match["port"]) if match["port"] else None,
            path=match["path"] or None,
            text=text,
        )
    if text.startswith(("/", ".", "~", "pypi:")) or "://" in text:
        return None
    match = SCP_LIKE.match(text)
    if not match:
        return None
    if match["path"] is None and match["user"] is None and not bare_host:
        return None
    return RemoteSpec(
        host=match["host"].strip("[]"),
        user=match["user"],
        port=None,
        path=match["path"] or None,
        text=text,
    )


def parse_jumps(text: str) -> list[RemoteSpec]:
    """The hosts of the ProxyJump TEXT in the order they are gone through:
    `[user@]host[:port]` or `ssh://[user@]host[:port]`, separated by commas."""
    hops = []
    for part in text.split(","):
        match = JUMP.match(part.strip())
        if not match:
            raise SshConfigUnusable(
                f"ProxyJump {text} in the ssh config names a host as {part.strip()!r}",
                "write each jump host as [user@]host[:port]",
            )
        port = int(match["port"]) if match["port"] else None
        spec = RemoteSpec(match["host"].strip("[]"), match["user"], port, None, part.strip())
        hops.append(spec)
    return hops


def probe_script() -> str:
    """The POSIX sh script run once per host: tools, candidates, the tree's manifest."""
    # Beside this module (package data); importlib.resources would cost ~30 ms of imports.
    return (Path(__file__).parent / "probe.sh").read_text("utf-8")
