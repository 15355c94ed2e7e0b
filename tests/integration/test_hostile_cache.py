"""The cache folder as an attack surface (issue 26: 2): SGTRACE_CACHE at another user's folder,
at one anyone may write, or a cache holding planted links. The folder is checked once, before
anything in it is read or made, by the rule OpenSSH's StrictModes applies to ~/.ssh; inside
it, no link is followed. Each refusal is one line naming the real cause, and nothing is made
anywhere: not through the links, not in the cache. Run as root, as CI does: the other user is
`nobody`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.integration.fetching import Run, sgtrace_process, write_package
from tests.integration.package_index import (
    LocalIndex,
    finished,
    index_env,
    start_sgtrace,
    wheel,
)
from tests.sshd import SshServer

SPEC = "pypi:sgtrace-evil==1.0"
WHEEL = "sgtrace_evil-1.0-py3-none-any.whl"
NOBODY = 65534
ELSEWHERE = "point SGTRACE_CACHE at a folder of yours"


@pytest.fixture(autouse=True)
def as_root() -> None:
    """These tests give files to another user: they run as root, as CI does."""
    if os.geteuid() != 0:
        pytest.fail("run as root (as CI does): these tests give files to another user")


@pytest.fixture
def index(tmp_path: Path) -> LocalIndex:
    found = LocalIndex(tmp_path / "index")
    found.add("sgtrace-evil", WHEEL, wheel([("sgtrace_evil/__init__.py", "x = 1\n")]))
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Where planted links point: a folder that must stay empty."""
    folder = tmp_path / "outside"
    for name in ("blobs", "pypi", "facts"):
        (folder / name).mkdir(parents=True)
    return folder


def trace_release(index: LocalIndex, cache: Path) -> Run:
    """`sgtrace trace pypi:sgtrace-evil==1.0 x`, as a user starts it, with the cache CACHE."""
    return finished(start_sgtrace(index_env(cache, index.url), "trace", SPEC, "x", "--quiet"))


def plant(cache: Path, outside: Path, owner: int) -> None:
    """Links `blobs`, `pypi` and `facts` in CACHE to OUTSIDE's folders, owned by OWNER."""
    for name in ("blobs", "pypi", "facts"):
        (cache / name).symlink_to(outside / name)
        os.lchown(cache / name, owner, owner)


def everything(folder: Path) -> list[str]:
    """Every name under FOLDER, links not followed, relative to it."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# -- the cache folder itself ------------------------------------------------------------------


def test_another_users_cache_folder_is_refused_before_anything_is_made(
    index: LocalIndex, tmp_path: Path, outside: Path
) -> None:
    cache = tmp_path / "theirs"
    cache.mkdir()
    plant(cache, outside, NOBODY)
    os.chown(cache, NOBODY, NOBODY)

    run = trace_release(index, cache)

    assert run.error_line() == (
        f"sgtrace: error: cannot use the cache folder {cache}: it belongs to nobody: {ELSEWHERE}"
    )
    assert everything(outside) == ["blobs", "facts", "pypi"]
    assert everything(cache) == ["blobs", "facts", "pypi"]


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o775], ids=lambda mode: f"{mode:o}")
def test_a_cache_folder_others_may_write_is_refused_before_anything_is_made(
    index: LocalIndex, tmp_path: Path, outside: Path, mode: int
) -> None:
    """Everyone's (sticky or not: sticky keeps others from removing names, not from making
    them) or a group's: another user planted links there before sgtrace ran."""
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(mode)
    plant(cache, outside, NOBODY)

    run = trace_release(index, cache)

    assert run.error_line() == (
        f"sgtrace: error: cannot use the cache folder {cache}: others may write in it "
        f"(mode {mode:o}): chmod go-w {cache}, or {ELSEWHERE}"
    )
    assert everything(outside) == ["blobs", "facts", "pypi"]
    assert everything(cache) == ["blobs", "facts", "pypi"]


def test_a_link_of_another_user_on_the_way_to_the_cache_is_refused(
    index: LocalIndex, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    link = tmp_path / "link"
    link.symlink_to(mine)
    os.lchown(link, NOBODY, NOBODY)

    run = trace_release(index, link / "cache")

    assert run.error_line() == (
        f"sgtrace: error: cannot use the cache folder {link / 'cache'}: {link} is a link owned "
        f"by nobody: {ELSEWHERE}"
    )
    assert everything(mine) == []


def test_a_cache_folder_under_another_users_folder_is_refused(
    index: LocalIndex, tmp_path: Path
) -> None:
    theirs = tmp_path / "home-of-nobody"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)

    run = trace_release(index, theirs / "cache")

    assert run.error_line() == (
        f"sgtrace: error: cannot use the cache folder {theirs / 'cache'}: the folder {theirs} "
        f"belongs to nobody: {ELSEWHERE}"
    )
    assert everything(theirs) == []


