"""What a hostile host cannot do to the machine that fetches from it: hang the command, fill
its memory, end it in a traceback, pass a damaged copy for a file, or write control codes to
the terminal. Each attack goes through the real sshd, with the host's `tar`, `find`, `git`,
`journalctl` or `mktemp` replaced by a fake that sends what an attacker would; sgtrace runs as
its own process with its address space capped and a deadline, so a regression fails the test
instead of eating the machine. Each failure is one line on stderr, exit 2."""

from __future__ import annotations

import io
import os
import resource
import shlex
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.fetching import (
    Run,
    cached_files,
    fake_program,
    hashes,
    mirrored_hashes,
    probed_files,
    sgtrace_process,
    write_package,
)
from tests.sshd import SESSION_PATH, SshServer, start_sshd
from tests.unit.test_tarstream import END, header
from tracer.sources.snapshot import local_snapshot

MEMORY = 1 << 30  # a fetch needs ~100 MB of address space; the attacks took 4-7 GB
SECONDS = 60  # the deadline of one run; the attacks hung for good
FAKED = ("tar", "find", "git", "journalctl", "mktemp")
TOOLS = ("sh", "cat", "rm", "dirname", "basename", "sleep", "yes", "head", "printf", "tr")
COMPRESSORS = {"zstd": ("zstd", "lz4", "gzip"), "gzip": ("gzip",), "none": ()}


@dataclass
class Host:
    """A server whose programs in FAKED run a script of the test's when it gave one, else
    the real program; its PATH holds TOOLS and the compressors of one COMPRESSORS entry."""

    server: SshServer
    scripts: Path

    def fake(self, program: str, script: str) -> None:
        """From now on PROGRAM on the host runs SCRIPT (sh; its arguments in "$@")."""
        (self.scripts / f"{program}.sh").write_text(script)

    def forget_fakes(self) -> None:
        for script in self.scripts.glob("*.sh"):
            script.unlink()


def start_host(workdir: Path, tools: tuple[str, ...]) -> Host:
    bin_dir = workdir / "bin"
    scripts = workdir / "scripts"
    scripts.mkdir(parents=True)
    for tool in (*TOOLS, *tools, *FAKED):
        real = shutil.which(tool, path=SESSION_PATH)
        assert real, tool
        if tool in FAKED:
            script = shlex.quote(str(scripts / f"{tool}.sh"))
            fake_program(bin_dir, tool, f'[ -f {script} ] && . {script}\nexec {real} "$@"\n')
        else:
            bin_dir.mkdir(exist_ok=True)
            (bin_dir / tool).symlink_to(real)
    return Host(start_sshd(workdir / "sshd", session_env={"PATH": str(bin_dir)}), scripts)


@pytest.fixture(scope="module", params=sorted(COMPRESSORS))
def any_host(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Host]:
    """A host with the compressors of each COMPRESSORS entry in turn: the stream is then
    zstd (decompressed by a local process), gzip (zlib, here), or plain."""
    host = start_host(tmp_path_factory.mktemp(f"host-{request.param}"), COMPRESSORS[request.param])
    yield host
    host.server.stop()


@pytest.fixture(scope="module")
def zstd_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    host = start_host(tmp_path_factory.mktemp("host-zstd"), COMPRESSORS["zstd"])
    yield host
    host.server.stop()


@pytest.fixture
def host(zstd_host: Host) -> Iterator[Host]:
    yield zstd_host
    zstd_host.forget_fakes()


@pytest.fixture
def each_host(any_host: Host) -> Iterator[Host]:
    yield any_host
    any_host.forget_fakes()


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def sgtrace(host: Host, cache: Path, *args: str) -> Run:
    """`python -m tracer.cli ARGS` as a user runs it (HOME the client's, the cache CACHE), in
    at most MEMORY bytes of address space and SECONDS."""
    return sgtrace_process(host.server, cache, *args, timeout=SECONDS, limits=limit_memory)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """TREE/sglang/{__init__,mod}.py on the host."""
    return write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})


