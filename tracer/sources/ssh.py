"""SSH connections with asyncssh: ~/.ssh/config and the agent honoured, host keys checked
against every known_hosts file OpenSSH would read (tracer/sources/known_hosts.py); an
unknown host key refused unless the user accepts new keys, a changed or revoked one refused
always."""

from __future__ import annotations

import asyncio
import os
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
from tracer.sources.known_hosts import KnownHosts, known_hosts_for, lookup_name, record
from tracer.sources.remote import RemoteSpec, SshOptions
from tracer.sources.sshlib import asyncssh

# AES-GCM first, then asyncssh's defaults: AES runs in hardware, and asyncssh decrypts it
# in one call a packet (chacha20-poly1305, its first choice, takes several): the bench's
# uncompressed stream took 0.52 s instead of 0.71 s.
PREFERRED_CIPHERS = "^aes128-gcm@openssh.com,aes256-gcm@openssh.com"
CIPHERS_LINE = re.compile(r"^\s*Ciphers\b", re.I | re.M)
SYSTEM_CONFIG = Path("/etc/ssh/ssh_config")

# -- connecting ----------------------------------------------------------------------------


def connect_kwargs(spec: RemoteSpec, options: SshOptions) -> dict[str, object]:
    """asyncssh.connect's arguments, but for `known_hosts` (connect() adds it)."""
    kwargs: dict[str, object] = {"host": spec.host, "connect_timeout": options.timeout}
    if spec.port:
        kwargs["port"] = spec.port
    if spec.user:
        kwargs["username"] = spec.user
    if options.config is not None:
        kwargs["config"] = [str(options.config)]
    if options.identities:
        kwargs["client_keys"] = [str(p) for p in options.identities]
    if not sets_ciphers(options.config or Path.home() / ".ssh" / "config"):
        kwargs["encryption_algs"] = PREFERRED_CIPHERS
    return kwargs


def sets_ciphers(config: Path) -> bool:
    """Whether the ssh config chooses its own ciphers (then they are left as it says)."""
    try:
        return CIPHERS_LINE.search(config.read_text("utf-8", "replace")) is not None
    except OSError:
        return False


async def connect(spec: RemoteSpec, options: SshOptions) -> asyncssh.SSHClientConnection:
    """A verified connection. The host key must be one recorded for the host in a
    known_hosts file; an unknown key is refused unless the user said to accept new keys
    (then it is recorded in the first user file, as OpenSSH does); a key that differs from
    one recorded, or is marked @revoked, is refused always."""
    kwargs = connect_kwargs(spec, options)
    if not options.check_host_key:
        return await connected({**kwargs, "known_hosts": None}, spec)
    try:
        # Built here, not in a thread as `construct` does: the files are small and local.
        settings = asyncssh.SSHClientConnectionOptions(
            **{**kwargs, "config": config_files(options)}
        )
    except (OSError, asyncssh.Error) as exc:
        raise connection_error(spec, exc) from exc
    known = known_hosts_for(settings, spec.host, options.known_hosts)
    # The name asyncssh looks up: the ssh config's HostKeyAlias, else its HostName and Port.
    name = lookup_name(settings.host_key_alias or settings.host, settings.port)
    if not settings.config.get("HostKeyAlgorithms"):
        kwargs["server_host_key_algs"] = known.host_key_algorithms(name)
    try:
        return await asyncssh.connect(**kwargs, known_hosts=known.trusted)
    except asyncssh.HostKeyNotVerifiable:
        pass
    except BaseException as exc:
        raise connection_error(spec, exc) from exc
    name = known.asked or name
    key = await offered_key(kwargs, spec, options)
    refuse_known_name(spec, known, name, key)
    first = known.user[0] if known.user else None
    if not options.accept_new_host_key or first is None:
        raise HostKeyUnknown(
            f"the host key of {spec.label} is not in {files_told(known)} ({fingerprint(key)})",
            "check it, then run again with --accept-new-host-key to record it"
            if first is not None
            else "the ssh config reads no user known_hosts file (UserKnownHostsFile none): "
            "give --known-hosts FILE to record it there",
        )
    record(first, name, key)
    known.accepted[name] = key  # trusted even where the file keeps nothing (/dev/null)
    if "server_host_key_algs" in kwargs:
        kwargs["server_host_key_algs"] = known.host_key_algorithms(name)
    return await connected({**kwargs, "known_hosts": known.trusted}, spec)


