"""Host keys checked as OpenSSH's ssh(1) checks them (sshconnect.c, check_host_key): the
known_hosts files it reads (--known-hosts first, then UserKnownHostsFile and
GlobalKnownHostsFile as the ssh config names them, or OpenSSH's defaults), the names it
looks a key up under (HostKeyAlias as it is, else the host name with `[host]:port` off port
22, then the name without its port; the address too under CheckHostIP), hashed names,
wildcards and negations, @revoked and @cert-authority lines, RevokedHostKeys; and the
lines it records a key accepted under (HashKnownHosts). Where sgtrace is stricter than ssh
it says so here. A file that exists but cannot be read, or holds a line that is no entry,
is refused naming the file: an entry lost could be the one that tells a key changed."""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import ipaddress
import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from tracer.errors import HostKeyChanged, HostKeyUnknown, KnownHostsUnusable
from tracer.sources.safe_write import write_file
from tracer.sources.ssh_config import expanded, read_capped, token_values
from tracer.sources.sshlib import asyncssh

USER_FILES = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")  # OpenSSH's defaults
GLOBAL_FILES = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
MAX_FILE_BYTES = 16 << 20  # far above any real known_hosts; /dev/zero stops here
MARKERS = ("@cert-authority", "@revoked")
KRL_MAGIC = b"SSHKRL\n\0"


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a known_hosts file that names the host looked up."""

    path: Path
    line: int
    marker: str  # "", "@cert-authority" or "@revoked"
    key: asyncssh.SSHKey | None  # None: a key sgtrace cannot read


@dataclass(frozen=True, slots=True)
class Line:
    path: Path
    number: int
    marker: str
    hosts: str
    key: str


class Status(enum.Enum):
    """What the entries for one name say of a key (hostfile.c, check_key_in_hostkeys)."""

    OK = "ok"  # a line records it
    NEW = "new"  # no line records a key for the name
    CHANGED = "changed"  # lines record others (or one sgtrace cannot read), none this one
    REVOKED = "revoked"  # a @revoked line names it


@dataclass(frozen=True, slots=True)
class Found:
    status: Status
    entry: Entry | None  # the line that decided: the key recorded, another one, @revoked


class KnownHosts:
    """The known_hosts files of one connection, read once, and the keys RevokedHostKeys
    lists. USER files come first: a key accepted is recorded in the first of them."""

    def __init__(
        self, user: tuple[Path, ...], system: tuple[Path, ...], revoked: Path | None = None
    ) -> None:
        self.user = tuple(dict.fromkeys(user))
        self.system = tuple(p for p in dict.fromkeys(system) if p not in self.user)
        texts = {p: text for p in self.user + self.system if (text := read_bytes(p)) is not None}
        self.read = list(texts)  # the files that exist
        self.lines = [line for p, text in texts.items() for line in entries(p, text)]
        self.revoked_file = revoked
        self.revoked = revoked_keys(revoked) if revoked is not None else []

    def lookup(self, name: str) -> list[Entry]:
        """The entries for NAME (`host`, or `[host]:port` off port 22), in file order."""
        return [
            Entry(line.path, line.number, line.marker, public_key(line.key))
            for line in self.lines
            if names_host(line.hosts, name)
        ]

    def status(self, name: str, key: asyncssh.SSHKey) -> Found:
        """What the lines for NAME say of the plain KEY. A line whose key sgtrace cannot read
        counts as another key (OpenSSH skips it: sgtrace is stricter)."""
        found = self.lookup(name)
        revoked = next((e for e in found if e.marker == "@revoked" and e.key == key), None)
        if revoked is not None:
            return Found(Status.REVOKED, revoked)
        recorded = [e for e in found if not e.marker]
        same = next((e for e in recorded if e.key == key), None)
        if same is not None:
            return Found(Status.OK, same)
        if recorded:
            return Found(Status.CHANGED, next((e for e in recorded if e.key is None), recorded[0]))
        return Found(Status.NEW, None)

    def authorities(self, names: list[str]) -> list[asyncssh.SSHKey]:
        """The CA keys of the @cert-authority lines for NAMES."""
        found = (e for name in names for e in self.lookup(name))
        return [e.key for e in found if e.marker == "@cert-authority" and e.key is not None]

    def revocations(self, names: list[str]) -> list[asyncssh.SSHKey]:
        """The keys @revoked for NAMES, and those RevokedHostKeys lists."""
        found = (e for name in names for e in self.lookup(name))
        marked = [e.key for e in found if e.marker == "@revoked" and e.key is not None]
        return marked + self.revoked

    def host_key_algorithms(self, names: HostNames) -> list[str]:
        """The host key algorithms to ask for: certificates only when a @cert-authority line
        names the host (else a host's certificate, which nothing here could verify, would
        hide its key), then those of the keys recorded for it, then the rest of asyncssh's
        defaults, as OpenSSH orders them. A host with several keys then shows the one
        recorded (asyncssh alone would ask for nothing else, and a host with a key of
        another type, or no certificate, would seem to drop the connection)."""
        found = self.lookup(names.host)
        certificates = asyncssh.public_key.get_default_certificate_algs()
        first = [*certificates] if self.authorities(names.all()) else []
        for entry in found:
            if not entry.marker and entry.key is not None:
                first += entry.key.sig_algorithms
        rest = asyncssh.public_key.get_default_public_key_algs()
        return list(dict.fromkeys(a.decode() for a in first + rest))


def lookup_name(host: str, port: int) -> str:
    """The name OpenSSH looks up and records (in lower case): `host` on port 22, else
    `[host]:port`."""
    host = host.lower()
    return host if port == 22 else f"[{host}]:{port}"


@dataclass(frozen=True, slots=True)
class HostNames:
    """The names OpenSSH looks one host's key up under (sshconnect.c)."""

    host: str  # HostKeyAlias as it is, whatever the port; else the host name and its port
    bare: str | None  # the host name alone, tried when HOST is new: no alias, port not 22
    port: int
    check_ip: bool  # CheckHostIP, and no ProxyCommand or ProxyJump on the way

    @classmethod
    def of(cls, hostname: str, port: int, alias: str | None, check_ip: bool) -> HostNames:
        if alias:
            return cls(alias.lower(), None, port, check_ip)
        bare = hostname.lower() if port != 22 else None
        return cls(lookup_name(hostname, port), bare, port, check_ip)

    def ip(self, address: str | None, bare: bool = False) -> str | None:
        """The name of ADDRESS (the host's) also looked up under CheckHostIP; None when off,
        through a proxy, for a loopback address, or when it is the host's own name."""
        try:
            if not self.check_ip or not address or ipaddress.ip_address(address).is_loopback:
                return None
        except ValueError:
            return None  # not an address: a proxy's
        name = lookup_name(address, 22 if bare else self.port)
        return None if name in (self.host, self.bare) else name

    def all(self) -> list[str]:
        return [self.host, *([self.bare] if self.bare else [])]


