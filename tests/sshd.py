"""A real OpenSSH sshd on 127.0.0.1 (or another address of this machine) for tests: its own
host key (and certificate, if `certify` signs one), user key, known_hosts and ssh config, so
no test ever reads or writes the real ~/.ssh.

Layout of one server's workdir:
    host_ed25519, host_ed25519.pub    the server's host key
    authorized_keys                   the client public key(s) sshd accepts
    sshd_config, sshd.pid, sshd.log   the server's own files
    home/.ssh/id_ed25519(.pub)        the client key (shared between servers of a trio)
    home/.ssh/known_hosts             `[127.0.0.1]:PORT <host key>` (`known_hosts_name`)
    home/.ssh/config                  `Host ALIAS` -> 127.0.0.1, PORT, USER, the files above
    remote-home/                      $HOME of commands run on the target

`home/` is a complete client home: point HOME at it (`server.client_env()`, or
`monkeypatch.setenv("HOME", str(server.client_home))`) and asyncssh's defaults
(~/.ssh/config, ~/.ssh/known_hosts, ~/.ssh/id_ed25519) find exactly these files. The OpenSSH
client ignores $HOME (it reads the passwd entry), so it always gets `-F ssh_config`.
"""

from __future__ import annotations

import atexit
import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SSHD = Path("/usr/sbin/sshd")
SETUP_TARGET = Path(__file__).resolve().parents[1] / "docker" / "setup-target.sh"
SSH = "ssh"
SSH_KEYGEN = "ssh-keygen"
INSTALL_HINT = (
    "install Debian's openssh-server and openssh-client "
    "(apt-get install -y openssh-server openssh-client); the test run installs them as root "
    "(tests/system.py)"
)
READY_TIMEOUT = 15.0
# sshd's own default PATH for a session; kept so tests can prepend a directory of fakes.
SESSION_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class SshdUnavailable(RuntimeError):
    """sshd or the ssh tools are not installed, or sshd would not start."""


def require_openssh() -> None:
    """Raise SshdUnavailable, with the fix, unless sshd, ssh and ssh-keygen are installed."""
    missing = [str(SSHD)] if not os.access(SSHD, os.X_OK) else []
    missing += [tool for tool in (SSH, SSH_KEYGEN) if shutil.which(tool) is None]
    if missing:
        raise SshdUnavailable(f"{', '.join(missing)} not found: {INSTALL_HINT}")


def generate_key(path: Path, comment: str) -> Path:
    """A fresh passphrase-less ed25519 key at PATH (and PATH.pub); returns PATH."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.with_name(path.name + ".pub").unlink(missing_ok=True)
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """All live descendants of PID, read from /proc (children before their own children)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # the process ended while we looked
        # The command name may hold spaces and parentheses: fields start after the last ')'.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    queue = list(children.get(pid, []))
    while queue:
        child = queue.pop(0)
        found.append(child)
        queue.extend(children.get(child, []))
    return found