def test_a_local_trace_refuses_the_cache_too(tmp_path: Path, outside: Path) -> None:
    """Not only the commands that download: nothing is read from such a cache either (its
    entries are unpickled)."""
    cache = tmp_path / "theirs"
    cache.mkdir()
    plant(cache, outside, NOBODY)
    os.chown(cache, NOBODY, NOBODY)
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("x = 1\n")

    run = finished(start_sgtrace(index_env(cache, ""), "trace", str(tree), "x", "--quiet"))

    assert run.error_line() == (
        f"sgtrace: error: cannot use the cache folder {cache}: it belongs to nobody: {ELSEWHERE}"
    )
    assert everything(outside) == ["blobs", "facts", "pypi"]


def test_a_cache_folder_sgtrace_makes_is_its_users_alone(index: LocalIndex, tmp_path: Path) -> None:
    cache = tmp_path / "new" / "cache"

    run = trace_release(index, cache)

    assert (run.code, run.err) == (0, "")
    assert "sgtrace_evil/__init__.py:1" in run.out
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert (cache / "pypi").stat().st_mode & 0o022 == 0  # 0755 less the umask


# -- inside the cache: no link followed ---------------------------------------------------------


@pytest.mark.parametrize("owner", [0, NOBODY], ids=["ours", "nobodys"])
def test_a_link_inside_the_cache_is_never_followed(
    index: LocalIndex, tmp_path: Path, outside: Path, owner: int
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    plant(cache, outside, owner)

    run = trace_release(index, cache)

    assert run.error_line() == (
        f"sgtrace: error: cannot use the cache folder {cache}: {cache / 'pypi'} is a link "
        f"(sgtrace follows none in its cache): remove it, or {ELSEWHERE}"
    )
    assert everything(outside) == ["blobs", "facts", "pypi"]
    assert everything(cache) == ["blobs", "facts", "pypi"]


def test_a_folder_of_another_user_inside_the_cache_is_refused(
    index: LocalIndex, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    (cache / "pypi").mkdir(parents=True)
    os.chown(cache / "pypi", NOBODY, NOBODY)

    run = trace_release(index, cache)

    assert run.error_line() == (
        f"sgtrace: error: cannot use the cache folder {cache}: {cache / 'pypi'} belongs to "
        f"nobody: remove it, or {ELSEWHERE}"
    )
    assert everything(cache) == ["pypi"]


def test_a_fetch_follows_no_link_inside_the_cache(
    client: SshServer, tmp_path: Path, outside: Path
) -> None:
    """The blob store's packs: `blobs/packs` a link (the cache's own `blobs` a real folder)."""
    tree = write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})
    cache = tmp_path / "cache"
    (cache / "blobs").mkdir(parents=True)
    (cache / "blobs" / "packs").symlink_to(outside / "blobs")

    run = sgtrace_process(client, cache, "fetch", f"{client.alias}:{tree}")

    assert run.error_line() == (
        f"sgtrace: error: {client.alias}:{tree}: cannot use the cache folder {cache}: "
        f"{cache / 'blobs' / 'packs'} is a link (sgtrace follows none in its cache): remove it, "
        f"or {ELSEWHERE}"
    )
    assert everything(outside) == ["blobs", "facts", "pypi"]
    assert everything(cache) == ["blobs", "blobs/packs"]


def test_a_fetch_into_another_users_cache_is_refused(
    client: SshServer, tmp_path: Path, outside: Path
) -> None:
    tree = write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})
    cache = tmp_path / "theirs"
    cache.mkdir()
    plant(cache, outside, NOBODY)
    os.chown(cache, NOBODY, NOBODY)

    run = sgtrace_process(client, cache, "fetch", f"{client.alias}:{tree}")

    assert run.error_line() == (
        f"sgtrace: error: {client.alias}:{tree}: cannot use the cache folder {cache}: it "
        f"belongs to nobody: {ELSEWHERE}"
    )
    assert everything(outside) == ["blobs", "facts", "pypi"]
    assert everything(cache) == ["blobs", "facts", "pypi"]
