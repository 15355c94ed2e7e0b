"""The tracer at a git revision, copied beside a benchmark so the benchmark can run on it in
a new process (`--against REV`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def tracer_at(rev: str, into: Path, bench: Path) -> Path:
    """A folder under INTO holding the tracer (`tracer/`, `queries/` as `tracer.queries`) at git
    revision REV and the benchmark file BENCH (with this module) in `tests/bench/` of it; run it
    with that folder as the working directory."""
    code = into / "code"
    code.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "tracer", "queries"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
    # Installed, `queries/` is the package `tracer.queries`; in the copy it sits in place.
    (code / "queries").rename(code / "tracer" / "queries")
    benches = code / "tests" / "bench"
    benches.mkdir(parents=True)
    (code / "tests" / "__init__.py").touch()
    (benches / "__init__.py").touch()
    for source in (bench, Path(__file__)):
        shutil.copy2(source, benches / source.name)
    return code
