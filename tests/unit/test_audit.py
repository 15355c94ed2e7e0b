"""The audit's pure half on snippet trees: which files and hunks differ, how the chains of two
versions of a tree are matched step by step (lines shift, code changes), which hunks touch a
chain; the reference's paths from `git status --porcelain` and from a RECORD; the reports."""

from __future__ import annotations

import io
import json
import os
import stat
import tarfile
import textwrap
from pathlib import Path

import pytest

from tests.integration.fetching import in_process
from tracer.analyses.audit import Audit, FileChange, Hunk, audit, file_hunks, spine_steps, step_key
from tracer.errors import NameNotFound, TransferFailed, UnsafeArchive
from tracer.session import Session, open_session
from tracer.sources.pristine import (
    TreeChanges,
    aligned,
    committed_reader,
    overlay,
    parse_porcelain,
    record_changes,
    record_digest,
    record_hashes,
    under_root,
)
from tracer.sources.snapshot import local_snapshot
from tracer.store.cache import FactCache
from tracer.views.audit_report import report_json, report_text

ARGS = """
import argparse
from dataclasses import dataclass


@dataclass
class Args:
    mem_fraction_static: float = 0.9

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--mem-fraction-static", type=float, default=Args.mem_fraction_static)
"""
RUNNER = """
from pkg.args import Args


def measure() -> int:
    return 80


class Runner:
    def __init__(self, args: Args):
        self.mem_fraction_static = args.mem_fraction_static

    def profile(self, total: int) -> int:
        available = measure()
        cell = 2
        rest = available - total * (1 - self.mem_fraction_static)
        return int(rest) // cell

    def init_pool(self, total: int) -> None:
        self.max_total_num_tokens = self.profile(total)
"""
OTHER = """
def greet(name: str) -> str:
    return "hello " + name
"""
TREE = {"pkg/__init__.py": "", "pkg/args.py": ARGS, "pkg/runner.py": RUNNER, "pkg/other.py": OTHER}
FORMULA = "rest = available - total * (1 - self.mem_fraction_static)"
PATCHED_FORMULA = "rest = available - total * (1 - self.mem_fraction_static * 0.95)"
RESERVATION = "available = measure()\n        available -= 4  # keep 4 GB for the graphs"
PARAMS = ("mem_fraction_static", "max_total_num_tokens")
SINKS = ("max_total_num_tokens",)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


@pytest.fixture
def versions(tmp_path: Path):
    """versions(edits) -> (reference, target): sessions over TREE and over TREE with EDITS
    ({path: [(old, new), ...]}; a new path is a new file, None removes a file)."""

    def make(edits: dict[str, list[tuple[str, str]] | str | None]) -> tuple[Session, Session]:
        target = dict(TREE)
        for path, change in edits.items():
            if change is None:
                del target[path]
            elif isinstance(change, str):
                target[path] = change
            else:
                for old, new in change:
                    assert old in target[path]
                    target[path] = target[path].replace(old, new, 1)
        cache = FactCache(tmp_path / "cache")
        sessions = []
        for name, files in (("reference", TREE), ("target", target)):
            root = write(tmp_path / name, files)
            sessions.append(open_session(str(root), cache=cache))
        return sessions[0], sessions[1]

    return make


def code(steps: tuple) -> list[str]:
    return [" ".join(s.code.split()) for s in steps]


