"""What every command shares: the SOURCE argument, the output and SSH options, and `Trees`,
which opens the sources a command names (fetched, indexed, progress on the terminal)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.cli import presets
from tracer.sources.hint import PackageHint
from tracer.sources.remote import IDLE_TIMEOUT, SshOptions
from tracer.views.terminal import visible
from tracer.views.warnings import partly_indexed

if TYPE_CHECKING:  # each command loads what it uses: `fetch` needs neither engine nor graph
    from tracer.session import Session
    from tracer.sources.snapshot import Snapshot

# What a host holds, searched for where no path is given.
PACKAGE = PackageHint(presets.PACKAGE, presets.CHECKOUT_LOCATIONS)


REMOTE_FORMS = "host:/path, user@host:/path or ssh://user@host:port/path"
SOURCE_FORMS = (
    "a folder, a .py file, pypi:NAME==VERSION (e.g. pypi:sglang==0.5.9), or a tree on a "
    f"host, fetched over SSH: {REMOTE_FORMS}"
)


def say(text: str, *, err: bool = False, end: str = "\n", flush: bool = False) -> None:
    """Print TEXT on stdout (stderr with ERR) as every line sgtrace writes reaches a terminal:
    `visible`, whatever it quotes of a tree, a log, a host or the command line."""
    print(visible(text), end=end, file=sys.stderr if err else sys.stdout, flush=flush)


def add_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="SOURCE", help=SOURCE_FORMS)


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress or warning summary")
    parser.add_argument("--warnings", action="store_true", help="list every indexing warning")
    ssh = parser.add_argument_group("remote sources (SSH)")
    ssh.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and record the key of a host (or a ProxyJump's jump host) not yet in "
        "known_hosts, where ssh would record it (a changed or revoked key is always refused)",
    )
    ssh.add_argument(
        "--known-hosts",
        type=Path,
        help="a known_hosts file read first, and where an accepted key is recorded (the "
        "files the ssh config names, or OpenSSH's defaults, are read too)",
    )
    ssh.add_argument(
        "--ssh-config",
        type=Path,
        help="ssh config file (default ~/.ssh/config, then /etc/ssh/ssh_config, as ssh reads)",
    )
    ssh.add_argument(
        "-i", "--identity", type=Path, action="append", default=[], help="private key file"
    )
    ssh.add_argument("--connect-timeout", type=float, default=15.0, help="seconds (default 15)")
    ssh.add_argument(
        "--idle-timeout",
        type=float,
        default=IDLE_TIMEOUT,
        help=f"seconds a host may stay silent in the middle of an answer "
        f"(default {IDLE_TIMEOUT:g})",
    )
    ssh.add_argument(
        "--no-host-key-check",
        action="store_true",
        help="do not verify host keys at all, jump hosts' included (insecure: only on networks "
        "you trust)",
    )


class Trees:
    """The trees one command opens: fetched with one set of SSH options, indexed with
    progress on a terminal; their indexing warnings told once, when the command ends."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.show_progress = not args.quiet and sys.stderr.isatty()
        self._ssh: SshOptions | None = None
        self.warnings: dict[str, list[str]] = {}  # by the label of each tree indexed
        self.made_for: dict[str, str] = {}  # the label of a tree made for another -> its label

    @property
    def ssh(self) -> SshOptions:
        """The SSH options the command line gives (the warning of an unchecked key, once)."""
        if self._ssh is None:
            args = self.args
            if args.no_host_key_check and not args.quiet:
                say("sgtrace: warning: host keys are not verified (--no-host-key-check)", err=True)
            self._ssh = SshOptions(
                known_hosts=args.known_hosts,
                config=args.ssh_config,
                identities=tuple(args.identity),
                accept_new_host_key=args.accept_new_host_key,
                check_host_key=not args.no_host_key_check,
                timeout=args.connect_timeout,
                idle_timeout=args.idle_timeout,
            )
        return self._ssh

    def fetch_progress(self, lines: bool = False) -> FetchProgress:
        return FetchProgress(self.show_progress, lines)

    def session(self, source: str) -> Session:
        """SOURCE opened and indexed."""
        from tracer.session import open_session  # the engine loads only for commands that index

        session = open_session(
            source,
            progress=self.indexing_progress,
            ssh_options=self.ssh,
            fetch_progress=self.fetch_progress(),
            hint=PACKAGE,
        )
        if self.show_progress and session.facts.parsed_files:
            print(file=sys.stderr)
        self.warnings[session.snapshot.label] = session.warnings()
        return session

    def index(self, snapshot: Snapshot, made_for: Snapshot | None = None) -> Session:
        """SNAPSHOT, already fetched, indexed; MADE_FOR: the tree the user named that SNAPSHOT
        was made for (an audit's reference), whose warnings it does not tell again."""
        from tracer.session import index_snapshot

        session = index_snapshot(snapshot)
        self.warnings[snapshot.label] = session.warnings()
        if made_for is not None:
            self.made_for[snapshot.label] = made_for.label
        return session

    def indexing_progress(self, done: int, total: int) -> None:
        if self.show_progress and (done % 50 == 0 or done == total):
            print(f"\rindexing {done}/{total} files", end="", file=sys.stderr, flush=True)

    def tell_warnings(self, listed_only: bool = False) -> None:
        """Each tree's indexing warnings, once: every one with --warnings, else one line per
        tree naming its first files (nothing with --quiet, nor when LISTED_ONLY). A tree made
        for another (an audit's reference, made from the target) tells only the warnings that
        one does not: their files, and so their problems, are mostly the same."""
        telling: dict[str, list[str]] = {}
        for label, warnings in self.warnings.items():
            told = set(self.warnings.get(self.made_for.get(label, ""), ()))
            fresh = [warning for warning in dict.fromkeys(warnings) if warning not in told]
            if fresh:
                telling[label] = fresh
        several = len(telling) > 1
        for label, warnings in telling.items():
            where = f"{label}: " if several else ""
            if self.args.warnings:
                for warning in warnings:
                    say(f"warning: {where}{warning}", err=True)
            elif not self.args.quiet and not listed_only:
                say(f"sgtrace: {where}{partly_indexed(warnings)} (--warnings lists them)", err=True)


class FetchProgress:
    """Prints `host: N files, X MB, Y MB/s` while a fetch streams (to a terminal only); one
    line per update when several hosts fetch at once, else one line rewritten."""

    def __init__(self, show: bool, lines: bool = False) -> None:
        self.show = show
        self.lines = lines
        self.started = time.monotonic()

    def __call__(self, host: str, files: int, total: int, received: int) -> None:
        if not self.show:
            return
        rate = received / max(time.monotonic() - self.started, 1e-3) / (1 << 20)
        done = files == total
        text = f"{host}: {total} files, {received / (1 << 20):.1f} MB, {rate:.1f} MB/s"
        text = visible(text + (" done" if done else ""))
        if self.lines:
            print(text, file=sys.stderr)
        else:  # the line rewritten: its own carriage return, after the text is made visible
            print(f"\r{text}", end="\n" if done else "", file=sys.stderr, flush=True)