def config_files(options: SshOptions) -> list[str]:
    """The ssh config files OpenSSH reads: the one given (`ssh -F`), else ~/.ssh/config
    then /etc/ssh/ssh_config, each if it can be read."""
    if options.config is not None:
        return [str(options.config)]
    found = [Path.home() / ".ssh" / "config", SYSTEM_CONFIG]
    return [str(p) for p in found if p.is_file() and os.access(p, os.R_OK)]


async def connected(kwargs: dict[str, object], spec: RemoteSpec) -> asyncssh.SSHClientConnection:
    try:
        return await asyncssh.connect(**kwargs)
    except BaseException as exc:
        raise connection_error(spec, exc) from exc


async def offered_key(
    kwargs: dict[str, object], spec: RemoteSpec, options: SshOptions
) -> asyncssh.SSHKey:
    """The key the host offers, read in a key exchange alone: nothing is sent to an
    unverified host (no login, no key of ours). The same host key algorithms are asked as
    in the connection refused, so the host shows the same key."""
    wanted = ("host", "port", "config", "server_host_key_algs")
    probe = {k: v for k, v in kwargs.items() if k in wanted}
    try:
        key = await asyncio.wait_for(asyncssh.get_server_host_key(**probe), options.timeout)
    except BaseException as exc:
        raise connection_error(spec, exc) from exc
    if key is None:
        raise HostKeyUnknown(f"{spec.label} offered no host key", "check the host")
    # A certificate no @cert-authority line vouches for: its key is checked, as OpenSSH does.
    return key.key if isinstance(key, asyncssh.SSHCertificate) else key


def refuse_known_name(spec: RemoteSpec, known: KnownHosts, name: str, key: asyncssh.SSHKey) -> None:
    """Raise HostKeyChanged if a known_hosts file marks KEY @revoked for NAME, or records
    another key for it (or one sgtrace cannot read): OpenSSH would refuse it too."""
    found = known.lookup(name)
    for entry in found:
        if entry.marker == "@revoked" and entry.key == key:
            raise HostKeyChanged(
                f"the host key of {spec.label} ({fingerprint(key)}) is marked @revoked in "
                f"{entry.path} line {entry.line}; sgtrace refuses it",
                "ask the host's administrator for its new key",
            )
    recorded = [e for e in found if not e.marker]
    if not recorded:
        return  # @cert-authority lines alone record no key: as new, for OpenSSH too
    same = next((e for e in recorded if e.key == key), None)
    if same is not None:  # recorded, yet refused: a certificate that failed, or a race
        raise HostKeyChanged(
            f"the host key of {spec.label} ({fingerprint(key)}) is recorded in {same.path} "
            f"line {same.line}, yet the host could not be verified with it",
            "check the host's certificate, or run again",
        )
    entry = next((e for e in recorded if e.key is None), recorded[0])
    if entry.key is None:
        what = f"records a key for it that sgtrace cannot read ({entry.path} line {entry.line})"
    else:
        what = f"recorded another in {entry.path} line {entry.line}"
    files = dict.fromkeys(e.path for e in recorded)
    removal = " and ".join(f"`ssh-keygen -R {name} -f {path}`" for path in files)
    raise HostKeyChanged(
        f"the host key of {spec.label} has CHANGED (now {fingerprint(key)}; known_hosts "
        f"{what}); this may be an attack, so sgtrace refuses",
        f"if the change is expected, remove the old key with {removal}",
    )


def files_told(known: KnownHosts) -> str:
    """The known_hosts files read, for a message: the first user file (where a key is
    recorded) first, even when it is not made yet."""
    shown = [*known.user[:1], *(p for p in known.read if p not in known.user[:1])]
    if not shown:
        return "any known_hosts file"
    return str(shown[0]) + "".join(f", nor in {p}" for p in shown[1:])


def fingerprint(key: asyncssh.SSHKey) -> str:
    return key.get_fingerprint()


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
