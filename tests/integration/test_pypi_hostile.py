"""What a `pypi:` source refuses or survives, against a package index of our own (a folder
read through file://, or served on 127.0.0.1): nothing of a package ever runs, two fills of
one release wait for one another, killed fills leave nothing behind for long, and a damaged
or hostile file is one line naming what is wrong."""

from __future__ import annotations

import fcntl
import gzip
import io
import os
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path

import pytest

from tests.integration.fetching import Run, in_process
from tests.integration.package_index import (
    LocalIndex,
    evil_sdist,
    finished,
    index_env,
    sdist,
    serving,
    start_sgtrace,
    wheel,
)
from tracer.sources.snapshot import MAX_FILES
from tracer.versions import RELEASES

SPEC = "pypi:sgtrace-evil==1.0"
# The release's folder under the cache's pypi/ (its last part, RELEASES.version, is the one
# of the sgtrace that made it: name it by pattern where another process made it).
TREE = f"sgtrace-evil-1.0-{RELEASES.version}"
RELEASE = "sgtrace-evil-1.0-*"
WHEEL = "sgtrace_evil-1.0-py3-none-any.whl"
SDIST = "sgtrace_evil-1.0.tar.gz"


@pytest.fixture
def index(tmp_path: Path) -> LocalIndex:
    return LocalIndex(tmp_path / "index")


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """The file the evil package writes if any of its code runs."""
    return tmp_path / "ran"


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def sgtrace(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cache: Path
) -> Callable[..., Run]:
    """`sgtrace ARGS` in this process, pip's settings cleared (no config file, no PIP_*)."""
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("SGTRACE_CACHE", str(cache))
    return in_process(capsys)


@pytest.fixture
def pointed(
    monkeypatch: pytest.MonkeyPatch, sgtrace: Callable[..., Run], index: LocalIndex
) -> Callable[..., Run]:
    """sgtrace with PIP_INDEX_URL at the local index (file://)."""
    monkeypatch.setenv("PIP_INDEX_URL", index.url)
    return sgtrace


def partials(cache: Path) -> list[str]:
    return sorted(p.name for p in (cache / "pypi").glob(".partial-*"))


def traced(run: Run) -> str:
    assert (run.code, run.err) == (0, ""), run
    return run.out


# -- nothing of the package runs -------------------------------------------------------------


def test_an_sdist_is_indexed_without_running_its_build_backend(
    index: LocalIndex, marker: Path, cache: Path
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))

    run = finished(start_sgtrace(index_env(cache, index.url), "trace", SPEC, "x", "--quiet"))

    assert not marker.exists()
    assert "sgtrace_evil/__init__.py:3" in traced(run)
    (release,) = (cache / "pypi").glob(RELEASE)
    tree = release / "tree"
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()) == [
        "PKG-INFO",
        "backend.py",
        "setup.py",
        "sgtrace_evil/__init__.py",
    ]
    assert (release / ".complete").read_text() == SDIST + "\n"


def test_an_http_index_is_read_as_pep_691_json(
    index: LocalIndex, marker: Path, cache: Path
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))

    with serving(index) as server:
        env = index_env(cache, server.url)
        run = finished(start_sgtrace(env, "trace", SPEC, "x", "--quiet"))

    assert not marker.exists()
    assert "sgtrace_evil/__init__.py:3" in traced(run)
    assert server.requests == {"/simple/sgtrace-evil/": 1, f"/files/{SDIST}": 1}