# -- the decision --------------------------------------------------------------------------


def check_key(
    known: KnownHosts,
    names: HostNames,
    address: str | None,
    key: asyncssh.SSHKey,
    accept_new: bool,
    label: str,
) -> list[str]:
    """The names to record the plain KEY of LABEL under (none when it is known), or
    HostKeyUnknown / HostKeyChanged raised where ssh with StrictHostKeyChecking=yes (or
    accept-new when ACCEPT_NEW) refuses it, for the cause ssh gives. Stricter than ssh: a
    key revoked under any name looked up is refused; under CheckHostIP, an address that
    records another key refuses a new key before anything is recorded, and the address of
    a known host is recorded only with ACCEPT_NEW."""
    ip = names.ip(address)
    host = known.status(names.host, key)
    at_ip = known.status(ip, key) if ip else Found(Status.NEW, None)
    bare_names = [n for n in (names.bare, names.ip(address, bare=True)) if n and names.bare]
    bare = [known.status(n, key) for n in bare_names]
    for found in (host, at_ip, *bare):
        if found.status is Status.REVOKED:
            raise revoked(label, key, found.entry)
    if key in known.revoked:
        raise HostKeyChanged(
            f"the host key of {label} ({fingerprint(key)}) is listed in the RevokedHostKeys "
            f"file {known.revoked_file}; sgtrace refuses it",
            "ask the host's administrator for its new key",
        )
    if host.status is Status.CHANGED:
        raise changed(label, key, names.host, host.entry, known)
    ip_changed = ip is not None and at_ip.status is Status.CHANGED
    new_ip = [ip] if ip and at_ip.status is Status.NEW else []
    if host.status is Status.OK or bare_known(bare):
        if ip_changed:
            raise changed(label, key, ip, at_ip.entry, known, address_of=True)
        return new_ip if accept_new and host.status is Status.OK else []
    if not accept_new or not known.user:
        raise unknown(label, key, known)
    if ip_changed:  # ssh records the name first, then refuses
        raise changed(label, key, ip, at_ip.entry, known, address_of=True)
    return [names.host, *new_ip]


