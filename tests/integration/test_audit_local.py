"""`sgtrace audit` of local trees, chosen as a host's are: a git checkout with uncommitted
patches against the commit it is on (read from its object database, no `git status`), a pip
install against the release its RECORD names, and `--against release` for a fork whose patches
are committed. SGLang 0.4.6 laid out by docker/setup-target.sh, patched as operators patch it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.fetching import Run, in_process
from tests.integration.test_audit import (
    CHAINS,
    FORMULA,
    MEASURED,
    PATCHED_FORMULA,
    RESERVATION,
    RUNNER,
    SERVER_ARGS,
    TEMPLATES,
    VERSION,
    edit,
)
from tests.sshd import Target


@pytest.fixture
def sgtrace(
    capsys: pytest.CaptureFixture[str], release_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Run]:
    monkeypatch.setenv("SGTRACE_CACHE", str(release_cache))
    return in_process(capsys)


def git(target: Target, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(target.root), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def patched(target_checkout: Callable[..., Target], tmp_path: Path) -> Target:
    target = target_checkout(VERSION, dest=tmp_path / "sglang")
    root = target.package_root
    edit(root / RUNNER, MEASURED, RESERVATION)
    edit(root / RUNNER, FORMULA, PATCHED_FORMULA)
    edit(root / TEMPLATES, "default_system_prompt=None,", 'default_system_prompt="Be brief.",')
    (root / "sglang/srt/site_hooks.py").write_text("HOOKS = []\n")
    (root / "sglang/llama3_eval.py").unlink()
    return target


def test_a_local_checkout_is_audited_against_the_commit_it_is_on(
    sgtrace: Callable[..., Run], patched: Target
) -> None:
    # A hostile checkout's own config names a monitor to run: reading the commit never runs it.
    hook = patched.root / "ran"
    git(patched, "config", "core.fsmonitor", f"touch {hook}; false")
    source = str(patched.package_root)
    run = sgtrace("audit", source, "--format", "json", "--quiet")
    assert run.code == 1, run.err
    [one] = json.loads(run.out)["audits"]
    commit = git(patched, "rev-parse", "HEAD").strip()
    assert one["reference"] == f"{source}@{commit[:12]}"
    assert one["how"] == (
        f"the commit it is on, {commit[:12]}: 3 file(s) modified or removed, 1 untracked or added"
    )
    assert one["files"] == {
        "modified": [TEMPLATES, RUNNER],
        "added": ["sglang/srt/site_hooks.py"],
        "removed": ["sglang/llama3_eval.py"],
    }
    params = {p["param"]: p for p in one["params"]}
    assert [p for p in CHAINS if params[p]["changed"]] == [
        "mem_fraction_static",
        "total_gpu_memory",
        "max_total_num_tokens",
    ]
    assert not hook.exists()
    assert git(patched, "status", "--porcelain", "--", "python/sglang/srt/site_hooks.py")


def test_a_clean_local_checkout_changes_nothing(
    sgtrace: Callable[..., Run], target_checkout: Callable[..., Target]
) -> None:
    source = str(target_checkout(VERSION).root)  # the checkout's top, the package below it
    run = sgtrace("audit", source, "--quiet")
    assert run.code == 0, run.err
    first = run.out.splitlines()[0]
    assert first.startswith(f"{source} against {source}@")
    assert first.endswith(": no traced chain changed")


def test_a_committed_fork_is_audited_against_the_release_its_version_names(
    sgtrace: Callable[..., Run], patched: Target
) -> None:
    git(patched, "add", "-A")
    git(patched, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fork")
    assert sgtrace("audit", str(patched.package_root), "--quiet").code == 0  # nothing uncommitted
    run = sgtrace("audit", str(patched.root), "--against", "release", "--format", "json", "--quiet")
    assert run.code == 1, run.err
    [one] = json.loads(run.out)["audits"]
    assert one["reference"] == f"pypi:sglang=={VERSION}"
    assert one["how"] == f"the release its version names, pypi:sglang=={VERSION}"
    assert RUNNER in one["files"]["modified"]
    params = {p["param"]: p for p in one["params"]}
    assert params["mem_fraction_static"]["changed"]


def test_a_local_pip_install_is_audited_against_the_release_its_record_names(
    sgtrace: Callable[..., Run],
    target_checkout: Callable[..., Target],
    target_site_packages: Callable[..., Target],
    make_patch: Callable[[Target, str, str, str], Path],
    tmp_path: Path,
) -> None:
    field = "mem_fraction_static: Optional[float] = None"
    patch = make_patch(target_checkout(VERSION), SERVER_ARGS, field, field.replace("None", "0.8"))
    target = target_site_packages(VERSION, patch=patch, dest=tmp_path / "venv")
    run = sgtrace("audit", str(target.package_root / "sglang"), "--format", "json", "--quiet")
    assert run.code == 1, run.err
    [one] = json.loads(run.out)["audits"]
    assert one["reference"] == f"pypi:sglang=={VERSION}"
    assert one["how"] == (
        f"the installed release, pypi:sglang=={VERSION}: its RECORD disowns 1 file(s), "
        "0 more are not in it"
    )
    assert one["files"] == {"modified": [SERVER_ARGS], "added": [], "removed": []}


def test_a_plain_local_folder_names_the_references_it_may_be_given(
    sgtrace: Callable[..., Run], target_checkout: Callable[..., Target], tmp_path: Path
) -> None:
    folder = tmp_path / "plain"
    subprocess.run(
        ["cp", "-r", str(target_checkout(VERSION).package_root / "sglang"), str(folder)],
        check=True,
    )
    run = sgtrace("audit", str(folder), "--quiet")
    assert run.error_line() == (
        f"sgtrace: error: {folder}: {folder} is neither a git checkout nor a pip install with a "
        "RECORD: name the reference: --against pypi:sglang==VERSION, --against release (the "
        "release its version file names), or a folder"
    )
