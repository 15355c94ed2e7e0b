"""known_hosts as OpenSSH reads them for one host: --known-hosts first, then the files the
ssh config names (UserKnownHostsFile, GlobalKnownHostsFile; `~`, %-tokens and ${VAR}
expanded as OpenSSH does) or OpenSSH's defaults; names looked up as `host` on port 22 and
`[host]:port` elsewhere, hashed names, wildcards and negations, @revoked and
@cert-authority lines read as OpenSSH reads them. A file that exists but cannot be read, or
holds a line that is no entry, is refused naming the file: an entry lost could be the one
that tells a key changed."""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import os
import re
import socket
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from tracer.errors import KnownHostsUnusable
from tracer.sources.safe_write import write_file
from tracer.sources.sshlib import asyncssh

USER_FILES = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")  # OpenSSH's defaults
GLOBAL_FILES = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
MAX_FILE_BYTES = 16 << 20  # far above any real known_hosts; /dev/zero stops here
TOKEN = re.compile(r"%(.)|\$\{(\w+)\}")
MARKERS = ("@cert-authority", "@revoked")


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


class KnownHosts:
    """The known_hosts files of one connection, read once. USER files come first: a key
    accepted is recorded in the first of them."""

    def __init__(self, user: tuple[Path, ...], system: tuple[Path, ...]) -> None:
        self.user = tuple(dict.fromkeys(user))
        self.system = tuple(p for p in dict.fromkeys(system) if p not in self.user)
        texts = {p: text for p in self.user + self.system if (text := read_bytes(p)) is not None}
        self.read = list(texts)  # the files that exist
        self.lines = [line for p, text in texts.items() for line in entries(p, text)]
        self.accepted: dict[str, asyncssh.SSHKey] = {}  # name -> key trusted for this run
        self.asked: str | None = None  # the name asyncssh last looked up

    def lookup(self, name: str) -> list[Entry]:
        """The entries for NAME (`host`, or `[host]:port` off port 22), in file order."""
        return [
            Entry(line.path, line.number, line.marker, public_key(line.key))
            for line in self.lines
            if names_host(line.hosts, name)
        ]

    def trusted(
        self, host: str, address: str, port: int | None
    ) -> tuple[list[asyncssh.SSHKey], list[asyncssh.SSHKey], list[asyncssh.SSHKey]]:
        """asyncssh's `known_hosts` callable: the host keys, CA keys and revoked keys for
        HOST (the ssh config's HostKeyAlias or HostName) on PORT (None: 22). The address is
        not looked up, as OpenSSH's CheckHostIP (off by default) would."""
        name = self.asked = lookup_name(host, port or 22)
        found = self.lookup(name)
        keys = [e.key for e in found if not e.marker and e.key is not None]
        if name in self.accepted:
            keys.append(self.accepted[name])
        authorities = [e.key for e in found if e.marker == "@cert-authority" and e.key is not None]
        revoked = [e.key for e in found if e.marker == "@revoked" and e.key is not None]
        return keys, authorities, revoked

    def host_key_algorithms(self, name: str) -> list[str]:
        """The host key algorithms to ask for NAME: certificates only when a
        @cert-authority line names the host (else a host's certificate, which nothing
        here could verify, would hide its key), then those of the keys recorded for it,
        then the rest of asyncssh's defaults, as OpenSSH orders them. A host with several
        keys then shows the one recorded (asyncssh alone would ask for nothing else, and a
        host with a key of another type, or no certificate, would seem to drop the
        connection)."""
        found = self.lookup(name)
        certificates = asyncssh.public_key.get_default_certificate_algs()
        first = [*certificates] if any(e.marker == "@cert-authority" for e in found) else []
        for entry in found:
            if not entry.marker and entry.key is not None:
                first += entry.key.sig_algorithms
        if name in self.accepted:
            first += self.accepted[name].sig_algorithms
        rest = asyncssh.public_key.get_default_public_key_algs()
        return list(dict.fromkeys(a.decode() for a in first + rest))