def test_formula_change_reservation_and_unrelated_file(versions) -> None:
    reference, target = versions(
        {
            "pkg/runner.py": [("available = measure()", RESERVATION), (FORMULA, PATCHED_FORMULA)],
            "pkg/other.py": [('"hello "', '"hi "')],
        }
    )
    report = audit(reference, target, PARAMS, sinks=SINKS)
    assert report.files == (
        FileChange("pkg/other.py", "modified"),
        FileChange("pkg/runner.py", "modified"),
    )
    assert [
        (h.file, h.ref_start, h.ref_end, h.tgt_start, h.tgt_end, h.params) for h in report.hunks
    ] == [
        ("pkg/other.py", 2, 2, 2, 2, ()),
        ("pkg/runner.py", 14, 15, 14, 16, ("mem_fraction_static", "max_total_num_tokens")),
    ]
    assert report.hunks[1].text.splitlines() == [
        "@@ -11,8 +11,9 @@",
        " ",
        "     def profile(self, total: int) -> int:",
        "         available = measure()",
        "+        available -= 4  # keep 4 GB for the graphs",
        "         cell = 2",
        "-        rest = available - total * (1 - self.mem_fraction_static)",
        "+        rest = available - total * (1 - self.mem_fraction_static * 0.95)",
        "         return int(rest) // cell",
        " ",
        "     def init_pool(self, total: int) -> None:",
    ]
    mem, tokens = report.params
    assert mem.param == "mem_fraction_static" and mem.changed
    # The formula is the same step (same function, kind and name) with other code; the lines
    # after it moved down one, and are still the same steps.
    assert [(old.line, new.line) for old, new in mem.spine.changed] == [(15, 16)]
    assert [(code((old,)), code((new,))) for old, new in mem.spine.changed] == [
        ([FORMULA], [PATCHED_FORMULA])
    ]
    assert mem.spine.added == mem.spine.removed == ()
    assert [(s.line, s.kind) for s in mem.steps.added] == [(14, "formula")]
    assert code(mem.steps.added) == ["available -= 4 # keep 4 GB for the graphs"]
    # The measurement reaches the formula only through the new line, which always runs after
    # it: two steps from the spine now, no longer around it.
    assert code(mem.steps.removed) == ["available = measure()"]
    assert mem.steps.changed == ()
    assert tokens.param == "max_total_num_tokens" and tokens.changed
    assert report.changed


def test_shifted_lines_change_no_chain(versions) -> None:
    shifted = "# Runner: sizes the pool.\n\n" + textwrap.dedent(RUNNER).lstrip("\n")
    reference, target = versions({"pkg/runner.py": shifted})
    report = audit(reference, target, PARAMS, sinks=SINKS)
    assert [(h.ref_start, h.ref_end, h.tgt_start, h.tgt_end, h.params) for h in report.hunks] == [
        (1, 0, 1, 2, ())
    ]
    assert [p.changed for p in report.params] == [False, False]
    assert not report.changed
    mem = report.params[0]
    assert mem.reference is not None and mem.target is not None
    ref_lines = [s.line for s in mem.reference.steps if s.file == "pkg/runner.py"]
    tgt_lines = [s.line for s in mem.target.steps if s.file == "pkg/runner.py"]
    assert tgt_lines == [line + 2 for line in ref_lines]


def test_same_session_is_traced_once_and_unchanged(versions) -> None:
    reference, _ = versions({})
    report = audit(reference, reference, PARAMS, sinks=SINKS, labels=("HEAD", "work tree"))
    assert report.files == report.hunks == ()
    assert [p.reference is p.target for p in report.params] == [True, True]
    assert (report.reference, report.target, report.changed) == ("HEAD", "work tree", False)


def test_removed_file_and_new_parameter(versions) -> None:
    extra = """
    class Pool:
        def __init__(self, reserve_gb: int = 4):
            self.reserve_gb = reserve_gb
    """
    reference, target = versions({"pkg/other.py": None, "pkg/pool.py": extra})
    report = audit(reference, target, PARAMS, sinks=SINKS, required=("reserve_gb",))
    assert report.files == (
        FileChange("pkg/other.py", "removed"),
        FileChange("pkg/pool.py", "added"),
    )
    assert [
        (h.file, h.ref_start, h.ref_end, h.tgt_start, h.tgt_end, h.params) for h in report.hunks
    ] == [
        ("pkg/other.py", 1, 2, 1, 0, ()),
        ("pkg/pool.py", 1, 0, 1, 3, ("reserve_gb",)),
    ]
    reserve = report.params[-1]
    assert reserve.param == "reserve_gb" and reserve.reference is None
    assert reserve.spine.removed == () and reserve.changed
    assert [s.file for s in reserve.spine.added] == ["pkg/pool.py"] * len(reserve.spine.added)
    assert [p.param for p in report.params if p.changed] == ["reserve_gb"]


