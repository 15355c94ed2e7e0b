"""Summaries made in worker processes: the same as those made in the index's own process, and
the index's process takes over where a worker cannot start or a file cannot be read."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracer.errors import CacheDamaged
from tracer.extract.parse import parse
from tracer.extract.symbols import summarize
from tracer.session import index_snapshot
from tracer.sources import local_snapshot
from tracer.store.cache import FactCache
from tracer.store.facts import loaded_summary
from tracer.store.workers import JOBS_ENV, POOL_AT, summaries_made, worker_count

KINDS = [
    b"import os\nfrom .b import c as d\n\nclass K(Base):\n    size: int = 4\n\n"
    b"    def run(self, x, *a, y=1, **k) -> int:\n        return (lambda q: q)(x)\n",
    b"\xef\xbb\xbfdef f():\n    pass\n",  # a BOM
    b"def g(:\n    pass\nclass Z:\n    w = 1\n",  # a syntax error: a warning
    b"x = '\xff\xfe'\nRunner = os.path\n",  # not UTF-8: a warning
    b"",
]


def tree(root: Path, files: int) -> Path:
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_bytes(b"")
    for i in range(files):
        kind = KINDS[i % len(KINDS)]
        (package / f"m{i:03}.py").write_bytes(
            kind + f"\ndef own_{i}(v{i}):\n    return v{i}\n".encode()
        )
    return root / "pkg"


def summaries(root: Path, cache: Path, jobs: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv(JOBS_ENV, jobs)
    session = index_snapshot(local_snapshot(root), FactCache(cache))
    assert session.facts.parsed_files == len(session.facts.summaries)
    return session.facts.summaries


def test_summaries_made_by_workers_are_those_made_here(tmp_path, monkeypatch):
    root = tree(tmp_path / "src", 60)
    by_workers = summaries(root, tmp_path / "c2", "2", monkeypatch)
    here = summaries(root, tmp_path / "c1", "1", monkeypatch)
    assert list(by_workers) == list(here) and len(here) == 61
    assert by_workers == here
    warned = [path for path, summary in here.items() if summary.warnings]
    assert len(warned) == 24  # the syntax errors and the bytes that are not UTF-8
    assert by_workers["pkg/m000.py"].classes[0].fields[0].name == "size"


def test_the_index_parses_the_files_itself_where_no_worker_starts(tmp_path, monkeypatch):
    root = tree(tmp_path / "src", 40)
    expected = summaries(root, tmp_path / "c1", "1", monkeypatch)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert summaries(root, tmp_path / "c2", "3", monkeypatch) == expected


def test_a_file_that_cannot_be_read_is_reported_by_the_index_not_lost_in_a_worker(tmp_path):
    sources = {f"m{i}.py": f"def f{i}(): pass\n".encode() for i in range(50)}

    def read(path: str) -> bytes:
        if path == "m37.py":
            raise CacheDamaged("a fetched file in the cache is damaged (m37)", "run it again")
        return sources[path]

    made = summaries_made(list(sources), read, 2)
    first = [next(made) for _ in range(37)]
    assert [path for path, _, _ in first] == [f"m{i}.py" for i in range(37)]
    assert all(summary is None for _, summary, _ in first[:32])  # the first two chunks: workers'
    for path, summary, data in first:
        assert summary is None or summary == loaded_summary(data)
        assert loaded_summary(data) == summarize(parse(sources[path]))
    with pytest.raises(CacheDamaged, match="m37"):
        next(made)


def test_workers_only_for_a_tree_large_enough(monkeypatch):
    monkeypatch.delenv(JOBS_ENV, raising=False)
    assert worker_count(POOL_AT - 1) == 1
    assert worker_count(POOL_AT) >= 1
    monkeypatch.setenv(JOBS_ENV, "4")
    assert worker_count(3) == 4
    monkeypatch.setenv(JOBS_ENV, "many")
    assert worker_count(10_000) == 1


def children(pid: int) -> list[int]:
    """PID's child processes (each thread's: the workers are started by the index's threads)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue  # the thread ended meanwhile
    return found


def test_ctrl_c_during_a_cold_index_ends_it_cleanly_workers_and_all(tmp_path):
    # A tree long enough to parse that Ctrl-C lands while workers parse it.
    root = tmp_path / "src" / "pkg"
    root.mkdir(parents=True)
    (root / "__init__.py").write_bytes(b"")
    body = "".join(f"def f{j}(a, b=1, *c, **d):\n    return a + b\n\n" for j in range(400))
    for i in range(600):
        (root / f"m{i}.py").write_text(f"class K{i}:\n    size: int = {i}\n\n{body}")
    env = {**os.environ, JOBS_ENV: "2", "SGTRACE_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "tracer.cli.main", "trace", str(root), "size"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while len(children(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = children(process.pid)
    assert len(workers) == 2, "the workers never started"
    time.sleep(0.3)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (130, b"", b"sgtrace: interrupted\n")
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{w}").exists() for w in workers), "a worker outlived sgtrace"


def test_flows_made_by_workers_are_those_made_here(tmp_path, monkeypatch):
    """The call graph has the flows of files not cached made in workers: the entries they
    cache hold what this process would have made, a file no worker made is made when asked,
    and nothing is parsed again when every entry is there."""
    root = tree(tmp_path / "src", 60)
    monkeypatch.setenv(JOBS_ENV, "2")
    workers = index_snapshot(local_snapshot(root), FactCache(tmp_path / "c2"))
    paths = sorted(workers.index.module_of)
    before = workers.facts.parsed_files
    workers.facts.make_flows(paths)
    assert workers.facts.parsed_files == before + len(paths)
    assert all(workers.facts.cached_flows(path) for path in paths)
    workers.facts.make_flows(paths)  # all cached: nothing made again
    assert workers.facts.parsed_files == before + len(paths)
    monkeypatch.setenv(JOBS_ENV, "1")
    here = index_snapshot(local_snapshot(root), FactCache(tmp_path / "c1"))
    for path in paths:
        made, read = here.facts.flows(path), workers.facts.flows(path)
        assert (list(made.calls), list(made.assigns)) == (list(read.calls), list(read.assigns))
        assert (list(made.returns), list(made.uses)) == (list(read.returns), list(read.uses))
    assert workers.facts.parsed_files == before + len(paths)  # read from the entries made
