"""What a fetch refuses or survives: unknown and changed host keys, remote paths written to
break a shell, a remote `tar` that sends what it should not, and a connection killed while
the files stream. Each failure is one line on stderr with exit 2 and leaves the cache as it
was; nothing lands outside the cache."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.fetching import (
    Run,
    cached_files,
    fake_program,
    hashes,
    mirrored_hashes,
    probed_files,
    write_package,
)
from tests.integration.test_fetch_bounded import Host, host, sends, tar_of, zstd_host
from tests.integration.test_fetch_bounded import sgtrace as run_on
from tests.sshd import SESSION_PATH, SshServer, start_sshd
from tracer.errors import printable

__all__ = ["host", "zstd_host"]  # fixtures of the fetch bounds' tests, taken here too


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small package on the target: TREE/sglang/{__init__,mod}.py."""
    return write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})


# -- host keys ------------------------------------------------------------------------------------


def test_unknown_host_key_is_refused(
    fresh_client: SshServer, sgtrace: Callable[..., Run], cache: Path, tree: Path
) -> None:
    fresh_client.known_hosts.write_text("")

    line = sgtrace("fetch", f"{fresh_client.alias}:{tree}").error_line()

    assert f"the host key of {fresh_client.alias} is not in {fresh_client.known_hosts}" in line
    assert "--accept-new-host-key" in line
    assert fresh_client.known_hosts.read_text() == ""
    assert cached_files(cache) == {}


def test_accepted_host_key_is_recorded_and_trusted_next_time(
    fresh_client: SshServer, sgtrace: Callable[..., Run], tree: Path
) -> None:
    fresh_client.known_hosts.write_text("")
    source = f"{fresh_client.alias}:{tree}"

    accepted = sgtrace("fetch", source, "--accept-new-host-key", "--json")

    assert (accepted.code, accepted.err) == (0, "")
    # Under the name ssh checks (the config's HostName and Port), not the alias typed.
    assert fresh_client.known_hosts.read_text() == fresh_client.known_hosts_line()
    again = sgtrace("fetch", source, "--json")
    assert (again.code, again.err) == (0, "")
    assert fresh_client.ssh("echo ok").stdout == "ok\n"  # OpenSSH trusts the line too


def test_accepted_host_key_goes_to_the_known_hosts_given(
    fresh_client: SshServer, sgtrace: Callable[..., Run], tree: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "mine" / "known_hosts"  # its folder does not exist yet
    source = f"{fresh_client.alias}:{tree}"
    # --known-hosts comes first, before the files the ssh config names, which are read too.
    fresh_client.known_hosts.write_text("")

    refused = sgtrace("fetch", source, "--known-hosts", str(mine))
    assert f"is not in {mine}" in refused.error_line()
    accepted = sgtrace("fetch", source, "--known-hosts", str(mine), "--accept-new-host-key")

    assert accepted.code == 0, accepted.err
    assert mine.read_text() == fresh_client.known_hosts_line()
    assert sgtrace("fetch", source, "--known-hosts", str(mine)).code == 0


def test_changed_host_key_is_refused_even_when_accepting_new_ones(
    fresh_client: SshServer, sgtrace: Callable[..., Run], cache: Path, tree: Path
) -> None:
    recorded = fresh_client.known_hosts.read_text()
    fresh_client.rotate_host_key()

    line = sgtrace("fetch", f"{fresh_client.alias}:{tree}", "--accept-new-host-key").error_line()

    assert f"the host key of {fresh_client.alias} has CHANGED" in line
    assert f"ssh-keygen -R [127.0.0.1]:{fresh_client.port} -f {fresh_client.known_hosts}" in line
    assert fresh_client.known_hosts.read_text() == recorded
    assert cached_files(cache) == {}
    fresh_client.trust_host_key()
    assert sgtrace("fetch", f"{fresh_client.alias}:{tree}").code == 0


def test_no_host_key_check_connects_and_warns(
    fresh_client: SshServer, sgtrace: Callable[..., Run], tree: Path
) -> None:
    fresh_client.known_hosts.write_text("")

    run = sgtrace("fetch", f"{fresh_client.alias}:{tree}", "--no-host-key-check", "--json")

    assert run.code == 0
    assert run.err == "sgtrace: warning: host keys are not verified (--no-host-key-check)\n"
    assert fresh_client.known_hosts.read_text() == ""  # nothing recorded either


# -- remote paths that are only paths --------------------------------------------------------------


def hostile_name(markers: Path, victim: Path) -> str:
    """A folder name that runs commands if any shell on the way reads it as code."""
    return (
        f'it\'s "quoted" $(touch {markers}/dollar) `touch {markers}/backtick` '
        f"; rm -rf {victim} ; touch {markers}/semicolon & touch {markers}/amp | x > y"
        " \\ tab\there"
    )


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "keep.txt").write_text("still here\n")
    return folder