def test_pip_config_names_the_index_and_find_links(
    index: LocalIndex, marker: Path, cache: Path, tmp_path: Path
) -> None:
    """A release only in a find-links folder, named in a pip config file: found, not run."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / SDIST).write_bytes(evil_sdist(marker))
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nindex-url = {index.url}\n[download]\nfind-links = {wheels}\n")
    env = {k: v for k, v in index_env(cache, "").items() if k != "PIP_INDEX_URL"}
    env["PIP_CONFIG_FILE"] = str(config)

    run = finished(start_sgtrace(env, "trace", SPEC, "x", "--quiet"))

    assert not marker.exists()
    assert "sgtrace_evil/__init__.py:3" in traced(run)


# -- two fills of one release at once, and killed fills ---------------------------------------


def test_two_cold_traces_at_once_fill_the_release_once(
    index: LocalIndex, marker: Path, cache: Path
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    with serving(index) as server:
        server.held.add(f"/files/{SDIST}")
        env = index_env(cache, server.url)
        first, second = (start_sgtrace(env, "trace", SPEC, "x", "--quiet") for _ in range(2))
        # One holds the release's lock, waiting for the file; the other waits for the lock.
        wait_for(lambda: server.requests[f"/files/{SDIST}"] == 1 and waiters(cache) == 1)
        server.let_go.set()
        runs = [finished(first), finished(second)]

    assert traced(runs[0]) == traced(runs[1])
    assert server.requests[f"/files/{SDIST}"] == 1
    assert partials(cache) == []


def test_partials_of_dead_fills_are_removed_and_a_live_fill_s_kept(
    index: LocalIndex, marker: Path, cache: Path
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    releases = cache / "pypi"
    with serving(index) as server:
        server.held.add(f"/files/{SDIST}")
        env = index_env(cache, server.url)
        killed = start_sgtrace(env, "trace", SPEC, "x", "--quiet")
        wait_for(lambda: server.requests[f"/files/{SDIST}"] == 1)
        killed.kill()
        killed.wait()
        (killed_partial,) = partials(cache)
        assert fnmatch(killed_partial, f".partial-{RELEASE}.*")
        with live_fill(releases, "other-2.0-0123") as live:
            (releases / ".partial-gone-1.0-0123.abcd1234").mkdir()  # its lock is free
            stale, fresh = releases / ".partial-k2j3h4f5", releases / ".partial-q8w7e6r5"
            stale.mkdir()  # the old naming (no release in it): judged by age
            fresh.mkdir()
            os.utime(stale, (time.time() - 7 * 3600,) * 2)
            server.let_go.set()

            run = finished(start_sgtrace(env, "trace", SPEC, "x", "--quiet"))

            assert "sgtrace_evil/__init__.py:3" in traced(run)
            assert partials(cache) == sorted([live.name, fresh.name])


def test_trees_of_the_release_unpacked_by_other_versions_are_removed(
    index: LocalIndex, marker: Path, cache: Path, pointed: Callable[..., Run]
) -> None:
    """A new sgtrace unpacks a release again (its unpacking may differ): the trees earlier
    versions left of that release go, not those of other releases nor one being filled."""
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    releases = cache / "pypi"
    older = ["sgtrace-evil-1.0", "sgtrace-evil-1.0-0123456789abcdef"]  # before versions; another
    others = ["sgtrace-evil-1.01-0123456789abcdef", "sgtrace-evil-1.0-x"]  # not this release's
    for name in older + others:
        (releases / name / "tree").mkdir(parents=True)
    with live_fill(releases, "sgtrace-evil-1.0-fedcba9876543210"):
        (releases / "sgtrace-evil-1.0-fedcba9876543210" / "tree").mkdir(parents=True)

        assert "sgtrace_evil/__init__.py:3" in traced(pointed("trace", SPEC, "x", "--quiet"))

    left = sorted(p.name for p in releases.iterdir() if not p.name.startswith("."))
    assert left == sorted([*others, "sgtrace-evil-1.0-fedcba9876543210", TREE])


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def waiters(cache: Path) -> int:
    """How many processes wait for the release's fill lock in CACHE (from /proc/locks)."""
    locks = list((cache / "pypi").glob(f".{RELEASE}.lock"))
    if not locks:
        return 0
    inode = f":{locks[0].stat().st_ino} "
    lines = Path("/proc/locks").read_text().splitlines()
    return sum(1 for line in lines if " -> FLOCK" in line and inode in line)