def test_a_required_name_bound_nowhere_is_an_error(versions) -> None:
    reference, target = versions({})
    with pytest.raises(NameNotFound, match="'mem_fraction_statik' is bound nowhere"):
        audit(reference, target, PARAMS, required=("mem_fraction_statik",))


def test_hunk_ranges_of_a_pure_deletion() -> None:
    before = [f"line {n}" for n in range(1, 11)]
    after = before[:4] + before[6:]
    [hunk] = file_hunks("f.py", before, after)
    assert (hunk.ref_start, hunk.ref_end, hunk.tgt_start, hunk.tgt_end) == (5, 6, 5, 4)
    assert hunk.text.splitlines()[0] == "@@ -2,8 +2,6 @@"
    assert (hunk.added, hunk.removed) == (0, 2)


def test_step_key_ignores_line_and_layout(versions) -> None:
    reference, _ = versions({})
    from tracer.trace.chains import trace

    chain = trace(reference.graph, "mem_fraction_static", sinks=SINKS)
    step = next(s for s in chain.steps if s.kind == "formula")
    assert step_key(step) == ("pkg/runner.py", "Runner.profile", "formula", "rest", FORMULA)


# -- the reference's paths -----------------------------------------------------------------


def test_porcelain_lines() -> None:
    lines = [
        " M python/sglang/srt/model_runner.py",
        "M  python/sglang/srt/server_args.py",
        " D python/sglang/gone.py",
        "?? python/sglang/new.py",
        "?? python/sglang/newpkg/",
        "A  python/sglang/staged.py",
        "R  python/sglang/old name.py -> python/sglang/new_name.py",
        ' M "python/sglang/caf\\303\\251 \\"x\\".py"',
        "?? README.md",
        "!! python/sglang/ignored.py",
    ]
    changes = parse_porcelain(lines, "box")
    assert changes == TreeChanges(
        changed=(
            "python/sglang/srt/model_runner.py",
            "python/sglang/srt/server_args.py",
            "python/sglang/gone.py",
            "python/sglang/old name.py",
            'python/sglang/café "x".py',
        ),
        added=(
            "python/sglang/new.py",
            "python/sglang/newpkg/",
            "python/sglang/staged.py",
            "python/sglang/new_name.py",
            "README.md",
        ),
    )
    assert under_root(changes, "/root/sglang", "/root/sglang/python") == TreeChanges(
        changed=(
            "sglang/srt/model_runner.py",
            "sglang/srt/server_args.py",
            "sglang/gone.py",
            "sglang/old name.py",
            'sglang/café "x".py',
        ),
        added=("sglang/new.py", "sglang/newpkg/", "sglang/staged.py", "sglang/new_name.py"),
    )
    # A repository inside the package: its paths start lower than the snapshot's.
    inner = TreeChanges(changed=("srt/a.py", "notes.txt"), added=("new/",))
    assert under_root(inner, "/site/sglang", "/site") == TreeChanges(
        changed=("sglang/srt/a.py",), added=("sglang/new/",)
    )


def tar_of(*members: tarfile.TarInfo) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    return out.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, size: int = 1) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size if kind == tarfile.REGTYPE else 0
    if kind == tarfile.SYMTYPE:
        info.linkname = "/etc/passwd"
    return info


def tar_files(data: bytes, wanted: set[str], label: str) -> dict[str, bytes]:
    """The files `git archive`'s reader takes from the tar DATA."""
    found: dict[str, bytes] = {}
    reader = committed_reader(wanted, label, found)
    reader.feed(data)
    reader.finish()
    return found