def bare_known(found: list[Found]) -> bool:
    """Whether the key is known under the host name without its port ("found matching key
    w/out port"), its address there not recording another."""
    return (
        bool(found)
        and found[0].status is Status.OK
        and Status.CHANGED not in {f.status for f in found}
    )


def revoked(label: str, key: asyncssh.SSHKey, entry: Entry | None) -> HostKeyChanged:
    where = f" in {entry.path} line {entry.line}" if entry else ""
    return HostKeyChanged(
        f"the host key of {label} ({fingerprint(key)}) is marked @revoked{where}; sgtrace "
        "refuses it",
        "ask the host's administrator for its new key",
    )


def changed(
    label: str,
    key: asyncssh.SSHKey,
    name: str,
    entry: Entry | None,
    known: KnownHosts,
    address_of: bool = False,
) -> HostKeyChanged:
    assert entry is not None
    if entry.key is None:
        what = f"records a key for it that sgtrace cannot read ({entry.path} line {entry.line})"
    elif address_of:
        what = f"records another for its address {name} in {entry.path} line {entry.line}"
    else:
        what = f"recorded another in {entry.path} line {entry.line}"
    files = dict.fromkeys(e.path for e in known.lookup(name) if not e.marker)
    removal = " and ".join(f"`ssh-keygen -R {name} -f {path}`" for path in files)
    return HostKeyChanged(
        f"the host key of {label} has CHANGED (now {fingerprint(key)}; known_hosts {what}); "
        "this may be an attack, so sgtrace refuses",
        f"if the change is expected, remove the old key with {removal}",
    )


