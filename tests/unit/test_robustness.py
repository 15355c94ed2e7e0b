"""Trees as they come: broken, oddly encoded, huge, looping, missing. Indexing goes on where it
can, says what it skipped, and fails with one actionable error where it cannot."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import spine_of, trace
from tracer.cli.main import main
from tracer.errors import NoPythonFiles, SourceNotFound
from tracer.session import Session, index_snapshot, open_session
from tracer.sources import local_snapshot
from tracer.sources.sealed import pickle_sealed, unpickle_sealed
from tracer.sources.snapshot import MAX_FILE_BYTES
from tracer.store.cache import FactCache
from tracer.store.parts import Parts
from tracer.store.rows import UNIT_ROWS
from tracer.versions import FLOWS, SUMMARIES

BROKEN = b"""\
def good(a):
    return a

def bad(:
    pass

class After:
    def method(self, b):
        self.c = b * 2
"""


def write(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def index(tmp_path: Path, files: dict[str, bytes]) -> Session:
    root = write(tmp_path / "tree", {"pkg/__init__.py": b"", **files})
    return open_session(str(root), cache=FactCache(tmp_path / "cache"))


def test_syntax_error_is_a_warning_and_the_rest_of_the_file_is_indexed(tmp_path):
    session = index(tmp_path, {"pkg/broken.py": BROKEN})
    assert session.warnings() == [
        "pkg/broken.py: syntax error near line 4; the rest of the file was indexed"
    ]
    assert {"pkg.broken.good", "pkg.broken.After.method"} <= session.index.functions.keys()
    assert "pkg.broken.After" in session.index.classes
    chain = trace(session.graph, "After.method.b", sinks=["c"])
    assert spine_of(session, chain) == [
        ("pkg/broken.py", 8, "param"),
        ("pkg/broken.py", 9, "formula"),
    ]


def test_non_utf8_bytes_are_a_warning_and_the_file_is_indexed(tmp_path):
    latin = "def latin(x):\n    label = 'café'\n    y = x * 2\n    return y\n"
    session = index(tmp_path, {"pkg/latin.py": latin.encode("latin-1")})
    assert session.warnings() == [
        "pkg/latin.py: not valid UTF-8 at byte 30; undecodable bytes shown as U+FFFD"
    ]
    chain = trace(session.graph, "latin.x", direction="forward", sinks=["y"])
    assert spine_of(session, chain) == [
        ("pkg/latin.py", 1, "param"),
        ("pkg/latin.py", 3, "formula"),
    ]


def test_utf8_bom_is_not_a_problem_and_keeps_lines(tmp_path):
    session = index(tmp_path, {"pkg/bom.py": b"\xef\xbb\xbflimit = 4\nsize = limit * 2\n"})
    assert session.warnings() == []
    chain = trace(session.graph, "limit", direction="forward", sinks=["size"])
    assert spine_of(session, chain) == [
        ("pkg/bom.py", 1, "local_assign"),
        ("pkg/bom.py", 2, "formula"),
    ]
    assert [s.code for s in chain.steps] == ["limit = 4", "size = limit * 2"]


def test_nul_bytes_are_a_warning_and_the_file_is_indexed(tmp_path):
    session = index(
        tmp_path, {"pkg/nul.py": b"def nul(w):\n    v = w * 2\n    return v\n\x00\x00\n"}
    )
    assert session.warnings() == ["pkg/nul.py: contains NUL bytes; they were read as spaces"]
    chain = trace(session.graph, "nul.w", direction="forward", sinks=["v"])
    assert spine_of(session, chain) == [
        ("pkg/nul.py", 1, "param"),
        ("pkg/nul.py", 2, "formula"),
    ]


def test_empty_file_is_a_module_without_definitions(tmp_path):
    session = index(tmp_path, {"pkg/empty.py": b""})
    assert session.warnings() == []
    assert session.index.module_of["pkg/empty.py"] == "pkg.empty"
    summary = session.facts.summaries["pkg/empty.py"]
    assert (summary.imports, summary.classes, summary.functions) == ((), (), ())


def test_file_over_the_size_cap_is_skipped_with_a_warning(tmp_path):
    line = b"x = 1\n"
    huge = line * (MAX_FILE_BYTES // len(line) + 1)
    session = index(tmp_path, {"pkg/huge.py": huge, "pkg/small.py": b"def small(s):\n    pass\n"})
    assert session.warnings() == ["pkg/huge.py: 8.0 MB, over the 8 MB cap; skipped"]
    assert list(session.snapshot.files) == ["pkg/__init__.py", "pkg/small.py"]
    assert "pkg.small.small" in session.index.functions


def test_symlink_loop_is_a_warning_not_a_hang(tmp_path):
    root = write(
        tmp_path / "tree", {"pkg/__init__.py": b"", "pkg/mod.py": b"def f(a):\n    pass\n"}
    )
    os.symlink("..", root / "pkg" / "loop")
    with ThreadPoolExecutor(1) as pool:
        snapshot = pool.submit(local_snapshot, root).result(timeout=30)
    assert snapshot.warnings == ("pkg/loop: symlink loop, not followed",)
    assert list(snapshot.files) == ["pkg/__init__.py", "pkg/mod.py"]
    session = index_snapshot(snapshot, FactCache(tmp_path / "cache"))
    assert "pkg.mod.f" in session.index.functions


def test_missing_source_raises_source_not_found(tmp_path):
    with pytest.raises(SourceNotFound):
        local_snapshot(tmp_path / "nowhere")


def test_folder_without_python_files_raises_no_python_files(tmp_path):
    folder = write(tmp_path / "docs", {"README.md": b"# nothing to trace\n"})
    with pytest.raises(NoPythonFiles):
        local_snapshot(folder)


def test_file_that_is_not_python_raises_no_python_files(tmp_path):
    notes = write(tmp_path, {"notes.txt": b"x = 1\n"}) / "notes.txt"
    with pytest.raises(NoPythonFiles):
        open_session(str(notes), cache=FactCache(tmp_path / "cache"))


@pytest.mark.parametrize("kind", ["missing", "no-python"])
def test_cli_prints_one_error_line_and_returns_2(tmp_path, capsys, monkeypatch, kind):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "nowhere"
    if kind == "no-python":
        source = write(tmp_path / "docs", {"README.md": b"# nothing to trace\n"})
    assert main(["trace", str(source), "mem_fraction_static"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("sgtrace: error: ")
    assert str(source) in lines[0]


def test_cli_counts_files_with_problems(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    root = write(tmp_path / "tree", {"pkg/__init__.py": b"", "pkg/broken.py": BROKEN})
    assert main(["trace", str(root), "After.method.b", "--json"]) == 0
    _, err = capsys.readouterr()
    assert err.splitlines() == [
        "sgtrace: 1 file(s) had problems and were indexed in part: pkg/broken.py "
        "(--warnings lists them)"
    ]


def test_second_indexing_with_the_same_cache_parses_no_file(tmp_path):
    files = {
        "pkg/__init__.py": b"",
        "pkg/runner.py": b"class Runner:\n    def size(self, total):\n"
        b"        self.tokens = total * 2\n",
        "pkg/broken.py": BROKEN,
    }
    root = write(tmp_path / "tree", files)
    cache = FactCache(tmp_path / "cache")
    first = open_session(str(root), cache=cache)
    assert first.facts.parsed_files == len(files)
    trace(first.graph, "Runner.size.total", sinks=["tokens"])

    second = open_session(str(root), cache=FactCache(tmp_path / "cache"))
    assert second.facts.parsed_files == 0
    assert second.warnings() == first.warnings()
    chain = trace(second.graph, "Runner.size.total", sinks=["tokens"])
    assert spine_of(second, chain) == [
        ("pkg/runner.py", 2, "param"),
        ("pkg/runner.py", 3, "formula"),
    ]
    assert second.facts.parsed_files == 0  # the flows were cached by the first trace too


def test_a_changed_file_is_extracted_alone_and_the_index_follows_it(tmp_path):
    files = {
        "pkg/__init__.py": b"",
        "pkg/runner.py": b"class Runner:\n    def size(self, total):\n        return total\n",
        "pkg/other.py": b"def helper(x):\n    return x\n",
    }
    root = write(tmp_path / "tree", files)
    first = open_session(str(root), cache=FactCache(tmp_path / "cache"))
    assert first.facts.parsed_files == 3
    (root / "pkg/runner.py").write_bytes(
        b"class Runner:\n    def size(self, total, scale=2):\n        return total\n"
    )
    second = open_session(str(root), cache=FactCache(tmp_path / "cache"))
    assert second.facts.parsed_files == 1  # the two unchanged files come from the cache
    (method,) = second.facts.summaries["pkg/runner.py"].functions
    assert [p.name for p in method.params] == ["self", "total", "scale"]
    assert second.facts.summaries["pkg/other.py"] == first.facts.summaries["pkg/other.py"]
    third = open_session(str(root), cache=FactCache(tmp_path / "cache"))
    assert third.facts.parsed_files == 0
    assert third.facts.summaries == second.facts.summaries


def test_summaries_are_packed_once_and_shared_by_trees_with_the_same_files(tmp_path):
    shared = {"pkg/__init__.py": b"", "pkg/other.py": b"def helper(x):\n    return x\n"}
    first_tree = write(tmp_path / "a", {**shared, "pkg/a.py": b"def a(y):\n    return y\n"})
    second_tree = write(tmp_path / "b", {**shared, "pkg/b.py": b"def b(z):\n    return z\n"})
    first = open_session(str(first_tree), cache=FactCache(tmp_path / "cache"))
    assert first.facts.parsed_files == 3
    (folder,) = (tmp_path / "cache/facts/summaries-packs").glob(SUMMARIES.version)
    assert sorted(p.suffix for p in folder.iterdir()) == [".idx", ".pack"]  # one, its index
    second = open_session(str(second_tree), cache=FactCache(tmp_path / "cache"))
    assert second.facts.parsed_files == 1  # pkg/b.py: the others come from the first's pack
    assert second.facts.summaries["pkg/other.py"] == first.facts.summaries["pkg/other.py"]
    assert [f.name for f in second.facts.summaries["pkg/b.py"].functions] == ["b"]


def test_a_damaged_pack_gives_its_summaries_again(tmp_path):
    files = {"pkg/__init__.py": b"", "pkg/a.py": b"def a(y):\n    return y\n"}
    first = open_session(str(write(tmp_path / "a", files)), cache=FactCache(tmp_path / "cache"))
    (pack,) = (tmp_path / "cache/facts/summaries-packs").glob("*/*.pack")
    pack.write_bytes(pack.read_bytes()[:5])  # cut short (a disk filled up, a copy stopped)
    other = {**files, "pkg/b.py": b"def b(z):\n    return z\n"}  # another tree: no whole hit
    again = open_session(str(write(tmp_path / "b", other)), cache=FactCache(tmp_path / "cache"))
    assert again.facts.parsed_files == 3
    assert again.facts.summaries["pkg/a.py"] == first.facts.summaries["pkg/a.py"]


def test_the_fact_cache_still_writes_when_its_folder_was_removed_meanwhile(tmp_path):
    cache = FactCache(tmp_path / "cache")
    cache.put_bytes(SUMMARIES, "ab12", pickle_sealed({"x": 1}))
    assert unpickle_sealed(cache.get_bytes(SUMMARIES, "ab12")) == {"x": 1}
    shutil.rmtree(tmp_path / "cache")  # another process cleared the cache
    cache.put_bytes(SUMMARIES, "ab12", pickle_sealed({"x": 2}))
    assert unpickle_sealed(cache.get_bytes(SUMMARIES, "ab12")) == {"x": 2}
    entries = sorted(p.name for p in (tmp_path / "cache/facts/summaries/ab").iterdir())
    assert entries == [f"ab12-{SUMMARIES.version}.pkl"]


def test_the_script_stops_quietly_when_its_reader_does(write_tree, tmp_path):
    """`sgtrace trace ... | head -1`: the rest of the output has nowhere to go; no traceback,
    exit 0. The script process, as `sgtrace` runs it (`tracer.cli.main.entry`)."""
    lines = "".join(f"    x{i} = fraction * {i}\n" for i in range(400))
    root = write_tree({"pkg/run.py": f"def start(fraction):\n{lines}"})
    env = {**os.environ, "SGTRACE_CACHE": str(tmp_path / "cache")}
    script = [sys.executable, "-c", "from tracer.cli.main import entry; entry()"]
    reader = subprocess.Popen(
        [*script, "trace", str(root), "fraction", "--color", "never"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert reader.stdout is not None and reader.stderr is not None
    first = reader.stdout.readline()
    reader.stdout.close()  # what `head -1` does after its line
    code = reader.wait(timeout=120)
    errors = reader.stderr.read().decode()
    assert first.startswith(b"fraction in ")
    assert (code, "Traceback" in errors) == (0, False), errors


def test_a_flows_entry_of_another_layout_is_extracted_again(write_tree, tmp_path):
    """A cache entry under the current key but of another shape (a layout written by other
    code) is not trusted: the file's flows are extracted again and the trace goes on."""
    root = write_tree({"pkg/run.py": "def start(fraction):\n    tokens = fraction * 2\n"})
    cache = FactCache(tmp_path / "cache")
    session = open_session(str(root), cache=cache)
    key = session.facts.key("pkg/run.py")
    cache.put_bytes(FLOWS, key, pickle_sealed((b"not",) * (UNIT_ROWS + 1)))
    chain = trace(open_session(str(root), cache=cache).graph, "fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [("pkg/run.py", 1, "param"), ("pkg/run.py", 2, "formula")]
    kept = Parts.read(cache.get_bytes(FLOWS, key), list)
    assert kept is not None and len(kept) == UNIT_ROWS + 1  # written again, whole (one unit)


# -- a cache that cannot be written (issue 15: 14) ----------------------------------------------

CLEAN_TREE = {
    "pkg/__init__.py": b"",
    "pkg/runner.py": b"class Runner:\n    def size(self, total):\n        self.tokens = total\n",
    **{f"pkg/m{i}.py": f"def f{i}(a):\n    return a + {i}\n".encode() * 20 for i in range(20)},
}


def uncached_line(folder: Path, reason: str) -> str:
    return (
        f"sgtrace: warning: going on without caching: the cache folder {folder} is not "
        f"writable ({reason}): free some space there, or point SGTRACE_CACHE at a folder you "
        "can write\n"
    )


def test_a_cache_that_cannot_be_written_costs_one_warning_not_the_trace(
    tmp_path, capsys, monkeypatch
):
    root = write(tmp_path / "tree", CLEAN_TREE)
    args = ["trace", str(root), "Runner.size.total", "--json"]
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    assert main(args) == 0
    expected = capsys.readouterr().out
    # A cache folder under a regular file: ENOTDIR on every write, even for root.
    (tmp_path / "file").write_text("")
    unwritable = tmp_path / "file" / "cache"
    monkeypatch.setenv("SGTRACE_CACHE", str(unwritable))
    monkeypatch.setattr("tracer.sources.cache.TOLD_UNCACHED", [])

    assert main(args) == 0

    out, err = capsys.readouterr()
    assert out == expected
    assert err == uncached_line(unwritable, "Not a directory")


def test_a_full_disk_costs_one_warning_not_the_trace(tmp_path):
    """A full disk, as a process limit on file sizes makes it: the writes fail half-way
    (EFBIG where a full disk gives ENOSPC), on every file system and even for root."""
    root = write(tmp_path / "tree", CLEAN_TREE)
    script = [sys.executable, "-c", "from tracer.cli.main import entry; entry()"]
    args = [*script, "trace", str(root), "Runner.size.total", "--json"]

    def run(cache: Path, limit: int | None) -> subprocess.CompletedProcess[str]:
        def limited() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

        env = {**os.environ, "SGTRACE_CACHE": str(cache)}
        return subprocess.run(
            args, env=env, capture_output=True, text=True, timeout=120, preexec_fn=limited
        )

    full = run(tmp_path / "full", 4096)
    reference = run(tmp_path / "cache", None)

    assert (full.returncode, full.stdout) == (0, reference.stdout)
    assert full.stderr == uncached_line(tmp_path / "full", "File too large")
    assert reference.stderr == ""
    leftovers = [p.name for p in (tmp_path / "full").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_file_moved_in_another_tree_has_step_ids_of_its_own_path(tmp_path):
    """Names are cached by content, and hold step ids, which hold the file's path: a file
    that another tree (another release) has at another path must not be given those ids (it
    crashed a trace with a KeyError on the other tree's path)."""
    config = b"class Config:\n    size: int = 1\n\n\ndef grow(c: Config):\n    c.size = 2\n"
    reader = b"from pkg.config import Config\n\n\ndef use(c: Config):\n    return c.size * 3\n"
    cache = FactCache(tmp_path / "cache")
    old = write(tmp_path / "old", {"pkg/__init__.py": b"", "pkg/config.py": config})
    new = write(
        tmp_path / "new",
        {
            "pkg/__init__.py": b"",
            "pkg/settings/__init__.py": b"",
            "pkg/settings/config.py": config,
            "pkg/run.py": reader.replace(b"pkg.config", b"pkg.settings.config"),
        },
    )
    first = open_session(str(old), cache=cache)
    assert first.facts.names("pkg/config.py").writes.get("size")[0][0].startswith("pkg/config.py#")
    second = open_session(str(new), cache=cache)
    writes = second.facts.names("pkg/settings/config.py").writes.get("size")
    assert {w[0].partition("#")[0] for w in writes} == {"pkg/settings/config.py"}
    chain = trace(second.graph, "Config.size", direction="forward", sinks=["x"])
    assert {s.file for s in chain.steps} == {"pkg/settings/config.py", "pkg/run.py"}