def test_committed_files_are_read_from_the_tar_and_nothing_else() -> None:
    wanted = {"python/sglang/a.py"}
    folder = member("python/sglang", tarfile.DIRTYPE)
    assert tar_files(tar_of(folder, member("python/sglang/a.py")), wanted, "box") == {
        "python/sglang/a.py": b"x"
    }
    with pytest.raises(UnsafeArchive, match="box sent a file that was not asked for: 'python/s"):
        tar_files(tar_of(member("python/sglang/b.py")), wanted, "box")
    with pytest.raises(UnsafeArchive, match="box sent a link or special file"):
        tar_files(tar_of(member("python/sglang/a.py", tarfile.SYMTYPE)), wanted, "box")
    with pytest.raises(TransferFailed, match="archive from box is damaged"):
        tar_files(b"garbage" * 100, wanted, "box")


@pytest.mark.parametrize(
    "line",
    [' M "python/sglang/a\\9zz.py"', ' M "python/sglang/\\777.py"', ' M "python/sglang/open.py'],
    ids=["bad-octal", "past-a-byte", "unclosed"],
)
def test_a_status_line_git_does_not_write_is_a_damaged_host(line: str) -> None:
    with pytest.raises(TransferFailed, match="git status on box wrote a line git does not write"):
        parse_porcelain([line], "box")


def test_overlay_puts_back_and_drops(tmp_path: Path) -> None:
    root = write(tmp_path / "t", {"pkg/a.py": "a = 2\n", "pkg/new/x.py": "", "pkg/b.py": ""})
    target = local_snapshot(root)
    reference = overlay(
        target, "ref", {"pkg/a.py": b"a = 1\n", "pkg/c.py": b"c = 3\n"}, ("pkg/new/", "pkg/b.py")
    )
    assert sorted(reference.files) == ["pkg/a.py", "pkg/c.py"]
    assert reference.read("pkg/a.py") == b"a = 1\n" and reference.read("pkg/c.py") == b"c = 3\n"
    assert target.read("pkg/a.py") == b"a = 2\n"


def test_record_says_which_files_differ(tmp_path: Path) -> None:
    root = write(
        tmp_path / "site",
        {"sglang/__init__.py": "", "sglang/a.py": "a = 2\n", "sglang/extra.py": ""},
    )
    record = "\n".join(
        [
            f"sglang/__init__.py,sha256={record_digest(b'')},0",
            f"sglang/a.py,sha256={record_digest(b'a = 1' + bytes([10]))},6",
            f"sglang/gone.py,sha256={record_digest(b'')},0",
            "sglang-1.0.dist-info/RECORD,,",
        ]
    )
    hashes = record_hashes(record)
    assert sorted(hashes) == ["sglang/__init__.py", "sglang/a.py", "sglang/gone.py"]
    changes = record_changes(local_snapshot(root), hashes, "sglang")
    assert changes == TreeChanges(
        changed=("sglang/a.py", "sglang/gone.py"), added=("sglang/extra.py",)
    )


def test_a_checkout_top_is_aligned_with_a_release(tmp_path: Path) -> None:
    checkout = local_snapshot(
        write(
            tmp_path / "co", {"python/pkg/__init__.py": "", "python/pkg/a.py": "", "setup.py": ""}
        )
    )
    release = local_snapshot(write(tmp_path / "rel", {"pkg/__init__.py": "", "pkg/a.py": ""}))
    moved = aligned(checkout, release)
    assert sorted(moved.files) == ["pkg/__init__.py", "pkg/a.py"]
    assert moved.read("pkg/a.py") == b""
    assert aligned(release, release) is release


# -- the reports ---------------------------------------------------------------------------


def patched_audit(versions) -> Audit:
    reference, target = versions(
        {
            "pkg/runner.py": [(FORMULA, PATCHED_FORMULA)],
            "pkg/other.py": [('"hello "', '"hi "')],
        }
    )
    return audit(reference, target, ("mem_fraction_static",), sinks=SINKS, how="a test")