def test_path_full_of_shell_syntax_is_fetched_as_a_path(
    client: SshServer,
    sgtrace: Callable[..., Run],
    cache: Path,
    tmp_path: Path,
    markers: Path,
    victim: Path,
) -> None:
    folder = write_package(tmp_path / "remote" / hostile_name(markers, victim), {"m.py": "y = 2\n"})
    source = f"{client.alias}:{folder}"

    [result] = sgtrace("fetch", source, "--json").results()

    assert (result["root"], result["package"], result["files"]) == (str(folder), "sglang", 2)
    assert mirrored_hashes(cache) == hashes(probed_files(folder))
    assert list(markers.iterdir()) == []
    assert (victim / "keep.txt").read_text() == "still here\n"


def test_missing_path_full_of_shell_syntax_runs_nothing(
    client: SshServer,
    sgtrace: Callable[..., Run],
    cache: Path,
    tmp_path: Path,
    markers: Path,
    victim: Path,
) -> None:
    missing = tmp_path / "absent" / hostile_name(markers, victim)
    line = sgtrace("fetch", f"{client.alias}:{missing}").error_line()

    assert f"{printable(str(missing))} does not exist on {client.alias}" in line  # tab as \t
    assert list(markers.iterdir()) == []
    assert (victim / "keep.txt").read_text() == "still here\n"
    assert cached_files(cache) == {}


# -- a remote tar that sends what it should not ----------------------------------------------------


@pytest.fixture(scope="module")
def evil_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the test writes the archive the target's fake `tar` sends instead of the files."""
    return tmp_path_factory.mktemp("evil") / "archive.tar"


@pytest.fixture(scope="module")
def evil_tar_sshd(
    tmp_path_factory: pytest.TempPathFactory, evil_archive: Path
) -> Iterator[SshServer]:
    """A server whose `tar` reads the list it is given, then sends EVIL_ARCHIVE."""
    fakes = tmp_path_factory.mktemp("evil-bin")
    fake_program(fakes, "tar", f"cat >/dev/null\nexec cat {evil_archive}\n")
    server = start_sshd(
        tmp_path_factory.mktemp("evil-sshd"), session_env={"PATH": f"{fakes}:{SESSION_PATH}"}
    )
    yield server
    server.stop()