def tar_of(files: dict[str, bytes], end: bool = True) -> bytes:
    """The tar of FILES; without its end-of-archive blocks unless END."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        members = archive.offset
    return out.getvalue() if end else out.getvalue()[:members]


def sends(host: Host, payload: Path, data: bytes, then: str = "") -> None:
    """The host's tar reads its list of files, then sends DATA, then runs THEN (sh)."""
    payload.write_bytes(data)
    host.fake("tar", f"cat >/dev/null\ncat {shlex.quote(str(payload))}\n{then}\nexit 0\n")


# -- archives: sizes, duplicates, endless streams, silence (4, 5, 6, 15, 17) ----------------------

EMPTY = b"00000000000\0"
ATTACKS = {
    "negative-size": (
        header(b"sglang/__init__.py", b"-0000001000\0") + bytes(4096) + END,
        "",
        "target sent a member whose size is not a size",
    ),
    "small-negative-size": (
        header(b"sglang/__init__.py", b"-1\0") + END,
        "",
        "target sent a member whose size is not a size",
    ),
    "endless-duplicates": (
        header(b"sglang/__init__.py", EMPTY) * 2048,  # a megabyte a `cat`: zstd -T0 flushes
        'while cat "$0"; do :; done',
        "target sent the same file twice: 'sglang/__init__.py'",
    ),
    "endless-global-headers": (
        header(b"pax_global_header", EMPTY, b"g") * 2048,
        'while cat "$0"; do :; done',
        "target sent over 264 members for 2 files",
    ),
    "malformed-pax-length": (
        header(b"PaxHeader", b"%011o\0" % 20, b"x")
        + b"99 path=sglang/a.py\n".ljust(512, b"\0")
        + header(b"sglang/__init__.py", EMPTY)
        + END,
        "",
        "the archive from target is damaged (a malformed pax header)",
    ),
    "endless-zeros": (b"", "exec cat /dev/zero", "target did not send 2 file(s)"),
    "endless-garbage": (
        b"",
        "exec yes",
        "the archive from target is damaged (bad header checksum)",
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_hostile_archive_ends_in_one_line_in_bounded_time_and_memory(
    attack: str, each_host: Host, tree: Path, tmp_path: Path
) -> None:
    data, then, message = ATTACKS[attack]
    payload = tmp_path / "payload"
    sends(each_host, payload, data, then.replace('"$0"', shlex.quote(str(payload))))
    cache = tmp_path / "cache"

    began = time.monotonic()
    line = sgtrace(each_host, cache, "fetch", f"target:{tree}").error_line()

    assert message in line
    assert time.monotonic() - began < 30
    assert cached_files(cache) == {}  # no blob, no manifest


@pytest.mark.parametrize("then", ["exec cat /dev/zero", "exec yes"])
def test_what_follows_the_end_of_the_archive_is_never_read(
    then: str, each_host: Host, tree: Path, tmp_path: Path
) -> None:
    files = probed_files(tree)
    sends(each_host, tmp_path / "payload", tar_of(files), then)
    cache = tmp_path / "cache"

    run = sgtrace(each_host, cache, "fetch", f"target:{tree}", "--json")

    assert (run.code, run.err) == (0, "")
    assert mirrored_hashes(cache) == hashes(files)


@pytest.mark.parametrize("any_host", ["none"], indirect=True)  # a compressor would hold it
def test_the_archive_is_taken_when_it_ends_without_waiting_for_the_command(
    each_host: Host, tree: Path, tmp_path: Path
) -> None:
    files = probed_files(tree)
    sends(each_host, tmp_path / "payload", tar_of(files), "exec sleep 30")
    cache = tmp_path / "cache"

    began = time.monotonic()
    run = sgtrace(each_host, cache, "fetch", f"target:{tree}", "--json", "--idle-timeout", "20")

    assert (run.code, run.err) == (0, "")
    assert time.monotonic() - began < 15
    assert mirrored_hashes(cache) == hashes(files)


def test_a_tar_that_goes_silent_is_given_up_after_the_idle_timeout(
    each_host: Host, tree: Path, tmp_path: Path
) -> None:
    each_host.fake("tar", "cat >/dev/null\nexec sleep 30\n")

    began = time.monotonic()
    run = sgtrace(each_host, tmp_path / "cache", "fetch", f"target:{tree}", "--idle-timeout", "2")

    assert run.error_line() == (
        f"sgtrace: error: target:{tree}: target sent nothing for 2 s while sending the files: "
        "check the host (a hung disk or command?), or wait longer: --idle-timeout"
    )
    assert time.monotonic() - began < 20
    assert cached_files(tmp_path / "cache") == {}


def test_the_same_large_file_sent_twice_leaves_nothing(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    big = b"y = 2\n" * (1 << 20)  # 6 MB, under the cap
    files = {"sglang/mod.py": big, "sglang/__init__.py": b""}
    sends(host, tmp_path / "payload", tar_of(files, end=False) + tar_of(files))  # all twice
    cache = tmp_path / "cache"

    line = sgtrace(host, cache, "fetch", f"target:{tree}").error_line()

    assert "target sent the same file twice: 'sglang/mod.py'" in line
    assert cached_files(cache) == {}  # no pack of 6 MB, nor of 12


def test_a_file_grown_past_the_cap_since_the_probe_is_skipped_and_named(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    grown = b"z = 3\n" * ((9 << 20) // 6)  # 9 MB, where the manifest said 6 bytes
    sends(host, tmp_path / "payload", tar_of({"sglang/__init__.py": b"", "sglang/mod.py": grown}))
    cache = tmp_path / "cache"

    [result] = sgtrace(host, cache, "fetch", f"target:{tree}", "--json").results()

    assert (result["files"], result["fetched_files"]) == (1, 1)
    assert result["skipped"] == ["sglang/mod.py: 9.0 MB, over the 8 MB cap; skipped"]
    assert mirrored_hashes(cache) == hashes({"sglang/__init__.py": b""})


# -- the probe: silence, endless and damaged reports (6, 7, 15) ---------------------------------


def test_a_probe_that_goes_silent_is_given_up_after_the_idle_timeout(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    host.fake("find", "exec sleep 30\n")

    run = sgtrace(host, tmp_path / "cache", "fetch", f"target:{tree}", "--idle-timeout", "2")

    assert "target sent nothing for 2 s while probing the tree" in run.error_line()


def test_an_endless_probe_report_stops_at_its_cap(host: Host, tree: Path, tmp_path: Path) -> None:
    host.fake("mktemp", "exit 1\n")  # the manifest then streams as find writes it
    host.fake("find", "exec yes '6 1.0 ./sglang/mod.py'\n")  # never the closing NUL

    line = sgtrace(host, tmp_path / "cache", "fetch", f"target:{tree}").error_line()

    assert "the probe on target sent over 32 MB: point at the folder that holds the package" in line


def test_a_manifest_past_the_file_cap_is_refused_before_it_is_read(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    host.fake("find", "yes '6 1.0 ./sglang/mod.py' | head -n 50001 | tr '\\n' '\\0'\nexit 0\n")

    line = sgtrace(host, tmp_path / "cache", "fetch", f"target:{tree}").error_line()

    assert f"{tree} on target holds 50001 files, more than 50000, the most one tree" in line


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ("six 1.0 ./sglang/mod.py", "a manifest record that is not `size mtime path`"),
        ("6 1.0", "a manifest record that is not `size mtime path`"),
        ("6 1.0 ./sglang/../../../etc/passwd", "a file outside the tree"),
        ("6 1.0 /etc/passwd", "a file outside the tree"),
    ],
    ids=["size", "no-path", "parent", "absolute"],
)
def test_a_damaged_manifest_is_one_line_naming_the_host(
    record: str, why: str, host: Host, tree: Path, tmp_path: Path
) -> None:
    host.fake("find", f"printf '%s\\0' {shlex.quote(record)}\nexit 0\n")

    line = sgtrace(host, tmp_path / "cache", "fetch", f"target:{tree}").error_line()

    assert f"the probe's report from target is damaged ({why}" in line
    assert "check the host" in line


# -- one rule for files over the size cap, local or remote (17, 18) ----------------------------


def test_a_huge_remote_file_is_skipped_and_named_as_a_local_one_is(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    with (tree / "sglang" / "generated.py").open("wb") as file:
        file.truncate(200 << 20)  # 200 MB, sparse
    cache = tmp_path / "cache"

    [result] = sgtrace(host, cache, "fetch", f"target:{tree}", "--json").results()
    run = sgtrace(host, cache, "trace", f"target:{tree}", "x", "--warnings", "--quiet")

    assert (result["files"], result["fetched_files"]) == (2, 2)
    warning = "sglang/generated.py: 200.0 MB, over the 8 MB cap; skipped"
    assert local_snapshot(tree).warnings == (warning,)
    assert run.code == 0, run.err
    assert f"warning: {warning}" in run.err.splitlines()


def test_a_remote_name_that_is_not_utf8_is_skipped_as_a_local_one_is(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    (tree / "sglang" / os.fsdecode(b"bad\xff.py")).write_text("x = 3\n")
    cache = tmp_path / "cache"

    [result] = sgtrace(host, cache, "fetch", f"target:{tree}", "--json").results()
    run = sgtrace(host, cache, "trace", f"target:{tree}", "x", "--warnings", "--quiet")

    assert result["files"] == 2
    warning = "sglang/bad\\xff.py: the name is not UTF-8; skipped"
    assert local_snapshot(tree).warnings == (warning,)
    assert f"warning: {warning}" in run.err.splitlines()


# -- names and paths from the host (22, 23) ------------------------------------------------------


def test_control_characters_in_remote_names_never_reach_the_terminal(
    host: Host, tmp_path: Path
) -> None:
    # The folder typed is a link: its real name, which the host reports, is the hostile one.
    real = write_package(tmp_path / "tree\x1b]0;owned\x07", {"mod.py": "x = 1\n"})
    (real / "sglang" / "\x1b[2Jclear.py").write_text("x = 2\n")
    tree = tmp_path / "tree"
    tree.symlink_to(real)
    cache = tmp_path / "cache"

    fetched = sgtrace(host, cache, "fetch", f"target:{tree}")
    traced = sgtrace(host, cache, "trace", f"target:{tree}", "x", "--warnings", "--quiet")

    assert fetched.code == 0, fetched.err
    assert "tree\\x1b]0;owned\\x07" in fetched.out
    assert "sglang/\\x1b[2Jclear.py: a name with control characters" in traced.err
    for output in (fetched.out, fetched.err, traced.out, traced.err):
        assert "\x1b" not in output and "\x07" not in output


@pytest.mark.parametrize("name", ["-", "-x", "--help"])
def test_a_remote_path_that_looks_like_an_option_is_a_path(
    name: str, host: Host, tmp_path: Path
) -> None:
    # Relative to the remote home (`cd -` would go back), and as the package's own folder
    # (`find -x` would take an option).
    folder = host.server.remote_home / name
    write_package(folder, {"mod.py": "x = 1\n"})
    package = tmp_path / "site" / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("y = 2\n")

    [home] = sgtrace(host, tmp_path / "c1", "fetch", f"target:{name}", "--json").results()
    [site] = sgtrace(host, tmp_path / "c2", "fetch", f"target:{package}", "--json").results()

    assert (home["root"], home["files"]) == (str(folder), 2)
    assert (site["root"], site["package"], site["files"]) == (str(tmp_path / "site"), name, 2)
    assert set(mirrored_hashes(tmp_path / "c2")) == {f"{name}/__init__.py", f"{name}/mod.py"}


# -- a damaged cache: never a different tree (10) ------------------------------------------------


def packs(cache: Path) -> list[Path]:
    return sorted((cache / "blobs" / "packs").glob("*.pack"))


def test_a_truncated_pack_is_fetched_again(host: Host, tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert sgtrace(host, cache, "fetch", f"target:{tree}").code == 0
    [pack] = packs(cache)
    pack.write_bytes(pack.read_bytes()[:3])

    [again] = sgtrace(host, cache, "fetch", f"target:{tree}", "--json").results()
    run = sgtrace(host, cache, "trace", f"target:{tree}", "x", "--quiet")

    assert again["fetched_files"] >= 1  # what the cut took, not "nothing fetched"
    assert mirrored_hashes(cache) == hashes(probed_files(tree))
    assert run.code == 0 and "x = 1" in run.out


def test_a_flipped_byte_in_a_pack_is_reported_then_fetched_again(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    assert sgtrace(host, cache, "fetch", f"target:{tree}").code == 0
    [pack] = packs(cache)
    data = bytearray(pack.read_bytes())
    data[data.index(b"x = 1")] = ord("y")  # the same size: `x` is now bound nowhere
    pack.write_bytes(bytes(data))

    damaged = sgtrace(host, cache, "trace", f"target:{tree}", "x", "--quiet")
    again = sgtrace(host, cache, "trace", f"target:{tree}", "x", "--quiet")

    line = damaged.error_line()
    assert "a fetched file in the cache is damaged" in line
    assert "run the command again: the damaged copy was dropped and is fetched anew" in line
    assert again.code == 0 and "x = 1" in again.out


# -- other commands on the host: the journal, git (6, 7, 15) -------------------------------------


def test_an_endless_journal_stops_at_its_cap(host: Host, tree: Path, tmp_path: Path) -> None:
    host.fake("journalctl", "exec cat /dev/zero\n")

    run = sgtrace(host, tmp_path / "cache", "explain", f"target:{tree}", "--journal", "llm")

    assert run.error_line() == (
        "sgtrace: error: journalctl -u llm on target sent over 128 MB: "
        "give the server's log with --log FILE instead"
    )


def test_a_silent_journal_is_given_up_after_the_idle_timeout(
    host: Host, tree: Path, tmp_path: Path
) -> None:
    host.fake("journalctl", "exec sleep 30\n")

    run = sgtrace(
        host,
        tmp_path / "cache",
        "explain",
        f"target:{tree}",
        "--journal",
        "llm",
        "--idle-timeout",
        "2",
    )

    assert "target sent nothing for 2 s while reading the journal of llm" in run.error_line()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout on the host, its sglang/mod.py modified since the commit."""
    tree = write_package(tmp_path / "checkout", {"mod.py": "x = 1\n"})
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    for command in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"],
    ):
        subprocess.run(["git", *command], cwd=tree, env=env, check=True)
    (tree / "sglang" / "mod.py").write_text("x = 2\n")
    return tree


ON_ARCHIVE = 'case " $* " in *" archive "*) {} ;; esac\n'


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("exec cat /dev/zero", "target did not send 1 file(s), e.g. sglang/mod.py"),
        ("exec yes", "the archive from target is damaged (bad header checksum)"),
        ("exec sleep 30", "target sent nothing for 2 s while running git archive"),
    ],
    ids=["zeros", "garbage", "silent"],
)
def test_a_hostile_git_archive_ends_in_one_line(
    script: str, message: str, host: Host, checkout: Path, tmp_path: Path
) -> None:
    host.fake("git", ON_ARCHIVE.format(script))

    run = sgtrace(host, tmp_path / "cache", "audit", f"target:{checkout}", "--idle-timeout", "2")

    assert message in run.error_line()


def test_a_status_line_git_does_not_write_is_one_line(
    host: Host, checkout: Path, tmp_path: Path
) -> None:
    host.fake(
        "git", 'case " $* " in *" status "*) printf \' M "sglang/\\\\9zz.py"\\n\'; exit 0 ;; esac\n'
    )

    line = sgtrace(host, tmp_path / "cache", "audit", f"target:{checkout}").error_line()

    assert (
        "git status on target wrote a line git does not write: ' M \"sglang/\\\\9zz.py\"'" in line
    )