def test_json_report(versions) -> None:
    report = json.loads(report_json([patched_audit(versions)], [("gpu-9:/x", "cannot connect")]))
    assert report["changed"] is True
    assert report["errors"] == [{"target": "gpu-9:/x", "error": "cannot connect"}]
    [one] = report["audits"]
    assert one["files"] == {
        "modified": ["pkg/other.py", "pkg/runner.py"],
        "added": [],
        "removed": [],
    }
    assert one["how"] == "a test"
    [param] = one["params"]
    assert param["param"] == "mem_fraction_static" and param["changed"] is True
    assert [s["kind"] for s in param["target_spine"]] == [
        "cli_flag",
        "field",
        "attr_write",
        "formula",
        "return",
        "attr_write",
    ]
    assert param["spine"]["added"] == param["spine"]["removed"] == []
    [changed] = param["spine"]["changed"]
    assert (changed["before"]["code"], changed["after"]["code"]) == (FORMULA, PATCHED_FORMULA)
    assert param["steps"] == {"added": [], "removed": [], "changed": []}
    assert [
        (h["file"], h["reference_lines"], h["target_lines"], h["params"]) for h in one["hunks"]
    ] == [
        ("pkg/other.py", [2, 2], [2, 2], []),
        ("pkg/runner.py", [15, 15], [15, 15], ["mem_fraction_static"]),
    ]
    assert param["hunks"] == [one["hunks"][1]]


def test_text_and_markdown_reports(versions) -> None:
    report = patched_audit(versions)
    text = report_text([report], [])
    assert "Summary" not in text
    assert "spine step code changed: formula pkg/runner.py:15 Runner.profile\n" in text
    assert "touched by hunk #2" in text
    # The verdicts and the hunks that touch a chain first; the files and the other hunks
    # after them, counted by folder (one by one with --files).
    lines = text.splitlines()
    order = [
        "Traced parameters",
        "Hunks that touch a traced chain (1)",
        "Files (2)",
        "  pkg/: 2 modified",
        "Hunks that touch no traced chain (1)",
        "  pkg/: 1 hunk in 1 file",
    ]
    assert [lines.index(line) for line in order] == sorted(lines.index(line) for line in order)
    assert "#1 pkg/other.py: reference lines 2, target lines 2 (+1 -1)" not in text
    listed = report_text([report], [], files=True)
    assert "  #1 pkg/other.py: reference lines 2, target lines 2 (+1 -1)" in listed
    assert "  modified: pkg/other.py" in listed
    two = report_text([report], [("gpu-9", "cannot connect")]).split("\nSummary\n", 1)[1]
    target, reference = report.target, report.reference
    assert two.splitlines() == [
        "  " + "  ".join(
            ["target".ljust(len(target)), "reference".ljust(len(reference)), "files mod/add/rm",
             "chains changed     ", "status"]
        ),
        "  " + "  ".join(
            [target, reference, "2/0/0           ",
             "mem_fraction_static", "CHANGED"]
        ),
        "  " + "  ".join(
            ["gpu-9".ljust(len(target)), "-".ljust(len(reference)), "-               ",
             "-                  ", "ERROR: cannot connect"]
        ),
    ]  # fmt: skip
    markdown = report_text([report, report], [("gpu-9", "cannot connect")], markdown=True)
    table = markdown.split("## Summary\n\n", 1)[1].splitlines()
    assert table[0] == "| target | reference | files mod/add/rm | chains changed | status |"
    assert table[2].endswith("| 2/0/0 | mem_fraction_static | CHANGED |")
    assert table[4] == "| gpu-9 | - | - | - | ERROR: cannot connect |"
    assert (
        "  ```diff\n  @@ -12,7 +12,7 @@\n       def profile(self, total: int) -> int:\n" in markdown
    )
    assert (
        "    ```diff\n    - rest = available - total * (1 - self.mem_fraction_static)\n" in markdown
    )


