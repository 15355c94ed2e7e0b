"""SSH connections with asyncssh, as OpenSSH's ssh(1) makes them: the ssh config read once
for each host (tracer/sources/ssh_config.py), the agent honoured, a ProxyJump's hosts gone
through in turn, each host's key checked in the key exchange, before any key of the user's
is offered, exactly as ssh checks it (tracer/sources/known_hosts.py): an unknown key
refused unless the user accepts new keys (then recorded where ssh records it), a changed
or revoked one refused always. One connection a host: a ProxyCommand runs once."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from tracer.errors import (
    AuthFailed,
    ConnectionTimeout,
    HostKeyChanged,
    HostUnreachable,
    SgtraceError,
    SshConfigUnusable,
)
from tracer.sources.known_hosts import (
    HostNames,
    KnownHosts,
    check_key,
    known_hosts_for,
    record,
)
from tracer.sources.remote import RemoteSpec, SshOptions, parse_jumps
from tracer.sources.ssh_config import (
    HostConfig,
    config_files,
    connection_options,
    read_host_config,
)
from tracer.sources.sshlib import asyncssh

# AES-GCM first, then asyncssh's defaults: AES runs in hardware, and asyncssh decrypts it
# in one call a packet (chacha20-poly1305, its first choice, takes several): the bench's
# uncompressed stream took 0.52 s instead of 0.71 s.
PREFERRED_CIPHERS = "^aes128-gcm@openssh.com,aes256-gcm@openssh.com"
MAX_HOPS = 16  # hosts on the way; OpenSSH has no bound (a ProxyJump loop forks ssh forever)


@dataclass(frozen=True, slots=True)
class Hop:
    """One host on the way: the target, or a jump host of a ProxyJump."""

    spec: RemoteSpec  # as typed, or as the ProxyJump names it
    label: str  # for messages
    config: HostConfig
    settings: asyncssh.SSHClientConnectionOptions


# -- the way to a host -----------------------------------------------------------------------


def route(spec: RemoteSpec, options: SshOptions) -> list[Hop]:
    """The hosts to connect to in turn, the target last, as OpenSSH goes through a ProxyJump:
    `ProxyJump a,b` reaches the target through b, b through a (b's own ProxyJump left
    aside), and a as its own config says. Each host's config is read once, here."""
    files = config_files(options.config)
    target = hop(spec, spec.label, options, files)
    hops = [target]
    seen = {destination(target)}
    waiting = jumps(target)
    while waiting:
        *before, last = waiting
        jump = hop(last, f"{last.label} (jump host to {spec.label})", options, files)
        if destination(jump) in seen or len(hops) >= MAX_HOPS:
            what = "loops" if destination(jump) in seen else f"goes through over {MAX_HOPS} hosts"
            raise SshConfigUnusable(
                f"the ProxyJump of {spec.label} {what} (at {last.label})",
                "fix the ProxyJump lines of the ssh config",
            )
        seen.add(destination(jump))
        hops.insert(0, jump)
        waiting = before or jumps(jump)
    return hops


def hop(spec: RemoteSpec, label: str, options: SshOptions, files: list[tuple[Path, bool]]) -> Hop:
    """SPEC's config and asyncssh's options for it, the config read once."""
    config = read_host_config(files, spec.host, spec.user, spec.port)
    kwargs: dict[str, object] = {
        "host": spec.host,
        "connect_timeout": options.timeout,
        "x509_trusted_certs": None,  # OpenSSH has no X.509 host certificates
    }
    if spec.port:
        kwargs["port"] = spec.port
    if spec.user:
        kwargs["username"] = spec.user
    if not config.get("Ciphers"):
        kwargs["encryption_algs"] = PREFERRED_CIPHERS
    try:
        settings = connection_options(config, **kwargs)
    except (OSError, ValueError, asyncssh.Error) as error:
        raise connection_error_for(label, error) from error
    return Hop(spec, label, config, settings)


def jumps(hop: Hop) -> list[RemoteSpec]:
    """The hosts HOP's own ProxyJump names (none: `none`, or a ProxyCommand given first)."""
    value = hop.config.get("ProxyJump")
    return parse_jumps(value) if isinstance(value, str) else []


def destination(hop: Hop) -> tuple[str, int, str]:
    settings = hop.settings
    return (settings.host.lower(), settings.port, settings.username)


# -- connecting ----------------------------------------------------------------------------


async def connect(spec: RemoteSpec, options: SshOptions) -> asyncssh.SSHClientConnection:
    """A verified connection to SPEC, through the hosts of its ProxyJump if it has one, each
    verified the same way; closing it closes them."""
    try:
        hops = route(spec, options)
    except (OSError, ValueError, asyncssh.Error) as error:
        raise connection_error(spec, error) from error
    conn: asyncssh.SSHClientConnection | None = None
    try:
        for step in hops:
            reached = await open_hop(step, conn, options, step is hops[-1])
            if conn is not None:
                reached.set_tunnel(conn)  # closed with it
            conn = reached
    except BaseException:
        if conn is not None:
            conn.close()
            await conn.wait_closed()
        raise
    assert conn is not None
    return conn


