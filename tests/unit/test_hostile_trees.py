"""Local trees built to hurt: FIFOs and devices named like Python files, links out to the
whole disk or /proc, more files than a project holds, names that are not UTF-8 or hold
control characters. The walk ends, skips what it must not open or cannot name with a
warning (the same warning a fetch gives for the same file on a host), and refuses a tree
past its caps with one line naming the cap."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.conftest import spine_of, trace
from tracer.cli.main import main
from tracer.errors import NoPythonFiles, TooManyFiles
from tracer.session import open_session
from tracer.sources import local_snapshot
from tracer.sources.fetch import skipped_because
from tracer.sources.hint import PackageHint
from tracer.sources.pristine import snapshot_version
from tracer.sources.snapshot import (
    MAX_FILE_BYTES,
    MAX_FILES,
    NotRegular,
    Snapshot,
    read_at_most,
    read_source,
    walk,
)
from tracer.store.cache import FactCache

RUN = b"def start(fraction):\n    tokens = fraction * 2\n"
SECONDS = 60  # what a hang would take forever to reach
T = TypeVar("T")


def within(seconds: float, work: Callable[..., T], *args: Any) -> T:
    """WORK(*ARGS), or a failed test when it takes longer than SECONDS. A daemon thread does
    the work, so a hang (a blocked open) fails the test and lets the run end."""
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(("value", work(*args)))
        except BaseException as error:
            result.append(("error", error))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert result, f"{work.__name__} did not end in {seconds} s"
    kind, value = result[0]
    if kind == "error":
        raise value
    return value  # type: ignore[no-any-return]


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_bytes(b"")
    (root / "pkg/run.py").write_bytes(RUN)
    return root


def snapshot_of(root: Path) -> Snapshot:
    """local_snapshot(ROOT), failing the test instead of hanging it."""
    return within(SECONDS, local_snapshot, root)


def test_a_fifo_named_like_a_python_file_is_skipped_unopened(tmp_path, monkeypatch):
    root = tree(tmp_path)
    os.mkfifo(root / "pkg/pipe.py")
    snapshot = snapshot_of(root)
    assert snapshot.warnings == ("pkg/pipe.py: a FIFO, not a regular file; skipped",)
    assert list(snapshot.files) == ["pkg/__init__.py", "pkg/run.py"]
    session = open_session(str(root), cache=FactCache(tmp_path / "cache"))
    chain = trace(session.graph, "fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [("pkg/run.py", 1, "param"), ("pkg/run.py", 2, "formula")]


def test_a_link_to_a_device_named_like_a_python_file_is_skipped_unopened(tmp_path):
    root = tree(tmp_path)
    os.symlink("/dev/zero", root / "pkg/zero.py")
    os.symlink("/dev/urandom", root / "pkg/random.py")
    snapshot = snapshot_of(root)
    assert snapshot.warnings == (
        "pkg/random.py: a character device, not a regular file; skipped",
        "pkg/zero.py: a character device, not a regular file; skipped",
    )


def test_a_fifo_put_in_a_files_place_after_the_walk_is_not_read(tmp_path):
    root = tree(tmp_path)
    snapshot = snapshot_of(root)
    (root / "pkg/run.py").unlink()
    os.mkfifo(root / "pkg/run.py")  # the file is read for its facts later: it must not block
    with pytest.raises(NotRegular, match="a FIFO"):
        within(SECONDS, snapshot.read, "pkg/run.py")


def test_reads_are_bounded_by_the_bytes_read_not_by_the_size_a_file_gives():
    # A file that says 10 bytes and holds 100 (grown since, or a /proc file): the cap holds.
    assert read_at_most(io.BytesIO(b"x" * 100), 10, 50) == b"x" * 51
    assert read_at_most(io.BytesIO(b"x" * 30), 10, 50) == b"x" * 30
    assert read_at_most(io.BytesIO(b"x" * 10), 10, 50) == b"x" * 10
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0  # it says nothing, and holds lines
    assert read_source(status).startswith(b"Name:")


def test_a_link_out_to_the_whole_disk_is_a_loop_not_a_walk_of_the_machine(tmp_path):
    root = tree(tmp_path)
    os.symlink("/", root / "pkg/disk")
    os.symlink("/proc/self/root", root / "pkg/proc_root")
    os.symlink(tmp_path, root / "pkg/above")
    snapshot = snapshot_of(root)
    assert snapshot.warnings == (
        "pkg/above: symlink loop, not followed",
        "pkg/disk: symlink loop, not followed",
        "pkg/proc_root: symlink loop, not followed",
    )
    assert list(snapshot.files) == ["pkg/__init__.py", "pkg/run.py"]


def test_a_walk_of_proc_ends():
    """/proc links to every process's root (/) and folder: the walk ends, bounded by its
    caps, with what it found or with the caps' error."""
    warnings: list[str] = []
    try:
        within(SECONDS, walk, Path("/proc"), warnings)
    except TooManyFiles as error:
        assert "point at the folder that holds the package" in str(error)
    assert any(w.endswith("/root: symlink loop, not followed") for w in warnings)