# -- the command ---------------------------------------------------------------------------


def test_cli_exit_codes_and_output_file(
    versions, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    versions({"pkg/runner.py": [(FORMULA, PATCHED_FORMULA)]})
    sgtrace = in_process(capsys)
    ref, tgt = str(tmp_path / "reference"), str(tmp_path / "target")
    out = tmp_path / "report.json"
    changed = sgtrace("audit", tgt, "--against", ref, "--format", "json", "-o", str(out), "--quiet")
    assert (changed.code, changed.out) == (1, "")
    assert json.loads(out.read_text())["audits"][0]["target"] == tgt
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask()  # as any new file, not 0600
    nowhere = tmp_path / "nowhere" / "report.md"
    refused = sgtrace("audit", tgt, "--against", ref, "-o", str(nowhere), "--quiet")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        f"sgtrace: error: cannot write {nowhere}: the folder {nowhere.parent} does not exist: "
        f"create it first (mkdir -p {nowhere.parent}) or give another -o\n"
    )
    assert not nowhere.parent.exists()
    same = sgtrace("audit", ref, "--against", ref, "--quiet")
    assert same.code == 0, same.err
    assert same.out.startswith(f"{ref} against {ref}: no traced chain changed\n")
    bad = sgtrace("audit", tgt, "--against", "pypi:sglang", "--quiet").error_line()
    assert bad == (
        "sgtrace: error: 'pypi:sglang' is not a PyPI source: write pypi:NAME==VERSION, "
        "e.g. pypi:sglang==0.5.9"
    )
    missing = sgtrace("audit", str(tmp_path / "nowhere"), "--quiet").error_line()
    assert missing.endswith(
        f"{tmp_path / 'nowhere'} does not exist: give a folder of Python "
        "files, a .py file, or pypi:NAME==VERSION"
    )
    line = sgtrace("audit", tgt, "--quiet").error_line()
    assert line == (
        f"sgtrace: error: {tgt}: {tgt} is neither a git checkout nor a pip install with a "
        "RECORD: name the reference: --against pypi:sglang==VERSION, --against release (the "
        "release its version file names), or a folder"
    )


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_hunk_is_hashable_and_comparable() -> None:
    hunk = Hunk("f.py", 1, 1, 1, 1, "@@", ())
    assert {hunk: 1}[Hunk("f.py", 1, 1, 1, 1, "@@", ())] == 1


CONTROLLER = """
class Controller:
    def __init__(self):
        self.max_total_num_tokens = None
"""


def test_a_sink_is_traced_back_from_where_it_is_computed(versions) -> None:
    """The parameter that is itself the sink is first bound as `= None` elsewhere; its chain
    runs back from the write the other chains end at, so a changed formula changes it."""
    reference, target = versions(
        {"pkg/controller.py": CONTROLLER, "pkg/runner.py": [(FORMULA, PATCHED_FORMULA)]}
    )
    report = audit(reference, target, PARAMS, sinks=SINKS)
    tokens = report.params[1]
    assert tokens.param == "max_total_num_tokens" and tokens.changed
    assert tokens.reference is not None and tokens.target is not None
    assert [(s.kind, " ".join(s.code.split())) for s in spine_steps(tokens.reference)] == [
        ("return", "return int(rest) // cell"),
        ("attr_write", "self.max_total_num_tokens = self.profile(total)"),
    ]
    assert tokens.spine.added == tokens.spine.removed == tokens.spine.changed == ()
    assert [(old.kind, code((old,)), code((new,))) for old, new in tokens.steps.changed] == [
        ("formula", [FORMULA], [PATCHED_FORMULA])
    ]
    assert [h.params for h in report.hunks if h.file == "pkg/runner.py"] == [PARAMS]


# -- big patches: whole files, many hunks, other releases ------------------------------------