def ssh_client_env(home: Path) -> dict[str, str]:
    """The environment for a client process: this HOME, no agent, no inherited ssh settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SSH_")}
    env["HOME"] = str(home)
    return env


def write_client_home(home: Path, servers: Iterable[SshServer], client_key: Path) -> Path:
    """Fill HOME/.ssh with the client key, known_hosts and a config naming every server."""
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir(parents=True, exist_ok=True)
    ssh_dir.chmod(0o700)
    key = ssh_dir / "id_ed25519"
    if key != client_key:
        shutil.copyfile(client_key, key)
        shutil.copyfile(client_key.with_name(client_key.name + ".pub"), ssh_dir / "id_ed25519.pub")
    key.chmod(0o600)
    servers = list(servers)
    (ssh_dir / "known_hosts").write_text("".join(s.known_hosts_line() for s in servers))
    (ssh_dir / "config").write_text("".join(s.config_block(home) for s in servers))
    return home


class SshServer:
    """One running `sshd -D` on 127.0.0.1. Attributes a test uses:

    host, port, user, alias          where and as whom to connect (alias is a Host in ssh_config)
    client_home                      a HOME whose .ssh holds the three files below
    client_key                       the accepted private key (client_home/.ssh/id_ed25519)
    known_hosts                      the client's known_hosts (client_home/.ssh/known_hosts)
    ssh_config                       the client's config (client_home/.ssh/config)
    host_key, host_public_key        the server's current host key file and its public line
    remote_home                      $HOME of commands run on the target
    workdir, log                     the server's files and its stderr log
    """

    def __init__(
        self,
        workdir: Path,
        port: int | None = None,
        *,
        alias: str = "target",
        client_key: Path | None = None,
        client_home: Path | None = None,
        session_env: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        require_openssh()
        self.workdir = workdir.resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.host = host
        self.port = port or free_port(host)
        self.user = getpass.getuser()
        self.alias = alias
        self.client_home = client_home or self.workdir / "home"
        self.client_key = self.client_home / ".ssh" / "id_ed25519"
        self.known_hosts = self.client_home / ".ssh" / "known_hosts"
        self.ssh_config = self.client_home / ".ssh" / "config"
        self.remote_home = self.workdir / "remote-home"
        self.remote_home.mkdir(exist_ok=True)
        self.host_key = generate_key(self.workdir / "host_ed25519", f"host-{alias}")
        self.host_certificate: Path | None = None
        self.authorized_keys = self.workdir / "authorized_keys"
        self.log = self.workdir / "sshd.log"
        self.session_env = {"HOME": str(self.remote_home), **(session_env or {})}
        self.process: subprocess.Popen[bytes] | None = None
        source_key = client_key or generate_key(self.workdir / "client_ed25519", f"client-{alias}")
        self.authorized_keys.write_text(source_key.with_name(source_key.name + ".pub").read_text())
        self.start_on_free_port(retry=port is None)
        write_client_home(self.client_home, [self], source_key)

    # -- the client side ---------------------------------------------------------------

    @property
    def host_public_key(self) -> str:
        """The current host public key as `TYPE BASE64` (no comment)."""
        kind, blob = self.host_key.with_name(self.host_key.name + ".pub").read_text().split()[:2]
        return f"{kind} {blob}"

    @property
    def known_hosts_name(self) -> str:
        """The name ssh records this server's key under: `[host]:port`, `host` on port 22."""
        return self.host if self.port == 22 else f"[{self.host}]:{self.port}"

    def known_hosts_line(self) -> str:
        return f"{self.known_hosts_name} {self.host_public_key}\n"

    def config_block(self, home: Path) -> str:
        """This server as a `Host` block of an ssh config whose files live in HOME/.ssh."""
        ssh_dir = home / ".ssh"
        return (
            f"Host {self.alias}\n"
            f"    HostName {self.host}\n"
            f"    Port {self.port}\n"
            f"    User {self.user}\n"
            f"    IdentityFile {ssh_dir / 'id_ed25519'}\n"
            "    IdentitiesOnly yes\n"
            f"    UserKnownHostsFile {ssh_dir / 'known_hosts'}\n"
            "    GlobalKnownHostsFile /dev/null\n"
            "    StrictHostKeyChecking yes\n"
            # ssh -F reads no /etc/ssh/ssh_config, sgtrace reads it (Debian's hashes names).
            "    HashKnownHosts no\n"
            "    BatchMode yes\n"
            "    ConnectTimeout 10\n"
        )

    def trust_host_key(self) -> None:
        """Put the server's current host key in known_hosts in place of any older one (after
        rotate_host_key); other hosts' lines stay."""
        prefix = f"{self.known_hosts_name} "
        old = (
            self.known_hosts.read_text().splitlines(keepends=True)
            if self.known_hosts.exists()
            else []
        )
        kept = [line for line in old if not line.startswith(prefix)]
        self.known_hosts.write_text("".join(kept) + self.known_hosts_line())

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments for `asyncssh.connect(**server.connect_options())`."""
        return {
            "host": self.host,
            "port": self.port,
            "username": self.user,
            "client_keys": [str(self.client_key)],
            "known_hosts": str(self.known_hosts),
            "config": [str(self.ssh_config)],
            "agent_path": None,
        }

    def client_env(self) -> dict[str, str]:
        """Environment for a client subprocess (e.g. `sgtrace fetch ALIAS`): HOME=client_home."""
        return ssh_client_env(self.client_home)

    def ssh_argv(self, command: str, *options: str) -> list[str]:
        """`ssh -F ssh_config [OPTIONS] ALIAS COMMAND` for the real OpenSSH client."""
        return [SSH, "-F", str(self.ssh_config), *options, self.alias, command]

    def ssh(
        self, command: str, *options: str, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run COMMAND on the target through the real `ssh` binary; text output captured."""
        return subprocess.run(
            self.ssh_argv(command, *options),
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
            env=self.client_env(),
            stdin=subprocess.DEVNULL,
        )

    # -- the server side ---------------------------------------------------------------

    @property
    def config_path(self) -> Path:
        return self.workdir / "sshd_config"

    def write_config(self) -> Path:
        lines = [
            f"ListenAddress {self.host}:{self.port}",
            f"HostKey {self.host_key}",
            *([f"HostCertificate {self.host_certificate}"] if self.host_certificate else []),
            f"PidFile {self.workdir / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            f"AllowUsers {self.user}",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "UsePAM no",
            "StrictModes no",
            "UseDNS no",
            "PrintMotd no",
            "PrintLastLog no",
            "LogLevel VERBOSE",
            # Tests open many connections at once (three hosts, retries after a kill).
            "MaxStartups 100",
            "MaxSessions 50",
            "Subsystem sftp internal-sftp",
        ]
        # Only the first SetEnv line counts: every variable goes on that one line.
        if self.session_env:
            pairs = (f'{name}="{value}"' for name, value in self.session_env.items())
            lines.append("SetEnv " + " ".join(pairs))
        lines += supported_extras(self.workdir)
        self.config_path.write_text("\n".join(lines) + "\n")
        return self.config_path

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process and self.process.poll() is None else None

    def start(self) -> None:
        """Start sshd on self.port and wait until it answers with an SSH banner."""
        if self.pid is not None:
            return
        if os.geteuid() == 0:
            # sshd as root insists on its privilege-separation directory, which Debian only
            # creates when the service starts through systemd or the init script.
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.write_config()
        log = self.log.open("ab")
        self.process = subprocess.Popen(
            [str(SSHD), "-D", "-e", "-f", str(self.config_path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env={"PATH": SESSION_PATH, "LANG": "C.UTF-8"},
        )
        log.close()
        RUNNING.add(self)
        self.wait_ready()

    def start_on_free_port(self, retry: bool) -> None:
        """Start; if another process took the port between free_port() and sshd's bind, try
        again on a new one (when the port was not chosen by the caller)."""
        for attempt in range(3):
            try:
                self.start()
                return
            except SshdUnavailable:
                if not retry or attempt == 2 or "Address already in use" not in self.log_tail():
                    raise
                self.port = free_port(self.host)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise SshdUnavailable(
                    f"sshd exited with {self.process.returncode}: {self.log_tail()}"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=1) as sock:
                    if sock.recv(64).startswith(b"SSH-2.0-"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise SshdUnavailable(f"sshd did not answer on port {self.port}: {self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def kill_connections(self) -> list[int]:
        """SIGKILL every per-connection sshd and the commands they run; the listener stays up.
        Returns the pids killed (empty when no connection was open)."""
        if self.pid is None:
            return []
        killed = descendants(self.pid)
        for pid in killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return killed

    def idle(self, within: float) -> bool:
        """Do the per-connection sshds end within WITHIN seconds? A client's close reaches
        the server a moment later (longer on a loaded machine)."""
        deadline = time.monotonic() + within
        while self.pid is not None and descendants(self.pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def stop(self) -> None:
        """End the listener and every connection it served."""
        if self.process is None:
            return
        self.kill_connections()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        RUNNING.discard(self)

    def restart(self, session_env: Mapping[str, str] | None = None) -> None:
        """Stop and start again on the same port, with SESSION_ENV merged in if given."""
        if session_env is not None:
            self.session_env = {**self.session_env, **session_env}
        self.stop()
        self.start()

    def rotate_host_key(self) -> str:
        """Give the server a new host key and restart it. known_hosts keeps the old key, as a
        client's would; `trust_host_key()` accepts the new one. Returns the new public key."""
        generate_key(self.host_key, f"host-{self.alias}-rotated")
        self.restart()
        return self.host_public_key

    def certify(self, authority: Path, principals: Sequence[str]) -> str:
        """Sign the host key with the CA key AUTHORITY for PRINCIPALS (host names) and serve
        the certificate; returns the CA's public key, `TYPE BASE64`."""
        subprocess.run(
            [SSH_KEYGEN, "-q", "-s", str(authority), "-h", "-I", f"host-{self.alias}"]
            + ["-n", ",".join(principals), str(self.host_key) + ".pub"],
            check=True,
            capture_output=True,
        )
        self.host_certificate = self.host_key.with_name(self.host_key.name + "-cert.pub")
        self.restart()
        kind, blob = Path(str(authority) + ".pub").read_text().split()[:2]
        return f"{kind} {blob}"

    def prepend_remote_path(self, directory: Path) -> None:
        """Commands on the target find programs in DIRECTORY first (to replace `tar` etc.)."""
        self.restart({"PATH": f"{directory}:{SESSION_PATH}"})

    def __enter__(self) -> SshServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"SshServer({self.user}@{self.host}:{self.port}, alias={self.alias!r})"


# Servers still running when the interpreter exits (an interrupted run) are stopped then.
RUNNING: set[SshServer] = set()


@atexit.register
def stop_running() -> None:
    for server in list(RUNNING):
        server.stop()


_EXTRAS: list[str] | None = None


def supported_extras(workdir: Path) -> list[str]:
    """Options newer sshd need here: from OpenSSH 9.8 on, PerSourcePenalties would refuse
    127.0.0.1 after the failed logins and killed connections the tests make on purpose."""
    global _EXTRAS
    if _EXTRAS is None:
        probe = workdir / "sshd_config.probe"
        probe.write_text("PerSourcePenalties no\n")
        result = subprocess.run(
            [str(SSHD), "-G", "-f", str(probe), "-o", "HostKey=/dev/null"],
            capture_output=True,
            text=True,
        )
        probe.unlink()
        _EXTRAS = ["PerSourcePenalties no"] if "persourcepenalties" in result.stdout else []
    return _EXTRAS


def start_sshd(
    workdir: Path,
    port: int | None = None,
    *,
    alias: str = "target",
    client_key: Path | None = None,
    client_home: Path | None = None,
    session_env: Mapping[str, str] | None = None,
    host: str = "127.0.0.1",
) -> SshServer:
    """Start a real sshd serving the current user on HOST, 127.0.0.1 unless given (a free
    port unless PORT). A new client key is made unless CLIENT_KEY (a private key path) is
    given; the client files go to WORKDIR/home unless CLIENT_HOME is given."""
    return SshServer(
        workdir,
        port,
        alias=alias,
        client_key=client_key,
        client_home=client_home,
        session_env=session_env,
        host=host,
    )


def start_sshd_group(workdir: Path, count: int, alias_prefix: str = "target") -> list[SshServer]:
    """COUNT servers on COUNT ports (aliases PREFIX-1..PREFIX-COUNT) that accept one client
    key and share one client_home, whose known_hosts and config name all of them."""
    home = workdir.resolve() / "home"
    key = generate_key(home / ".ssh" / "id_ed25519", "client-group")
    servers: list[SshServer] = []
    try:
        for n in range(1, count + 1):
            name = f"{alias_prefix}-{n}"
            servers.append(start_sshd(workdir / name, alias=name, client_key=key, client_home=home))
    except BaseException:
        stop_all(servers)
        raise
    write_client_home(home, servers, key)
    return servers


def stop_all(servers: Sequence[SshServer]) -> None:
    for server in servers:
        server.stop()


# -- what the target serves ---------------------------------------------------------------


class SetupTargetFailed(RuntimeError):
    """docker/setup-target.sh could not lay out the release."""


@dataclass(frozen=True, slots=True)
class Target:
    """A release laid out on the target. `package_root` holds `sglang/`: the path to fetch."""

    version: str
    layout: str  # "checkout" or "site-packages"
    root: Path  # the checkout (a git work tree) or the virtualenv prefix
    package_root: Path  # root/python, or root/lib/python3.12/site-packages


def setup_target(
    version: str,
    dest: Path,
    *,
    layout: str = "checkout",
    patch: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Target:
    """Run docker/setup-target.sh: SGLang VERSION laid out in DEST as LAYOUT, PATCH applied."""
    command = [str(SETUP_TARGET), version, str(dest), "--layout", layout]
    if patch is not None:
        command += ["--patch", str(patch)]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SetupTargetFailed(f"setup-target.sh failed: {result.stderr.strip()}")
    package_root = Path(result.stdout.strip().splitlines()[-1])
    return Target(version, layout, dest.resolve(), package_root)
