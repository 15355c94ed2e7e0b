"""SSH connections with asyncssh: ~/.ssh/config, the agent and known_hosts honoured; an
unknown host key refused unless the user accepts new keys, a changed one refused always."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from tracer.errors import (
    AuthFailed,
    ConnectionTimeout,
    HostKeyChanged,
    HostKeyUnknown,
    HostUnreachable,
    SgtraceError,
)
from tracer.sources.cache import write_atomic
from tracer.sources.remote import RemoteSpec, SshOptions
from tracer.sources.sshlib import asyncssh

# AES-GCM first, then asyncssh's defaults: AES runs in hardware, and asyncssh decrypts it
# in one call a packet (chacha20-poly1305, its first choice, takes several): the bench's
# uncompressed stream took 0.52 s instead of 0.71 s.
PREFERRED_CIPHERS = "^aes128-gcm@openssh.com,aes256-gcm@openssh.com"
CIPHERS_LINE = re.compile(r"^\s*Ciphers\b", re.I | re.M)

# -- connecting ----------------------------------------------------------------------------


def connect_kwargs(spec: RemoteSpec, options: SshOptions) -> dict[str, object]:
    kwargs: dict[str, object] = {"host": spec.host, "connect_timeout": options.timeout}
    if spec.port:
        kwargs["port"] = spec.port
    if spec.user:
        kwargs["username"] = spec.user
    if options.config is not None:
        kwargs["config"] = [str(options.config)]
    if options.identities:
        kwargs["client_keys"] = [str(p) for p in options.identities]
    if options.known_hosts is not None:
        # A file not made yet knows no host (asyncssh would fail to read it); accepting a
        # new key creates it.
        exists = options.known_hosts.exists()
        kwargs["known_hosts"] = (
            str(options.known_hosts) if exists else asyncssh.import_known_hosts("")
        )
    if not options.check_host_key:
        kwargs["known_hosts"] = None
    if not sets_ciphers(options.config or Path.home() / ".ssh" / "config"):
        kwargs["encryption_algs"] = PREFERRED_CIPHERS
    return kwargs


def sets_ciphers(config: Path) -> bool:
    """Whether the ssh config chooses its own ciphers (then they are left as it says)."""
    try:
        return CIPHERS_LINE.search(config.read_text("utf-8", "replace")) is not None
    except OSError:
        return False


def known_hosts_path(options: SshOptions) -> Path:
    return options.known_hosts or Path.home() / ".ssh" / "known_hosts"


async def connect(spec: RemoteSpec, options: SshOptions) -> asyncssh.SSHClientConnection:
    """A verified connection. An unknown host key is refused unless the user said to accept
    new keys (then it is recorded); a changed key is refused always."""
    kwargs = connect_kwargs(spec, options)
    try:
        return await asyncssh.connect(**kwargs)
    except asyncssh.HostKeyNotVerifiable:
        pass
    except BaseException as exc:
        raise connection_error(spec, exc) from exc
    # Look at the key the host offers, without trusting it for anything yet.
    try:
        probe = await asyncssh.connect(**{**kwargs, "known_hosts": None})
    except BaseException as exc:
        raise connection_error(spec, exc) from exc
    key = probe.get_server_host_key()
    address = probe.get_extra_info("peername")[0]
    probe.close()
    name, port = await checked_name(kwargs)
    fingerprint = key.get_fingerprint() if key is not None else "?"
    path = known_hosts_path(options)
    if recorded_keys(path, name, address, port):
        raise HostKeyChanged(
            f"the host key of {spec.label} has CHANGED (now {fingerprint}); this may be an "
            "attack, so sgtrace refuses",
            f"if the change is expected, remove the old key with "
            f"`ssh-keygen -R {known_hosts_name(name, port)} -f {path}`",
        )
    if not options.accept_new_host_key:
        raise HostKeyUnknown(
            f"the host key of {spec.label} is not in {path} ({fingerprint})",
            "check it, then run again with --accept-new-host-key to record it",
        )
    record_key(path, known_hosts_name(name, port), key)
    try:
        return await asyncssh.connect(**{**kwargs, "known_hosts": str(path)})
    except BaseException as exc:
        raise connection_error(spec, exc) from exc


async def checked_name(kwargs: dict[str, object]) -> tuple[str, int]:
    """The name and port asyncssh looks up in known_hosts for these connect arguments: the
    ssh config's HostKeyAlias, else its HostName, else the host as given (an alias of
    ~/.ssh/config is never the name checked)."""
    # `()` as asyncssh.connect passes it: read ~/.ssh/config, take its Port.
    defaults: dict[str, object] = {"config": (), "port": ()}
    settings = await asyncssh.SSHClientConnectionOptions.construct(**{**defaults, **kwargs})
    return settings.host_key_alias or settings.host, settings.port


def known_hosts_name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def recorded_keys(path: Path, host: str, address: str, port: int) -> bool:
    if not path.exists():
        return False
    known = asyncssh.read_known_hosts(str(path))
    return any(known.match(name, address, port)[0] for name in (host, address))


def record_key(path: Path, name: str, key: asyncssh.SSHKey) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = f"{name} {key.export_public_key('openssh').decode().strip()}\n"
    old = path.read_bytes() if path.exists() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    write_atomic(path, old + line.encode())


def connection_error(spec: RemoteSpec, exc: BaseException) -> SgtraceError:
    if isinstance(exc, SgtraceError):
        return exc
    if isinstance(exc, asyncssh.PermissionDenied):
        return AuthFailed(
            f"{spec.label} refused every key offered",
            "load a key into ssh-agent, give -i KEY, or set IdentityFile in ~/.ssh/config",
        )
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return ConnectionTimeout(
            f"{spec.label} did not answer in time", "check that the host is up and reachable"
        )
    if isinstance(exc, OSError | asyncssh.Error):
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc)
        return HostUnreachable(
            f"cannot connect to {spec.label} ({reason})",
            "check the host name and port, or its Host entry in ~/.ssh/config",
        )
    return HostUnreachable(f"cannot connect to {spec.label} ({exc})", "check the host")