def archive(*members: tuple[str, bytes | str]) -> bytes:
    """A tar of MEMBERS: (name, bytes) is a file; (name, "symlink:T") or ("hardlink:T") a link."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, content in members:
            info = tarfile.TarInfo(name)
            if isinstance(content, str):
                kind, _, info.linkname = content.partition(":")
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return out.getvalue()


GOOD = ("sglang/__init__.py", b"# sent first, before the bad member\n")
HOSTILE_ARCHIVES = {
    "parent": (
        [GOOD, ("../escape.py", b"owned = True\n")],
        "a member that escapes the tree: '../escape.py'",
    ),
    "inner-parent": (
        [GOOD, ("sglang/../../escape.py", b"owned = True\n")],
        "a member that escapes the tree: 'sglang/../../escape.py'",
    ),
    "absolute": (
        [GOOD, ("{absolute}", b"owned = True\n")],
        "a member that escapes the tree: '{absolute}'",
    ),
    "symlink": (
        [GOOD, ("sglang/mod.py", "symlink:/etc/passwd")],
        "a link or special file: 'sglang/mod.py'",
    ),
    "hardlink": (
        [GOOD, ("sglang/mod.py", "hardlink:../../escape.py")],
        "a link or special file: 'sglang/mod.py'",
    ),
    "unrequested": (
        [GOOD, ("sglang/extra.py", b"owned = True\n")],
        "a file that was not asked for: 'sglang/extra.py'",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ARCHIVES))
def test_hostile_archive_is_refused_and_nothing_is_written(
    case: str,
    evil_tar_sshd: SshServer,
    evil_archive: Path,
    use_client_home: Callable[[SshServer], Path],
    sgtrace: Callable[..., Run],
    cache: Path,
    tree: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_client_home(evil_tar_sshd)
    monkeypatch.chdir(tree)  # `..` from here, from the tree and from the cache: tmp_path
    absolute = tmp_path / "absolute.py"
    members, message = HOSTILE_ARCHIVES[case]
    evil_archive.write_bytes(
        archive(*((name.format(absolute=absolute), data) for name, data in members))
    )

    line = sgtrace("fetch", f"{evil_tar_sshd.alias}:{tree}").error_line()

    assert f"{evil_tar_sshd.alias} sent {message.format(absolute=absolute)}" in line
    assert "nothing was written" in line
    assert not (tmp_path / "escape.py").exists()
    assert not absolute.exists()
    assert cached_files(cache) == {}  # no blob, not even of the good member; no mirror


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        (b"this is not a tar archive at all" * 40, "is damaged"),
        (archive(GOOD), "did not send 1 file(s), e.g. sglang/mod.py"),
    ],
    ids=["garbage", "short"],
)
def test_broken_archive_is_refused(
    sent: bytes,
    message: str,
    evil_tar_sshd: SshServer,
    evil_archive: Path,
    use_client_home: Callable[[SshServer], Path],
    sgtrace: Callable[..., Run],
    cache: Path,
    tree: Path,
) -> None:
    use_client_home(evil_tar_sshd)
    evil_archive.write_bytes(sent)

    line = sgtrace("fetch", f"{evil_tar_sshd.alias}:{tree}").error_line()

    assert message in line
    assert cached_files(cache) == {}


# -- a connection killed while the files stream ----------------------------------------------------


def kill_when(server: SshServer, started: Path, timeout: float = 30) -> threading.Thread:
    """A thread that kills the server's connections as soon as STARTED exists."""

    def watch() -> None:
        deadline = time.monotonic() + timeout
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        server.kill_connections()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (
            "tar",
            "the connection to target broke during the transfer: run the command again: "
            "the cache is as it was, and the next run completes it",
        ),
        ("find", "the connection to target was lost: run the command again"),
    ],
    ids=["during-transfer", "during-probe"],
)
def test_killed_connection_leaves_the_cache_as_it_was(
    program: str,
    message: str,
    fresh_client: SshServer,
    sgtrace: Callable[..., Run],
    cache: Path,
    tree: Path,
    tmp_path: Path,
) -> None:
    source = f"{fresh_client.alias}:{tree}"
    assert sgtrace("fetch", source, "--json").code == 0
    (tree / "sglang" / "mod.py").write_text("x = 2  # changed on the box\n")
    before = cached_files(cache)
    # The next run of PROGRAM (`find` lists the tree in the probe, `tar` sends the files)
    # marks that it started, then hangs until killed; later runs work.
    started = tmp_path / "started"
    real = shutil.which(program, path=SESSION_PATH)
    fake_program(
        tmp_path / "slow-bin",
        program,
        f'if [ ! -e {started} ]; then touch {started}; sleep 60; fi\nexec {real} "$@"\n',
    )
    fresh_client.prepend_remote_path(tmp_path / "slow-bin")
    killer = kill_when(fresh_client, started)

    began = time.monotonic()
    line = sgtrace("fetch", source).error_line()
    killer.join()

    assert started.exists() and time.monotonic() - began < 30
    assert line == f"sgtrace: error: {source}: {message}"
    assert cached_files(cache) == before
    [result] = sgtrace("fetch", source, "--json").results()
    assert result["fetched_files"] == 1
    assert mirrored_hashes(cache) == hashes(probed_files(tree))


# -- what the tree on the host holds: code nested too deep, control sequences, files skipped ----

DEEP = "z = " + "(" * 10_000 + "fraction" + ")" * 10_000 + "\n"  # past parse.MAX_DEPTH
RUN = "def start(fraction):\n    tokens = fraction * 2  # \x1b]0;OWNED\x07\x1b[2J\u009b2J\n"
CONTROLS = ("\x1b", "\x07", "\x7f", "\u009b")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=repo,
        env={
            **os.environ,
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@example.org",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@example.org",
        },
        check=True,
        capture_output=True,
    )