async def open_hop(
    hop: Hop,
    tunnel: asyncssh.SSHClientConnection | None,
    options: SshOptions,
    target: bool,
) -> asyncssh.SSHClientConnection:
    """A connection to HOP, through TUNNEL if given, its host key checked (unless the user
    opted out). The user's -i keys are offered to the target alone, as ssh -J does."""
    settings = hop.settings
    kwargs: dict[str, object] = {"host": hop.spec.host, "options": settings, "config": []}
    if hop.spec.port:
        kwargs["port"] = hop.spec.port
    if tunnel is not None:
        kwargs["tunnel"] = tunnel
    if target and options.identities:
        kwargs["client_keys"] = [str(p) for p in options.identities]
    check = None
    if options.check_host_key:
        check = host_check(hop, tunnel is not None, options)
        kwargs["known_hosts"] = check.asyncssh_known_hosts
        kwargs["client_factory"] = lambda: Verifier(check)
        if not hop.config.get("HostKeyAlgorithms"):
            kwargs["server_host_key_algs"] = check.known.host_key_algorithms(check.names)
    else:
        kwargs["known_hosts"] = None
    try:
        return await asyncssh.connect(**kwargs)
    except asyncssh.HostKeyNotVerifiable as error:
        assert check is not None
        raise check.refusal or unverifiable(hop.label, check, error) from None
    except Exception as error:
        raise connection_error_for(hop.label, error) from error


# -- the host key --------------------------------------------------------------------------


@dataclass
class HostCheck:
    """How one host's key is checked, and why it was refused if it was."""

    known: KnownHosts
    names: HostNames
    accept_new: bool
    hashed: bool  # HashKnownHosts: names recorded hashed
    label: str
    refusal: SgtraceError | None = field(default=None)
    accepted: list[asyncssh.SSHKey] = field(default_factory=list)

    def plain_key(self, address: str | None, key: asyncssh.SSHKey) -> bool:
        """Whether KEY (not a certificate) is the host's, recorded first if newly accepted
        (once: a key exchange again, in a long transfer, finds it accepted)."""
        if key in self.accepted:
            return True
        try:
            names = check_key(self.known, self.names, address, key, self.accept_new, self.label)
            if names:
                record(self.known.user[0], names, key, self.hashed)
        except SgtraceError as error:
            self.refusal = error
            return False
        self.accepted.append(key)
        return True

    def asyncssh_known_hosts(
        self, host: str, address: str, port: int | None
    ) -> tuple[list[asyncssh.SSHKey], list[asyncssh.SSHKey], list[asyncssh.SSHKey]]:
        """asyncssh's `known_hosts`: no plain key is trusted outright (each goes to
        plain_key); the CA keys of @cert-authority lines, and then the keys revoked, with
        which asyncssh checks a certificate."""
        authorities = self.known.authorities(self.names.all())
        if not authorities:
            return [], [], []
        names = [*self.names.all(), *filter(None, [self.names.ip(address)])]
        return [], authorities, self.known.revocations(names)


class Verifier(asyncssh.SSHClient):
    """asyncssh's client, whose answer for a host's plain key is the check's."""

    def __init__(self, check: HostCheck) -> None:
        self.check = check

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        return self.check.plain_key(addr, key)


def host_check(hop: Hop, tunnelled: bool, options: SshOptions) -> HostCheck:
    settings, config = hop.settings, hop.config
    known = known_hosts_for(settings, hop.spec.host, options.known_hosts)
    proxied = tunnelled or bool(settings.proxy_command)
    check_ip = bool(config.get("CheckHostIP")) and not proxied
    names = HostNames.of(settings.host, settings.port, settings.host_key_alias, check_ip)
    hashed = bool(config.get("HashKnownHosts"))
    return HostCheck(known, names, options.accept_new_host_key, hashed, hop.label)


def unverifiable(
    label: str, check: HostCheck, error: asyncssh.HostKeyNotVerifiable
) -> SgtraceError:
    """The refusal of a certificate (asyncssh checks those), or of a key revoked while
    certificates are checked."""
    reason = str(error.reason).split(" for host ")[0]
    if "revoked" in reason:
        found = (e for name in check.names.all() for e in check.known.lookup(name))
        places = [f"{e.path} line {e.line}" for e in found if e.marker == "@revoked"]
        if check.known.revoked:
            places.append(f"the RevokedHostKeys file {check.known.revoked_file}")
        return HostKeyChanged(
            f"the host key of {label} (or the CA of its certificate) is revoked in "
            f"{' or '.join(places)}; sgtrace refuses it",
            "ask the host's administrator for its new key",
        )
    return HostKeyChanged(
        f"the host certificate of {label} cannot be verified ({reason}); sgtrace refuses it "
        "(ssh would check the plain key instead)",
        "check the @cert-authority lines that name the host, and its certificate",
    )


# -- errors --------------------------------------------------------------------------------


def connection_error(spec: RemoteSpec, exc: BaseException) -> SgtraceError:
    return connection_error_for(spec.label, exc)


def connection_error_for(label: str, exc: BaseException) -> SgtraceError:
    if isinstance(exc, SgtraceError):
        return exc
    if isinstance(exc, asyncssh.PermissionDenied):
        return AuthFailed(
            f"{label} refused every key offered",
            "load a key into ssh-agent, give -i KEY, or set IdentityFile in ~/.ssh/config",
        )
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return ConnectionTimeout(
            f"{label} did not answer in time", "check that the host is up and reachable"
        )
    if isinstance(exc, OSError | asyncssh.Error):
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc)
        return HostUnreachable(
            f"cannot connect to {label} ({reason})",
            "check the host name and port, or its Host entry in ~/.ssh/config",
        )
    return HostUnreachable(f"cannot connect to {label} ({exc})", "check the host")