def lookup_name(host: str, port: int) -> str:
    """The name OpenSSH looks up and records: `host` on port 22, else `[host]:port`."""
    return host if port == 22 else f"[{host}]:{port}"


# -- which files ---------------------------------------------------------------------------


def known_hosts_for(
    settings: asyncssh.SSHClientConnectionOptions, host: str, given: Path | None
) -> KnownHosts:
    """The files OpenSSH would read for HOST (as typed) with SETTINGS (from the ssh config),
    GIVEN (--known-hosts) first."""
    config = settings.config
    tokens = token_values(settings, host)
    named = config.get("UserKnownHostsFile")  # None: not set; []: `none`
    user = [expanded(v, tokens) for v in (USER_FILES if named is None else named)]
    system = config.get("GlobalKnownHostsFile")
    every = [Path(os.path.expanduser(v)) for v in (GLOBAL_FILES if system is None else system)]
    return KnownHosts((*([given] if given else []), *user), tuple(every))


def token_values(settings: asyncssh.SSHClientConnectionOptions, host: str) -> dict[str, str]:
    """The %-tokens of UserKnownHostsFile, as OpenSSH's ssh(1) gives them."""
    local = socket.gethostname()
    remote, port, user = settings.host, str(settings.port), settings.username
    jump = str(settings.config.get("ProxyJump") or "")
    connection = hashlib.sha1((local + remote + port + user + jump).encode()).hexdigest()
    return {
        "%": "%",
        "C": connection,
        "d": str(Path.home()),
        "h": remote,
        "i": str(os.getuid()),
        "j": jump,
        "k": settings.host_key_alias or host,
        "L": local.split(".")[0],
        "l": local,
        "n": host,
        "p": port,
        "r": user,
        "u": getpass.getuser(),
    }


def expanded(value: str, tokens: dict[str, str]) -> Path:
    """VALUE of UserKnownHostsFile with `~`, then %-tokens and ${VAR}, expanded."""

    def one(match: re.Match[str]) -> str:
        token, variable = match[1], match[2]
        if token is not None:
            if token not in tokens:
                raise KnownHostsUnusable(
                    f"UserKnownHostsFile {value} in the ssh config uses %{token}, which "
                    "OpenSSH does not know",
                    "use the tokens of ssh_config(5)",
                )
            return tokens[token]
        if variable not in os.environ:
            raise KnownHostsUnusable(
                f"UserKnownHostsFile {value} in the ssh config uses ${{{variable}}}, which "
                "is not set",
                f"set {variable}, or name the file in full",
            )
        return os.environ[variable]

    return Path(TOKEN.sub(one, os.path.expanduser(value)))


# -- reading -------------------------------------------------------------------------------


def read_bytes(path: Path) -> bytes | None:
    """PATH's contents; None when there is no file there. A FIFO is read without waiting
    for a writer, and no more than MAX_FILE_BYTES are read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise unreadable(path, error) from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise unreadable(path, error) from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise KnownHostsUnusable(
            f"the known_hosts file {path} is larger than {MAX_FILE_BYTES >> 20} MB",
            "name a real known_hosts file",
        )
    return data


def unreadable(path: Path, error: OSError) -> KnownHostsUnusable:
    reason = "it is a folder" if isinstance(error, IsADirectoryError) else error.strerror
    return KnownHostsUnusable(
        f"cannot read the known_hosts file {path} ({reason})",
        "fix it, or move it away (a host it names would be unknown again)",
    )


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


def public_key(text: str) -> asyncssh.SSHKey | None:
    try:
        return asyncssh.import_public_key(text)
    except (asyncssh.KeyImportError, ValueError):
        return None


# -- recording -----------------------------------------------------------------------------


def record(path: Path, name: str, key: asyncssh.SSHKey) -> None:
    """Add `NAME KEY` to the known_hosts file PATH (made, with its folder, if missing), as
    OpenSSH records an accepted key; written by the rules of tracer/sources/safe_write.py."""
    kind, blob = key.export_public_key("openssh").decode().split()[:2]
    old = read_bytes(path) or b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    new = old + f"{name} {kind} {blob}\n".encode()
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
