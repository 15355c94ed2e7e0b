"""Writing a file never changes what the path is nor lands elsewhere (issue 15: 3, 25): a pipe
or FIFO is written through, a link followed and kept, a file replaced keeps its mode and
owner, and another user's folder or link is refused before any work. Through `sgtrace export
-o`, as a user (often root) runs it, and through tracer.sources.safe_write itself."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tracer.cli.main import main
from tracer.errors import WriteRefused
from tracer.sources.cache import write_atomic
from tracer.sources.safe_write import write_file

ROOT = Path(__file__).resolve().parents[2]
TREE = {
    "pkg/__init__.py": "",
    "pkg/runner.py": "class Runner:\n    def size(self, total):\n        self.tokens = total\n",
}
NOBODY = 65534


@pytest.fixture
def tree(write_tree, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    return write_tree(TREE)


@pytest.fixture
def graph(tree, capsys) -> str:
    """What `export` prints without -o."""
    assert main(export_args(tree)) == 0
    return capsys.readouterr().out


@pytest.fixture
def as_root() -> None:
    """Tests that give files to another user run as root, as CI does."""
    if os.geteuid() != 0:
        pytest.fail("run as root (as CI does): this test gives files to another user")


def export_args(tree: Path, *output: str) -> list[str]:
    return ["export", str(tree), "Runner.size.total", "-f", "dot", "--quiet", *output]


def sgtrace_process(args: list[str], stdout: int | object, tmp_path: Path) -> int:
    env = {**os.environ, "SGTRACE_CACHE": str(tmp_path / "cache")}
    script = [sys.executable, "-c", "from tracer.cli.main import entry; entry()"]
    done = subprocess.run([*script, *args], stdout=stdout, env=env, timeout=120, cwd=ROOT)
    return done.returncode


# -- through sgtrace export -o -----------------------------------------------------------------


def test_export_to_dev_stdout_prints_the_graph(tree, graph, tmp_path):
    # /dev/stdout once became a regular file (as root) and nothing was printed. A link of
    # our own into /proc, as /dev/stdout is, goes first: a regression replaces it, not the
    # machine's /dev/stdout.
    own = tmp_path / "stdout"
    own.symlink_to("/proc/self/fd/1")
    for path in (own, Path("/dev/stdout")):
        done = subprocess.run(
            [sys.executable, "-m", "tracer.cli", *export_args(tree, "-o", str(path))],
            capture_output=True,
            text=True,
            env={**os.environ, "SGTRACE_CACHE": str(tmp_path / "cache")},
            timeout=120,
            cwd=ROOT,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, graph, "")
        assert path.is_symlink()
    # /dev/stdout a file the shell opened (`> out.dot`): the graph lands in it.
    out = tmp_path / "out.dot"
    with out.open("wb") as shell:
        assert sgtrace_process(export_args(tree, "-o", str(own)), shell, tmp_path) == 0
    assert out.read_text() == graph


def test_export_onto_a_link_writes_its_target_and_keeps_the_link(tree, graph, tmp_path):
    target = tmp_path / "shared" / "chain.dot"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "chain.dot"
    link.symlink_to(target)

    assert main(export_args(tree, "-o", str(link))) == 0

    assert link.is_symlink() and link.resolve() == target
    assert target.read_text() == graph


def test_export_onto_a_fifo_writes_through_it(tree, graph, tmp_path):
    fifo = tmp_path / "chain.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()

    code = sgtrace_process(export_args(tree, "-o", str(fifo)), subprocess.DEVNULL, tmp_path)

    reader.join(10)
    assert code == 0
    assert received == [graph.encode()]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_export_onto_a_fifo_nobody_reads_is_refused(tree, tmp_path, capsys):
    fifo = tmp_path / "chain.fifo"
    os.mkfifo(fifo)

    assert main(export_args(tree, "-o", str(fifo))) == 2

    assert capsys.readouterr().err == (
        f"sgtrace: error: cannot write {fifo}: it is a FIFO that nothing reads: start its "
        "reader first\n"
    )
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_export_onto_another_users_file_keeps_its_owner_and_mode(as_root, tree, graph, tmp_path):
    out = tmp_path / "chain.dot"
    out.write_text("old\n")
    os.chown(out, NOBODY, NOBODY)
    out.chmod(0o640)

    assert main(export_args(tree, "-o", str(out))) == 0

    info = out.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert out.read_text() == graph


def test_export_into_another_users_folder_is_refused_before_the_work(
    as_root, tree, tmp_path, capsys
):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    out = theirs / "chain.dot"

    assert main(export_args(tree, "-o", str(out))) == 2

    assert capsys.readouterr().err == (
        f"sgtrace: error: cannot write {out}: the folder {theirs} belongs to nobody: write it "
        "in a folder of yours, or run sgtrace as that user\n"
    )
    assert list(theirs.iterdir()) == []
    assert not (tmp_path / "cache").exists()  # refused before the indexing


def test_export_through_another_users_link_is_refused(as_root, tree, tmp_path, capsys):
    mine = tmp_path / "important"
    mine.write_text("keep\n")
    link = tmp_path / "chain.dot"
    link.symlink_to(mine)
    os.lchown(link, NOBODY, NOBODY)

    assert main(export_args(tree, "-o", str(link))) == 2

    assert f"{link} is a link owned by nobody" in capsys.readouterr().err
    assert mine.read_text() == "keep\n"


# -- the rules themselves --------------------------------------------------------------------


def test_a_folder_anyone_may_change_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(WriteRefused, match="anyone may change the folder"):
        write_file(shared / "x", b"data")
    shared.chmod(0o1777)  # sticky, as /tmp: others cannot move what is ours
    write_file(shared / "x", b"data")
    assert (shared / "x").read_bytes() == b"data"


def test_a_link_in_the_middle_of_the_path_is_followed_and_checked(as_root, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real)
    (tmp_path / "theirs").symlink_to(real)
    os.lchown(tmp_path / "theirs", NOBODY, NOBODY)

    write_file(tmp_path / "via" / "x", b"one")
    with pytest.raises(WriteRefused, match="theirs is a link owned by nobody"):
        write_file(tmp_path / "theirs" / "y", b"two")

    assert (real / "x").read_bytes() == b"one"
    assert not (real / "y").exists()


def test_a_link_where_a_cache_entry_goes_is_replaced_never_written_through(tmp_path, monkeypatch):
    """Inside the cache no link is followed (tracer/sources/cache.py): the entry is renamed
    over the link, and the file the link named is left as it was."""
    real = tmp_path / "elsewhere.pkl"
    real.write_bytes(b"old")
    entry = tmp_path / "cache" / "entry.pkl"
    entry.parent.mkdir()
    entry.symlink_to(real)
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))

    write_atomic(entry, b"new")

    assert not entry.is_symlink() and entry.read_bytes() == b"new"
    assert real.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["cache", "elsewhere.pkl", "entry.pkl"]