def unknown(label: str, key: asyncssh.SSHKey, known: KnownHosts) -> HostKeyUnknown:
    if known.user:
        fix = "check it, then run again with --accept-new-host-key to record it"
    else:
        fix = (
            "the ssh config reads no user known_hosts file (UserKnownHostsFile none): give "
            "--known-hosts FILE to record it there"
        )
    return HostKeyUnknown(
        f"the host key of {label} is not in {files_told(known)} ({fingerprint(key)})", fix
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


# -- which files ---------------------------------------------------------------------------


def known_hosts_for(
    settings: asyncssh.SSHClientConnectionOptions, host: str, given: Path | None
) -> KnownHosts:
    """The files OpenSSH would read for HOST (as typed) with SETTINGS (from the ssh config),
    GIVEN (--known-hosts) first, and RevokedHostKeys."""
    config = settings.config
    tokens = token_values(settings, host)
    named = config.get("UserKnownHostsFile")  # None: not set; []: `none`
    option = "UserKnownHostsFile"
    user = [expanded(option, v, tokens) for v in (USER_FILES if named is None else named)]
    system = config.get("GlobalKnownHostsFile")
    every = [Path(os.path.expanduser(v)) for v in (GLOBAL_FILES if system is None else system)]
    listed = config.get("RevokedHostKeys")
    revoked = expanded("RevokedHostKeys", listed, tokens) if listed else None
    return KnownHosts((*([given] if given else []), *user), tuple(every), revoked)


# -- reading -------------------------------------------------------------------------------


def read_bytes(path: Path, what: str = "known_hosts file") -> bytes | None:
    """PATH's contents; None when there is no file there. A FIFO is read without waiting
    for a writer, and no more than MAX_FILE_BYTES are read."""
    try:
        data = read_capped(path, MAX_FILE_BYTES)
    except OSError as error:
        reason = "it is a folder" if isinstance(error, IsADirectoryError) else error.strerror
        raise KnownHostsUnusable(
            f"cannot read the {what} {path} ({reason})",
            "fix it, or move it away (a host it names would be unknown again)",
        ) from None
    if data is not None and len(data) > MAX_FILE_BYTES:
        raise KnownHostsUnusable(
            f"the {what} {path} is larger than {MAX_FILE_BYTES >> 20} MB",
            f"name a real {what}",
        )
    return data


def revoked_keys(path: Path) -> list[asyncssh.SSHKey]:
    """The public keys the RevokedHostKeys file PATH lists. As for ssh, a file that cannot
    be read refuses every key; a KRL (binary) is refused, sgtrace cannot read one."""
    data = read_bytes(path, "RevokedHostKeys file")
    if data is None:
        raise KnownHostsUnusable(
            f"the RevokedHostKeys file {path} the ssh config names does not exist",
            "make it, or remove RevokedHostKeys (ssh refuses every host key meanwhile)",
        )
    if data.startswith(KRL_MAGIC):
        raise KnownHostsUnusable(
            f"the RevokedHostKeys file {path} is a KRL, which sgtrace cannot read",
            "list the revoked public keys in it instead, one a line",
        )
    keys = []
    for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        text = text.strip()
        if text and not text.startswith("#"):
            key = public_key(text)
            if key is None:
                raise KnownHostsUnusable(
                    f"line {number} of the RevokedHostKeys file {path} is not a public key",
                    "fix or delete that line",
                )
            keys.append(key)
    return keys


def entries(path: Path, data: bytes) -> list[Line]:
    """The entries of the known_hosts file PATH holding DATA, as OpenSSH splits them; a line
    that is none is refused (OpenSSH would skip it: a key it held would go unseen)."""
    found = []
    for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        text = text.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split(None, 2)
        marker = fields[0] if text.startswith("@") else ""
        if marker:
            fields = text.split(None, 3)[1:]
        if (marker and marker not in MARKERS) or len(fields) < 2:
            raise KnownHostsUnusable(
                f"line {number} of the known_hosts file {path} is not a known_hosts entry",
                "fix or delete that line",
            )
        found.append(Line(path, number, marker, fields[0], " ".join(fields[1:])))
    return found


def names_host(hosts: str, name: str) -> bool:
    """Whether the host field HOSTS of a line names NAME, as OpenSSH matches it: a hashed
    name (`|1|salt|hash`), or patterns where one must match and no `!pattern` may."""
    if hosts.startswith("|"):
        return hashed_match(hosts, name)
    name = name.lower()
    matched = False
    for pattern in hosts.lower().split(","):
        negated = pattern.startswith("!")
        pattern = pattern.removeprefix("!")
        if "*" in pattern or "?" in pattern:
            glob = "".join("[[]" if c == "[" else "[]]" if c == "]" else c for c in pattern)
            hit = fnmatchcase(name, glob)
        else:
            hit = pattern == name
        if hit and negated:
            return False
        matched = matched or hit
    return matched


def hashed_match(field: str, name: str) -> bool:
    try:
        magic, salt, digest = field[1:].split("|")
        salt_bytes, digest_bytes = base64.b64decode(salt), base64.b64decode(digest)
    except ValueError:
        return False  # OpenSSH cannot match it either
    if magic != "1":
        return False
    found = hmac.new(salt_bytes, name.encode(), hashlib.sha1).digest()
    return hmac.compare_digest(found, digest_bytes)


def hashed_name(name: str) -> str:
    """NAME as HashKnownHosts records it: `|1|salt|HMAC-SHA1(salt, name)`."""
    salt = os.urandom(20)
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


def public_key(text: str) -> asyncssh.SSHKey | None:
    try:
        return asyncssh.import_public_key(text)
    except (asyncssh.KeyImportError, ValueError):
        return None


# -- recording -----------------------------------------------------------------------------


def record(path: Path, names: list[str], key: asyncssh.SSHKey, hashed: bool) -> None:
    """Add KEY for NAMES to the known_hosts file PATH (made, with its folder, if missing), as
    OpenSSH records a key it accepts: one line `name1,name2 KEY`, or with HASHED one hashed
    line a name; written by the rules of tracer/sources/safe_write.py."""
    kind, blob = key.export_public_key("openssh").decode().split()[:2]
    fields = [hashed_name(n) for n in names] if hashed else [",".join(names)]
    old = read_bytes(path) or b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    new = old + "".join(f"{field} {kind} {blob}\n" for field in fields).encode()
    try:
        try:
            write_file(path, new)
        except FileNotFoundError:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_file(path, new)
    except OSError as error:
        raise KnownHostsUnusable(
            f"cannot record the host key in {path} ({error.strerror or error})",
            "make it writable, or name another file with --known-hosts",
        ) from None