@contextmanager
def live_fill(releases: Path, release: str) -> Iterator[Path]:
    """A fill of RELEASE in progress: its lock held by this process, its partial made."""
    releases.mkdir(parents=True, exist_ok=True)
    fd = os.open(releases / f".{release}.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        partial = releases / f".partial-{release}.zyxw9876"
        partial.mkdir()
        yield partial
    finally:
        os.close(fd)


# -- damaged and hostile files: one line each -------------------------------------------------


def test_a_wheel_holding_a_file_and_a_folder_of_one_name_is_refused(
    index: LocalIndex, pointed: Callable[..., Run], cache: Path
) -> None:
    members = [("pkg/__init__.py", ""), ("pkg/a.py", "x = 1\n"), ("pkg/a.py/b.py", "x = 2\n")]
    index.add("sgtrace-evil", WHEEL, wheel(members))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {WHEEL} holds 'pkg/a.py' both as a file and as a folder: "
        "the download is corrupt or hostile; nothing was kept"
    )
    assert os.listdir(cache / "pypi") == [f".{TREE}.lock"]


def test_a_wheel_holding_a_folder_then_a_file_of_one_name_is_refused(
    index: LocalIndex, pointed: Callable[..., Run]
) -> None:
    index.add("sgtrace-evil", WHEEL, wheel([("pkg/a.py/b.py", "x = 2\n"), ("pkg/a.py", "x = 1\n")]))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {WHEEL} holds 'pkg/a.py' both as a file and as a folder: "
        "the download is corrupt or hostile; nothing was kept"
    )


def test_a_wheel_holding_one_file_twice_is_refused(
    index: LocalIndex, pointed: Callable[..., Run]
) -> None:
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = wheel([("pkg/a.py", "x = 1\n"), ("pkg/a.py", "x = 2\n")])
    index.add("sgtrace-evil", WHEEL, data)

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {WHEEL} holds 'pkg/a.py' twice: "
        "the download is corrupt or hostile; nothing was kept"
    )


def test_a_wheel_with_a_bad_crc_is_damaged(index: LocalIndex, pointed: Callable[..., Run]) -> None:
    data = wheel([("pkg/__init__.py", ""), ("pkg/a.py", "x = 1\n")])
    index.add("sgtrace-evil", WHEEL, data.replace(b"x = 1", b"x = 7"))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {WHEEL} is damaged: Bad CRC-32 for file 'pkg/a.py': nothing was "
        "unpacked; try another version, or tell the package's maintainers"
    )


@pytest.mark.parametrize(
    ("filename", "data", "why"),
    [
        (WHEEL, b"<html>not found</html>", "File is not a zip file"),
        (SDIST, b"this is no gzip stream", "Not a gzipped file (b'th')"),
        (SDIST, sdist("sgtrace_evil-1.0", {"a.py": "x = 1\n"})[:-8], "Compressed file ended"),
    ],
    ids=["garbage-wheel", "garbage-sdist", "truncated-sdist"],
)
def test_a_garbage_file_says_what_is_wrong(
    index: LocalIndex, pointed: Callable[..., Run], filename: str, data: bytes, why: str
) -> None:
    index.add("sgtrace-evil", filename, data)

    line = pointed("trace", SPEC, "x").error_line()

    assert line.startswith(f"sgtrace: error: {filename} is damaged: {why}")
    assert "package index" not in line


def test_a_file_that_does_not_match_the_index_hash_is_refused(
    index: LocalIndex, pointed: Callable[..., Run], marker: Path
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker), digest="0" * 64)

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {SDIST} does not match the sha256 the index gives for it: "
        "the download was damaged or tampered with; nothing was unpacked"
    )


def test_a_release_without_python_files_says_so(
    index: LocalIndex, pointed: Callable[..., Run]
) -> None:
    index.add("sgtrace-evil", SDIST, sdist("sgtrace_evil-1.0", {"README": "hello\n"}))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {SPEC} ({SDIST}) holds no Python file: "
        "sgtrace reads Python sources; this release has none"
    )


