"""The programs the tests need from the system, installed when missing.

The README's test command is all the set-up a fresh Debian or Ubuntu machine gets: when one of
these programs is missing, the test run installs its package with apt-get if it runs as root,
and otherwise stops at once with one line naming the packages to install. A missing program is
never a skip: the tests that need it would prove nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Program:
    """A program some test runs, and the Debian package that installs it."""

    name: str  # a command looked up on PATH, or an absolute path
    package: str
    why: str


PROGRAMS = (
    Program("/usr/sbin/sshd", "openssh-server", "the remote tests' own sshd on 127.0.0.1"),
    Program("ssh", "openssh-client", "host keys compared with OpenSSH's client"),
    Program("ssh-keygen", "openssh-client", "the sshd fixture's keys"),
    Program("rsync", "rsync", "the fetch compared with rsync"),
    Program("zstd", "zstd", "the remote tar stream, compressed"),
    Program("git", "git", "checkouts to fetch and audit"),
    Program("tmux", "tmux", "the walk in a real terminal"),
    Program("dot", "graphviz", "export -f svg|png"),
)


def present(program: Program, which: Callable[[str], str | None] = shutil.which) -> bool:
    if os.path.isabs(program.name):
        return os.access(program.name, os.X_OK)
    return which(program.name) is not None


def missing(programs: tuple[Program, ...] = PROGRAMS) -> list[Program]:
    return [p for p in programs if not present(p)]


def packages(programs: list[Program]) -> list[str]:
    return list(dict.fromkeys(p.package for p in programs))


class SystemIncomplete(Exception):
    """A program the tests need is missing and cannot be installed here; the message is the
    one line to show."""


def install_command(names: list[str]) -> list[str]:
    return ["apt-get", "install", "-y", "-q", "--no-install-recommends", *names]


def ensure_programs(
    say: Callable[[str], None],
    run: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run,
    is_root: bool | None = None,
    environ: Mapping[str, str] = os.environ,
) -> list[str]:
    """Install the packages of the missing programs (apt-get, as root); returns what was
    installed. SystemIncomplete names what to install when that cannot be done here."""
    absent = missing()
    if not absent:
        return []
    names = packages(absent)
    listed = " ".join(names)
    programs = ", ".join(Path(p.name).name for p in absent)
    root = os.geteuid() == 0 if is_root is None else is_root
    if not root or shutil.which("apt-get") is None:
        raise SystemIncomplete(
            f"the tests need {programs}, which this machine lacks: install {listed} "
            f"(Debian/Ubuntu: sudo apt-get install {listed}), or run the tests as root "
            "on Debian/Ubuntu and they install it"
        )
    say(f"tests: installing {listed} with apt-get ({programs} missing)")
    env = {**environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], install_command(names)):
        done = run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            tail = done.stdout.decode("utf-8", "replace").strip().splitlines()[-1:]
            raise SystemIncomplete(
                f"`{' '.join(command)}` failed ({' '.join(tail) or f'status {done.returncode}'}): "
                f"install {listed} by hand"
            )
    still = missing()
    if still:
        raise SystemIncomplete(
            f"apt-get installed {listed}, yet {', '.join(p.name for p in still)} is still "
            "not found: check PATH"
        )
    return names
