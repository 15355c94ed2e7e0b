"""ssh configs read once for one host, as OpenSSH reads them: `--ssh-config`, else
~/.ssh/config then /etc/ssh/ssh_config, and every file they Include (also from a Host or
Match block that does not apply, as OpenSSH does), each file read once and capped, Includes
followed no deeper than OpenSSH's 16. Host and Match blocks and the options are asyncssh's
own rules (`Match exec` runs once); the options asyncssh leaves aside that decide how a host
key is checked (CheckHostIP, HashKnownHosts, RevokedHostKeys) are kept beside them, and of
ProxyCommand and ProxyJump the first given wins, as in OpenSSH. asyncssh is handed what was
read (`connection_options`) and reads no config file itself."""

from __future__ import annotations

import getpass
import glob
import hashlib
import os
import re
import shlex
import socket
from pathlib import Path

from tracer.errors import KnownHostsUnusable, SshConfigUnusable
from tracer.sources.sshlib import asyncssh

USER_CONFIG = Path("~/.ssh/config")
SYSTEM_CONFIG = Path("/etc/ssh/ssh_config")
MAX_FILE_BYTES = 1 << 20  # an ssh config is a few kB; /dev/zero stops here
MAX_FILES = 256  # files read for one host, each Include counted: a fan of Includes stops too
MAX_INCLUDE_DEPTH = 16  # OpenSSH's: "Too many recursive configuration includes"
TOKEN = re.compile(r"%(.)|\$\{(\w+)\}")
CONDITIONALS = {"host", "match"}  # lines read even where a block does not apply
WHOLE_LINE = {"proxycommand", "remotecommand"}  # one argument: the rest of the line

SSHClientConfig = asyncssh.config.SSHClientConfig
SSHConfig = asyncssh.config.SSHConfig


# -- reading a file ------------------------------------------------------------------------