def hostile_sdist(rewrite: Callable[[bytearray], None]) -> bytes:
    """An sdist (gzipped pax tar) whose first header REWRITE changed, its checksum made right
    again: the first header is the pax header of the one member, a.py."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo("sgtrace_evil-1.0/a.py")
        info.pax_headers = {"comment": "hello"}
        tf.addfile(info, io.BytesIO(b""))
    data = bytearray(buffer.getvalue())
    rewrite(data)
    data[148:156] = b" " * 8
    data[148:156] = b"%06o\0 " % sum(data[:512])
    return gzip.compress(bytes(data))


def test_a_pax_header_claiming_gigabytes_is_refused_unread(
    index: LocalIndex, pointed: Callable[..., Run]
) -> None:
    def huge(header: bytearray) -> None:
        header[124:136] = b"%011o\0" % (4 << 30)

    index.add("sgtrace-evil", SDIST, hostile_sdist(huge))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {SDIST} has a member or header past 34603008 bytes: "
        "the download is corrupt or hostile; nothing was kept"
    )


def test_a_member_of_negative_size_is_refused(
    index: LocalIndex, pointed: Callable[..., Run]
) -> None:
    def negative(header: bytearray) -> None:
        at = 512 + 512  # the member's header, after the pax header and its one block
        header[at + 124 : at + 136] = b"\xff" * 12  # base-256: -1
        header[at + 148 : at + 156] = b" " * 8
        header[at + 148 : at + 156] = b"%06o\0 " % sum(header[at : at + 512])

    index.add("sgtrace-evil", SDIST, hostile_sdist(negative))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {SDIST}: member 'sgtrace_evil-1.0/a.py' has a negative size: "
        "the download is corrupt or hostile; nothing was kept"
    )


def damaged_then(members: list[tuple[str, str]]) -> bytes:
    """A wheel whose first member is damaged (a bad CRC), then MEMBERS: a refusal of MEMBERS
    that names them, not the damage, was made before any member was read or written."""
    data = wheel([("sgtrace_evil/a.py", "x = 1\n"), *members])
    return data.replace(b"x = 1", b"x = 7")


LONG_NAME = "sgtrace_evil/" + "n" * 297 + ".py"  # a name of 300 bytes
DEEP_PATH = "sgtrace_evil/" + "d/" * 3000 + "x.py"  # 3,001 folders deep


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (
            LONG_NAME,
            f"member {LONG_NAME[:40] + '...' + LONG_NAME[-24:]!r} has a name of 300 bytes, more "
            "than the 255 a file system takes",
        ),
        (
            DEEP_PATH,
            f"member {DEEP_PATH[:40] + '...' + DEEP_PATH[-24:]!r} is 3001 folders deep, more "
            "than the 64 sgtrace takes",
        ),
    ],
    ids=["300-byte name", "3000 levels"],
)
def test_a_member_no_file_system_takes_is_refused_before_anything_is_written(
    index: LocalIndex, pointed: Callable[..., Run], cache: Path, member: str, why: str
) -> None:
    index.add("sgtrace-evil", WHEEL, damaged_then([(member, "x = 1\n")]))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {WHEEL}: {why}: the download is corrupt or hostile; nothing was kept"
    )
    assert os.listdir(cache / "pypi") == [f".{TREE}.lock"]


def test_an_sdist_member_no_file_system_takes_is_refused(
    index: LocalIndex, pointed: Callable[..., Run], cache: Path
) -> None:
    name = "n" * 297 + ".py"
    index.add("sgtrace-evil", SDIST, sdist("sgtrace_evil-1.0", {"a.py": "x = 1\n", name: ""}))
    member = f"sgtrace_evil-1.0/{name}"

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {SDIST}: member {member[:40] + '...' + member[-24:]!r} has a name of "
        "300 bytes, more than the 255 a file system takes: the download is corrupt or hostile; "
        "nothing was kept"
    )
    assert os.listdir(cache / "pypi") == [f".{TREE}.lock"]


def test_a_wheel_of_more_python_files_than_a_tree_may_have_is_refused_unpacked(
    index: LocalIndex, pointed: Callable[..., Run], cache: Path
) -> None:
    """The cap of a tree's Python files (tracer/sources/snapshot.py), counted from the
    wheel's table of members: before, all were unpacked (11 s for 150,000), then refused,
    and the release stayed in the cache."""
    members = [(f"sgtrace_evil/m{i}.py", "") for i in range(MAX_FILES + 1)]
    index.add("sgtrace-evil", WHEEL, damaged_then(members))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: {WHEEL} holds more than {MAX_FILES} Python files, the most one tree "
        "may have: refusing it; nothing was kept"
    )
    assert os.listdir(cache / "pypi") == [f".{TREE}.lock"]


def test_a_cache_that_cannot_be_written_says_so(
    index: LocalIndex,
    marker: Path,
    monkeypatch: pytest.MonkeyPatch,
    pointed: Callable[..., Run],
    tmp_path: Path,
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "not-a-folder"))

    assert pointed("trace", SPEC, "x").error_line() == (
        f"sgtrace: error: the cache folder {tmp_path / 'not-a-folder'} is not writable "
        "(Not a directory): free some space there, or point SGTRACE_CACHE at a folder you "
        "can write"
    )


# -- the index itself -------------------------------------------------------------------------


def test_a_version_not_on_the_index_names_those_that_are(
    index: LocalIndex, pointed: Callable[..., Run], marker: Path
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    index.add(
        "sgtrace-evil", "sgtrace_evil-0.9-py3-none-any.whl", wheel([("a.py", "")], version="0.9")
    )

    assert pointed("trace", "pypi:sgtrace-evil==2.0", "x").error_line() == (
        "sgtrace: error: sgtrace-evil==2.0 is not on the package index: recent versions: 0.9, 1.0"
    )


def test_an_unreachable_index_says_so(
    monkeypatch: pytest.MonkeyPatch, sgtrace: Callable[..., Run]
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")

    line = sgtrace("trace", SPEC, "x").error_line()

    assert line.startswith("sgtrace: error: cannot reach the package index at 127.0.0.1:9: ")
    assert line.endswith(": check the network, or pip's index settings (pip config list)")


def test_a_file_link_on_an_http_page_is_not_followed(
    index: LocalIndex, marker: Path, monkeypatch: pytest.MonkeyPatch, sgtrace: Callable[..., Run]
) -> None:
    local = index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    index.write_pages("sgtrace-evil", href=local.parent.as_uri() + "/")
    with serving(index) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.url)
        line = sgtrace("trace", SPEC, "x").error_line()

    assert line.startswith(f"sgtrace: error: refusing {local.as_uri()} (linked from {server.url}")
    assert server.requests == {"/simple/sgtrace-evil/": 1}


def test_a_page_that_is_not_an_index_says_so(
    index: LocalIndex, monkeypatch: pytest.MonkeyPatch, sgtrace: Callable[..., Run], marker: Path
) -> None:
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    (index.root / "simple" / "sgtrace-evil" / "index.json").write_text('{"files": 7}')
    with serving(index) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.url)
        line = sgtrace("trace", SPEC, "x").error_line()

    assert line == (
        f"sgtrace: error: {server.url}/sgtrace-evil/ is not a package index page "
        "(files is not a list): check pip's index settings (pip config list)"
    )


def test_a_page_nested_two_million_deep_is_refused_unparsed(
    index: LocalIndex, monkeypatch: pytest.MonkeyPatch, sgtrace: Callable[..., Run], marker: Path
) -> None:
    """json's reader recurses once a level: the depth is read first, without recursion."""
    index.add("sgtrace-evil", SDIST, evil_sdist(marker))
    deep = b'{"files": ' + b"[" * 2_000_000 + b"]" * 2_000_000 + b"}"
    (index.root / "simple" / "sgtrace-evil" / "index.json").write_bytes(deep)
    with serving(index) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.url)
        line = sgtrace("trace", SPEC, "x").error_line()

    assert line == (
        f"sgtrace: error: {server.url}/sgtrace-evil/ is not a package index page "
        "(nested more than 32 deep): check pip's index settings (pip config list)"
    )