def test_a_removed_file_is_one_line_with_its_size_and_chains(versions) -> None:
    reference, target = versions({"pkg/args.py": None, "pkg/new.py": "LIMIT = 1\n"})
    report = audit(reference, target, PARAMS, sinks=SINKS)
    text = report_text([report], [], files=True)
    size = len(textwrap.dedent(ARGS).lstrip("\n").splitlines())
    lines = text.splitlines()
    assert lines[2] == "  files: 0 modified, 1 added, 1 removed"
    files = lines.index("Files (2)")
    assert lines[files + 1 : files + 3] == [
        "  added: pkg/new.py (1 line)",
        f"  removed: pkg/args.py ({size} lines, touches {', '.join(PARAMS)})",
    ]
    assert f"  #1 pkg/args.py: removed, {size} lines: {', '.join(PARAMS)}" in lines
    assert lines[-1] == "  #2 pkg/new.py: added, 1 line"
    counted = report_text([report], []).splitlines()
    files = counted.index("Files (2)")
    assert counted[files + 1 : files + 3] == [
        "  pkg/: 1 added, 1 removed",
        "  (--files lists them one by one)",
    ]
    assert "mem_fraction_static: float = 0.9" not in text.split("Hunks that touch")[1]
    hunks = json.loads(report_json([report], []))["audits"][0]["hunks"]
    assert hunks[0]["diff"].count("\n-") == size  # JSON still has the whole file


def test_hunks_past_twenty_in_a_file_are_counted_not_printed(versions, tmp_path: Path) -> None:
    many = "".join(f"x{n} = {n}\n" for n in range(200))
    patched = "".join(f"x{n} = {n + (n % 8 == 0)}\n" for n in range(200))
    _, target = versions({"pkg/many.py": patched})
    (tmp_path / "reference/pkg/many.py").write_text(many)
    reference = open_session(str(tmp_path / "reference"), cache=FactCache(tmp_path / "cache"))
    report = audit(reference, target, PARAMS, sinks=SINKS)
    assert len(report.hunks) == 25
    for markdown in (False, True):
        lines = report_text([report], [], markdown=markdown, files=True).splitlines()
        listed = [line for line in lines if "many.py: reference lines" in line]
        assert len(listed) == 20
        more = "… 5 more hunks of {} (--format json has them all)"
        path = "`pkg/many.py`" if markdown else "pkg/many.py"
        assert lines[-1] == ("- " if markdown else "  ") + more.format(path)
    assert len(json.loads(report_json([report], []))["audits"][0]["hunks"]) == 25


def test_other_releases_are_noted_at_the_top(
    versions, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    versions({"pkg/version.py": '__version__ = "0.2.0"\n'})
    ref, tgt = tmp_path / "reference", tmp_path / "target"
    metadata = tgt / "pkg-0.2.0.dist-info" / "METADATA"
    metadata.parent.mkdir()
    metadata.write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 0.2.1\n\nVersion: 9\n")
    (ref / "pkg/version.py").write_text('__version__ = "0.1.0"\n')
    sgtrace = in_process(capsys)
    run = sgtrace("audit", str(tgt), "--against", str(ref), "--quiet")
    assert run.code == 0, run.err
    assert run.out.splitlines()[:3] == [
        f"{tgt} against {ref}: no traced chain changed",
        "  note: the target is version 0.2.1, the reference 0.1.0: the differences below are "
        "mostly the releases' own",
        f"  reference: --against {ref}",
    ]
    run = sgtrace("audit", str(tgt), "--against", str(ref), "--quiet", "--format", "json")
    assert json.loads(run.out)["audits"][0]["versions"] == {
        "reference": "0.1.0",
        "target": "0.2.1",
    }
    metadata.unlink()  # then the package's version.py says which release it is
    same = sgtrace("audit", str(tgt), "--against", str(tgt), "--quiet").out.splitlines()
    assert same[1] == f"  reference: --against {tgt}"
