"""`pypi:NAME==VERSION`: a release from the package index, downloaded once and unpacked safely.
Nothing of the package is ever run: the index is read directly (pip only reports its
settings), the file's hash is checked, and only its Python files are taken out."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tracer.errors import NoPythonFiles, SourceNotFound
from tracer.sources.cache import cache_folder, cache_not_writable, cache_root
from tracer.sources.pypi_config import index_settings
from tracer.sources.pypi_http import IndexClient
from tracer.sources.pypi_index import find_release
from tracer.sources.pypi_unpack import unpack
from tracer.sources.snapshot import Snapshot, local_snapshot
from tracer.versions import RELEASES

SPEC = re.compile(r"^pypi:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")
PARTIAL = ".partial-"
# A partial folder of the old naming (no release in its name, so no lock to ask) is taken for
# dead after this long.
STALE_SECONDS = 6 * 3600
LOCK_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
# A release's folder is named NAME-VERSION-<16>, its partial's `.partial-` that and 9 more: at
# most 255 bytes, as a file system takes.
MAX_RELEASE_NAME = 200


def parse_spec(spec: str) -> tuple[str, str]:
    """NAME and VERSION of `pypi:NAME==VERSION`; SourceNotFound when SPEC is not one, or is too
    long to name the release's folder in the cache."""
    match = SPEC.match(spec)
    if not match:
        raise SourceNotFound(
            f"{spec!r} is not a PyPI source", "write pypi:NAME==VERSION, e.g. pypi:sglang==0.5.9"
        )
    if len(match["name"]) + len(match["version"]) > MAX_RELEASE_NAME:
        raise SourceNotFound(
            f"{spec[:60]!r}... is not a PyPI release: its name and version are over "
            f"{MAX_RELEASE_NAME} characters",
            "check the name and version",
        )
    return match["name"], match["version"]


def pypi_snapshot(spec: str) -> Snapshot:
    name, version = parse_spec(spec)
    tree = cache_root() / RELEASES.name / f"{name.lower()}-{version}-{RELEASES.version}"
    if not (tree / ".complete").exists():
        try:
            with fill_lock(tree):  # another process filling it: wait, then read its tree
                if not (tree / ".complete").exists():
                    remove_dead_partials(tree)
                    fetch_release(name, version, tree)
                    remove_superseded(tree, f"{name.lower()}-{version}")
        except OSError as error:  # a write in the cache (reads raise errors of their own)
            raise cache_not_writable(tree.parent, error) from None
    snapshot = local_snapshot(tree / "tree", label=spec)
    snapshot.meta.update({"name": name, "version": version})
    return snapshot


def fetch_release(name: str, version: str, tree: Path) -> None:
    """Download and unpack NAME==VERSION into TREE; TREE appears whole or not at all. The
    caller holds TREE's fill lock."""
    client = IndexClient(index_settings())
    chosen = find_release(client, name, version)
    work = Path(tempfile.mkdtemp(dir=tree.parent, prefix=f"{PARTIAL}{tree.name}."))
    try:
        (work / "download").mkdir()
        archive = work / "download" / chosen.filename
        client.download(chosen.url, chosen.page, archive, chosen.digest)
        if unpack(archive, work / "out" / "tree") == 0:
            raise NoPythonFiles(
                f"pypi:{name}=={version} ({chosen.filename}) holds no Python file",
                "sgtrace reads Python sources; this release has none",
            )
        (work / "out" / ".complete").write_text(chosen.filename + "\n")
        if tree.is_symlink():  # replaced, never followed
            tree.unlink()
        elif tree.exists():  # left without .complete by hand: nobody reads it
            shutil.rmtree(tree)
        (work / "out").rename(tree)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- one fill at a time, and what killed fills left ------------------------------------------


@contextlib.contextmanager
def fill_lock(tree: Path) -> Iterator[None]:
    """TREE's fill lock (a file beside it), held until the block ends; released by the
    kernel if the process dies. The folder is made by the cache's rule, the lock opened
    without following a link."""
    cache_folder(tree.parent)
    fd = os.open(lock_path(tree.parent, tree.name), LOCK_FLAGS | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def folders_in(folder: Path) -> list[Path]:
    """The folders in FOLDER; links are not folders here (a link is never removed through)."""
    with os.scandir(folder) as entries:
        return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]


def lock_path(folder: Path, release: str) -> Path:
    return folder / f".{release}.lock"


def remove_dead_partials(tree: Path) -> None:
    """Remove the partial folders of fills that died (killed, or the machine went down).
    A partial is named after its release: TREE's own are dead (the caller holds TREE's
    lock), another release's are dead if its lock is free. A live fill's is never taken."""
    for entry in folders_in(tree.parent):
        if not entry.name.startswith(PARTIAL):
            continue
        release, dot, _ = entry.name[len(PARTIAL) :].rpartition(".")
        if not dot:
            dead = time.time() - entry.stat().st_mtime > STALE_SECONDS
        else:
            dead = release == tree.name or lock_is_free(lock_path(tree.parent, release))
        if dead:
            shutil.rmtree(entry, ignore_errors=True)


def remove_superseded(tree: Path, release: str) -> None:
    """Remove the trees of RELEASE unpacked by other versions of the unpacking code (named
    `RELEASE-<their version>`, or `RELEASE` before versions), now that TREE replaces them;
    one another process is filling is left alone."""
    for entry in folders_in(tree.parent):
        suffix = entry.name[len(release) :]
        if entry == tree or not entry.name.startswith(release):
            continue
        if suffix and not (suffix[:1] == "-" and is_version(suffix[1:])):
            continue  # another release (`sglang-0.5.12` beside `sglang-0.5.1`)
        lock = lock_path(tree.parent, entry.name)
        if lock_is_free(lock):
            shutil.rmtree(entry, ignore_errors=True)
            lock.unlink(missing_ok=True)


def is_version(text: str) -> bool:
    """Is TEXT a version of a cached kind (tracer/versions.py: 16 hex digits)?"""
    return len(text) == len(RELEASES.version) and all(c in "0123456789abcdef" for c in text)


def lock_is_free(path: Path) -> bool:
    """Whether no process holds the lock at PATH (a lock never made is free)."""
    try:
        fd = os.open(path, LOCK_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:  # a link (ELOOP), or not ours to open: not a lock of a fill of ours
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True