def read_capped(path: Path, cap: int) -> bytes | None:
    """PATH's first CAP + 1 bytes at most (more than CAP: too large); None when there is no
    file there. A FIFO is opened without waiting for a writer. OSError when it cannot be
    read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read(cap + 1)
    finally:
        os.close(fd)


def config_text(path: Path) -> str:
    """The ssh config file PATH, refused as a whole when it cannot be read or is over the
    cap: a part of it read would apply other options than the whole."""
    try:
        data = read_capped(path, MAX_FILE_BYTES)
    except OSError as error:
        reason = "it is a folder" if isinstance(error, IsADirectoryError) else error.strerror
        raise SshConfigUnusable(
            f"cannot read the ssh config {path} ({reason})", "fix it, or name another"
        ) from None
    if data is None:
        raise SshConfigUnusable(f"the ssh config {path} does not exist", "name one that does")
    if len(data) > MAX_FILE_BYTES:
        raise SshConfigUnusable(
            f"the ssh config {path} is larger than {MAX_FILE_BYTES >> 20} MB",
            "name a real ssh config",
        )
    return data.decode("utf-8", "replace")


# -- one line ------------------------------------------------------------------------------


def config_words(line: str) -> tuple[str, list[str]]:
    """LINE (not blank, no comment) as its keyword in lower case and its arguments, split as
    asyncssh splits them: shell words; `Key value`, `Key=value` and `Key = value` alike; an
    `=` inside a word split off only in the conditions of Host and Match."""
    words = shlex.split(line)
    head, _, value = words[0].partition("=")
    keyword = head.lower()
    args = [value] if value else []
    for i, word in enumerate(words[1:], 1):
        if word.startswith("="):
            args += [word[1:]] if word[1:] else []
        elif keyword not in CONDITIONALS:
            args += words[i:]
            break
        else:
            args += [part for part in word.partition("=")[::2] if part]
    return keyword, args


# -- the config of one host ----------------------------------------------------------------


def _first_proxy(config: HostConfig, option: str, args: list[str]) -> None:
    """ProxyCommand or ProxyJump: the first given wins, the other is left aside."""
    if "ProxyCommand" in config._options or "ProxyJump" in config._options:
        args.clear()
        return
    SSHConfig._set_string(config, option, args)


def _include(config: HostConfig, option: str, args: list[str]) -> None:
    config.include(args)
    args.clear()


class HostConfig(SSHClientConfig):
    """The ssh config as it applies to one host, read by `read_host_config`."""

    _handlers = {
        **SSHClientConfig._handlers,
        "include": ("Include", _include),
        "proxycommand": ("ProxyCommand", _first_proxy),
        "proxyjump": ("ProxyJump", _first_proxy),
        "checkhostip": ("CheckHostIP", SSHConfig._set_bool),
        "hashknownhosts": ("HashKnownHosts", SSHConfig._set_bool),
        "revokedhostkeys": ("RevokedHostKeys", SSHConfig._set_string),
    }

    def __init__(self, host: str, user: str | None, port: int | None) -> None:
        super().__init__(None, False, False, False, getpass.getuser(), user or (), host, port or ())
        self.files_read = 0
        self.depth = 0  # of the file being read, in Includes
        self.inert = False  # reading a file Included where its block does not apply
        self.base = Path.home() / ".ssh"  # where an Include's relative names are

    def read(self, path: Path, system: bool) -> None:
        """Apply the config file PATH and what it includes; SYSTEM: /etc/ssh's, whose
        relative Includes are in /etc/ssh."""
        self.base = SYSTEM_CONFIG.parent if system else Path.home() / ".ssh"
        self.parse(path)
        self._set_tokens()
        for option in self._percent_expand:  # after each file given, as asyncssh does
            value = self._options.get(option)
            if isinstance(value, list):
                self._options[option] = [self._expand_val(v) for v in value]
            elif isinstance(value, str):
                self._options[option] = self._expand_val(value)

    def parse(self, path: Path) -> None:
        """Apply each line of PATH as asyncssh would (it reads no file itself)."""
        self.files_read += 1
        if self.files_read > MAX_FILES:
            raise SshConfigUnusable(
                f"the ssh config includes more than {MAX_FILES} files (at {path})",
                "include fewer files",
            )
        text = config_text(path)
        self._path, self._matching, self._tokens = path, not self.inert, {"%": "%"}
        for self._line_no, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if line and not line.startswith("#"):
                self.apply(line)

    def apply(self, line: str) -> None:
        try:
            keyword, args = config_words(line)
        except ValueError as error:
            self._error(str(error))
        if keyword in WHOLE_LINE:
            args = [line[len(keyword) :].strip().removeprefix("=").strip()]
        if keyword == "include" and not self._matching:
            self.include(args, inert=True)  # read, as OpenSSH does, to apply nothing
            return
        if self.inert or (not self._matching and keyword not in CONDITIONALS):
            return
        if keyword not in self._handlers:
            return  # an option asyncssh does not use
        option, handler = self._handlers[keyword]
        if not args:
            self._error(f"Missing {option} value")
        handler(self, option, args)
        if args:
            self._error(f"Extra data at end: {' '.join(args)}")

    def include(self, patterns: list[str], inert: bool = False) -> None:
        """Apply the files PATTERNS name, in the order of their names; INERT: only read
        them, for their own Includes."""
        if self.depth >= MAX_INCLUDE_DEPTH:
            raise SshConfigUnusable(
                f"the ssh config {self._path} includes files more than {MAX_INCLUDE_DEPTH} "
                "deep (does it include itself?)",
                "remove the Include that loops",
            )
        state = (self._path, self._line_no, self._matching, self.inert)
        self.depth += 1
        self.inert = self.inert or inert
        for pattern in patterns:
            named = self.base / os.path.expanduser(pattern)
            for name in sorted(glob.glob(str(named))):
                if os.path.isfile(name):
                    self.parse(Path(name))
        self.depth -= 1
        self._path, self._line_no, self._matching, self.inert = state


def config_files(given: Path | None) -> list[tuple[Path, bool]]:
    """The ssh config files OpenSSH reads, each with whether it is the system's: the one
    given (`ssh -F`), else ~/.ssh/config then /etc/ssh/ssh_config, each if it exists."""
    if given is not None:
        return [(given, False)]
    # As OpenSSH, a default file that cannot be opened is passed over.
    found = [USER_CONFIG.expanduser(), SYSTEM_CONFIG]
    return [(p, p == SYSTEM_CONFIG) for p in found if p.exists() and os.access(p, os.R_OK)]


def read_host_config(
    files: list[tuple[Path, bool]], host: str, user: str | None, port: int | None
) -> HostConfig:
    """The options FILES give HOST (as typed), USER and PORT given besides winning."""
    config = HostConfig(host, user, port)
    for path, system in files:
        try:
            config.read(path, system)
        except ValueError as error:  # asyncssh's ConfigParseError names the file and line
            raise SshConfigUnusable(
                f"the ssh config {path} cannot be used ({error})", "fix that line"
            ) from None
    config.loaded = True
    return config


def connection_options(config: HostConfig, **kwargs: object) -> asyncssh.SSHClientConnectionOptions:
    """asyncssh's options from CONFIG (as read, no file read again) and KWARGS. asyncssh
    takes options read before as `last_config`, which only `update` can hand it."""
    options = asyncssh.SSHClientConnectionOptions(config=[], **kwargs)
    options.update(last_config=config)
    return options


# -- values with %-tokens ------------------------------------------------------------------


def token_values(settings: asyncssh.SSHClientConnectionOptions, host: str) -> dict[str, str]:
    """The %-tokens of UserKnownHostsFile and RevokedHostKeys, as OpenSSH's ssh(1) gives
    them for a connection to HOST (as typed) with SETTINGS."""
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


def expanded(option: str, value: str, tokens: dict[str, str]) -> Path:
    """VALUE of OPTION (a file) with `~`, then %-tokens and ${VAR}, expanded."""

    def one(match: re.Match[str]) -> str:
        token, variable = match[1], match[2]
        if token is not None:
            if token not in tokens:
                raise KnownHostsUnusable(
                    f"{option} {value} in the ssh config uses %{token}, which OpenSSH does "
                    "not know",
                    "use the tokens of ssh_config(5)",
                )
            return tokens[token]
        if variable not in os.environ:
            raise KnownHostsUnusable(
                f"{option} {value} in the ssh config uses ${{{variable}}}, which is not set",
                f"set {variable}, or name the file in full",
            )
        return os.environ[variable]

    return Path(TOKEN.sub(one, os.path.expanduser(value)))
