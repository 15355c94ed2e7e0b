"""A local checkout's changes, read from git's object database alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tracer.sources.checkout import blob_id, find_checkout
from tracer.sources.snapshot import local_snapshot

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def repository(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    (top / "src" / "pkg").mkdir(parents=True)
    (top / "src" / "pkg" / "__init__.py").write_text("")
    (top / "src" / "pkg" / "a.py").write_text("A = 1\n")
    (top / "src" / "pkg" / "b.py").write_text("B = 2\n")
    (top / "README").write_text("not python\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "one")
    return top


def test_blob_ids_are_gits(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_bytes(b"print('hi')\r\n\x00")
    expected = git(tmp_path, "hash-object", str(path)).strip()
    assert blob_id(path.read_bytes(), 40) == expected


def test_changed_added_and_removed_files_with_their_committed_bytes(tmp_path: Path) -> None:
    top = repository(tmp_path)
    (top / "src" / "pkg" / "a.py").write_text("A = 10\n")
    (top / "src" / "pkg" / "b.py").unlink()
    (top / "src" / "pkg" / "c.py").write_text("C = 3\n")
    found = find_checkout(local_snapshot(top / "src" / "pkg"))
    assert found is not None
    assert found.commit == git(top, "rev-parse", "HEAD").strip()
    assert (found.changed, found.added) == (("pkg/a.py", "pkg/b.py"), ("pkg/c.py",))
    assert found.committed == {"pkg/a.py": b"A = 1\n", "pkg/b.py": b"B = 2\n"}
    assert git(top, "status", "--porcelain")  # and nothing of the checkout was touched by it


def test_a_folder_the_work_tree_does_not_track_is_no_checkout(tmp_path: Path) -> None:
    top = repository(tmp_path)
    (top / "copy").mkdir()
    (top / "copy" / "m.py").write_text("M = 1\n")
    assert find_checkout(local_snapshot(top / "copy")) is None


def test_a_folder_outside_any_work_tree_is_no_checkout(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "m.py").write_text("M = 1\n")
    assert find_checkout(local_snapshot(tmp_path / "plain")) is None