def test_a_tree_past_the_file_cap_is_refused_naming_the_cap(tmp_path, monkeypatch, capsys):
    root = tree(tmp_path)
    many = tmp_path / "many"
    many.mkdir()
    (many / "one.py").write_bytes(b"")
    for folder in range(MAX_FILES // 1000 + 1):
        (many / f"d{folder}").mkdir()
        for number in range(1000):
            os.link(many / "one.py", many / f"d{folder}/m{number}.py")
    os.symlink(many, root / "pkg/vendored")  # the link leads out of the tree: still counted
    with pytest.raises(TooManyFiles) as raised:
        snapshot_of(root)
    assert str(raised.value) == (
        f"{root} holds more than 50000 Python files, the most one tree may have: point at the "
        "folder that holds the package (e.g. the one with sglang/ in it), not a whole disk"
    )
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    assert main(["trace", str(root), "fraction"]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"sgtrace: error: {raised.value}\n")


def test_names_that_are_not_utf8_are_skipped_with_a_warning(tmp_path, monkeypatch, capsys):
    root = tree(tmp_path)
    base = os.fsencode(root)
    for name in (b"pkg/bad\xff.py", b"pkg/odd\xfe/mod.py"):
        path = os.path.join(base, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as out:
            out.write(b"def other(fraction):\n    return fraction\n")
    session = open_session(str(root), cache=FactCache(tmp_path / "cache"))
    assert session.warnings() == [
        "pkg/odd\\xfe: the name is not UTF-8; skipped",
        "pkg/bad\\xff.py: the name is not UTF-8; skipped",
    ]
    assert list(session.snapshot.files) == ["pkg/__init__.py", "pkg/run.py"]
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    assert main(["trace", str(root), "fraction", "--json", "--warnings"]) == 0
    out, err = capsys.readouterr()
    assert '"file": "pkg/run.py"' in out
    assert "pkg/bad\\xff.py: the name is not UTF-8; skipped" in err


def test_a_python_file_given_by_a_name_that_is_not_utf8_is_refused(tmp_path):
    path = os.path.join(os.fsencode(tmp_path), b"bad\xff.py")
    with open(path, "wb") as out:
        out.write(RUN)
    with pytest.raises(NoPythonFiles, match=r"bad\\xff.py: the name is not UTF-8"):
        local_snapshot(Path(os.fsdecode(path)))


def test_names_with_control_characters_are_skipped_with_a_warning(tmp_path, monkeypatch, capsys):
    """A newline or an ESC in a name: no module has one, and the terminal would run it."""
    root = tree(tmp_path)
    for rel in ("pkg/new\nline.py", "pkg/esc\x1b[2J.py", "pkg/title\x1b]0;owned\x07/mod.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"def other(fraction):\n    return fraction\n")
    snapshot = snapshot_of(root)
    assert snapshot.warnings == (
        "pkg/title\\x1b]0;owned\\x07: a name with control characters; skipped",
        "pkg/esc\\x1b[2J.py: a name with control characters; skipped",
        "pkg/new\\nline.py: a name with control characters; skipped",
    )
    assert list(snapshot.files) == ["pkg/__init__.py", "pkg/run.py"]
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    assert main(["trace", str(root), "fraction", "--json", "--warnings"]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err
    assert "pkg/esc\\x1b[2J.py: a name with control characters; skipped" in err


def test_a_python_file_given_by_a_name_with_control_characters_is_refused(tmp_path):
    path = tmp_path / "esc\x1b[2J.py"
    path.write_bytes(RUN)
    with pytest.raises(NoPythonFiles, match=r"esc\\x1b\[2J.py: a name with control characters"):
        local_snapshot(path)


def test_a_file_is_skipped_for_its_name_or_size_as_a_fetch_skips_it_on_a_host(tmp_path):
    """One rule for every tree: the local walk warns what the fetch warns for the same file."""
    root = tree(tmp_path)
    base = os.fsencode(root)
    for name in (b"pkg/bad\xff.py", b"pkg/new\nline.py", b"pkg/esc\x1b.py"):
        with open(os.path.join(base, name), "wb") as out:
            out.write(RUN)
    with open(root / "pkg/big.py", "wb") as out:
        out.truncate(MAX_FILE_BYTES + 1)  # sparse: its size says it all, never read
    on_host = [
        skipped_because(os.fsdecode(name), size)
        for name, size in (
            (b"pkg/bad\xff.py", len(RUN)),
            (b"pkg/big.py", MAX_FILE_BYTES + 1),
            (b"pkg/esc\x1b.py", len(RUN)),
            (b"pkg/new\nline.py", len(RUN)),
            (b"pkg/run.py", len(RUN)),
        )
    ]
    assert on_host[-1] is None
    assert sorted(snapshot_of(root).warnings) == sorted(on_host[:-1])


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_an_audits_metadata_beside_the_package_is_read_as_the_trees_files(tmp_path, kind):
    """The version an audit names comes from `*.dist-info/METADATA` beside a local package:
    a FIFO or a device there is never opened, a file past the cap never read whole; the
    package's version.py says the version instead."""
    root = tree(tmp_path)
    (root / "pkg/version.py").write_text('__version__ = "0.2.0"\n')
    metadata = root / "pkg-0.1.0.dist-info/METADATA"
    metadata.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(metadata)
    elif kind == "device":
        os.symlink("/dev/zero", metadata)
    else:
        with open(metadata, "wb") as out:
            out.write(b"Metadata-Version: 2.1\nName: pkg\nVersion: 0.1.0\n")
            out.truncate(MAX_FILE_BYTES + 1)  # sparse
    snapshot = snapshot_of(root)
    assert within(SECONDS, snapshot_version, snapshot, PackageHint("pkg")) == "0.2.0"