def test_a_host_s_tree_of_deep_and_hostile_code_is_traced_and_shown_safely(
    client: SshServer, sgtrace: Callable[..., Run], tmp_path: Path
) -> None:
    tree = write_package(tmp_path / "tree", {"run.py": RUN, "deep.py": DEEP})
    (tree / "sglang" / "esc\x1b[2J.py").write_text(RUN)

    traced = sgtrace("trace", f"{client.alias}:{tree}", "fraction", "--to", "tokens", "--warnings")

    assert traced.code == 0, traced.err
    assert traced.out.splitlines()[3:] == [
        " 1. param        sglang/run.py:1  start",
        "       fraction",
        "    | the name is read here",
        " 2. formula      sglang/run.py:2  start",
        "       tokens = fraction * 2  # \\x1b]0;OWNED\\x07\\x1b[2J\\x9b2J",
    ]
    assert traced.err.splitlines() == [
        "warning: sglang/esc\\x1b[2J.py: a name with control characters; skipped",
        "warning: sglang/deep.py: nested more than 200 levels deep at line 1; that statement "
        "was skipped, the rest of the file was indexed",
    ]
    shown = sgtrace("export", f"{client.alias}:{tree}", "fraction", "-f", "mermaid")
    assert "start:1<br/>fraction" in shown.out
    for output in (traced.out, traced.err, shown.out, shown.err):
        assert not any(char in output for char in CONTROLS)


def test_an_audit_of_a_hostile_checkout_tells_its_warnings_once(
    client: SshServer, sgtrace: Callable[..., Run], tmp_path: Path
) -> None:
    """The target and the reference made from its commit share their files, and so the
    problems of those files: told once, for the tree the user named."""
    repo = tmp_path / "repo"
    write_package(repo / "python", {"run.py": RUN, "deep.py": DEEP, "broken.py": "def f(:\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "release")
    (repo / "python" / "sglang" / "run.py").write_text(RUN.replace("* 2", "* 3"))

    audited = sgtrace("audit", f"{client.alias}:{repo}", "--param", "fraction", "--to", "tokens")

    assert audited.code == 1, audited.err  # the change touches the traced chain
    assert audited.err.splitlines() == [
        "sgtrace: 2 file(s) had problems and were indexed in part: sglang/broken.py and "
        "sglang/deep.py (--warnings lists them)"
    ]
    listed = sgtrace(
        "audit", f"{client.alias}:{repo}", "--param", "fraction", "--to", "tokens", "--warnings"
    )
    assert listed.err.splitlines() == [
        "warning: sglang/broken.py: syntax error near line 1; the rest of the file was indexed",
        "warning: sglang/deep.py: nested more than 200 levels deep at line 1; that statement "
        "was skipped, the rest of the file was indexed",
    ]


def test_a_fetch_counts_the_files_it_fetched_and_those_it_skipped(
    host: Host, tmp_path: Path
) -> None:
    """A name with control characters is skipped by the probe; a file the manifest gave as
    6 bytes and the tar as 9 MB, on the way. Neither is counted as fetched; both are named."""
    tree = write_package(tmp_path / "tree", {"mod.py": "z = 3\n"})
    (tree / "sglang" / "esc\x1b[2J.py").write_text(RUN)
    grown = b"z = 3\n" * ((9 << 20) // 6)
    sends(host, tmp_path / "payload", tar_of({"sglang/__init__.py": b"", "sglang/mod.py": grown}))
    skipped = [
        "sglang/esc\\x1b[2J.py: a name with control characters; skipped",
        "sglang/mod.py: 9.0 MB, over the 8 MB cap; skipped",
    ]

    [result] = run_on(host, tmp_path / "c1", "fetch", f"target:{tree}", "--json").results()
    told = run_on(host, tmp_path / "c2", "fetch", f"target:{tree}", "--warnings")

    assert (result["files"], result["fetched_files"], result["skipped"]) == (1, 1, skipped)
    assert told.code == 0
    assert re.fullmatch(
        rf"target: 1 files under {re.escape(str(tree))} \(sglang version unknown\); fetched 1 "
        r"files, [0-9.]+ MB in [0-9.]+ s; skipped 2 \(--warnings lists them\)\n",
        told.out,
    )
    assert told.err.splitlines() == [f"warning: {warning}" for warning in skipped]
