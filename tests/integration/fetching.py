"""What the fetch tests share: running the CLI, reading its `--json` output, writing small
trees and fake programs on the target, and reading back exactly what the cache holds."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sshd import SshServer
from tracer.cli.main import main
from tracer.sources.blobs import BlobStore
from tracer.sources.cache import content_hash

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Run:
    """One `sgtrace` run: its exit status and what it printed."""

    code: int
    out: str
    err: str

    def results(self) -> list[dict[str, object]]:
        """`fetch --json` output: one document (nothing else on stdout), its hosts in the
        order they were given; [] when nothing was printed (every host failed)."""
        if not self.out:
            return []
        document = json.loads(self.out)
        assert document["schema"] == "sgtrace.fetch/2", document
        return document["hosts"]

    def error_line(self) -> str:
        """The one line on stderr of a failed run (asserts it is exactly one line)."""
        assert self.code == 2, (self.code, self.out, self.err)
        lines = self.err.splitlines()
        assert len(lines) == 1, self.err
        assert lines[0].startswith("sgtrace: error: "), lines[0]
        return lines[0]


def in_process(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """`sgtrace ARGS` run by `tracer.cli.main.main` in this process, its output read from CAPSYS."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def sgtrace_process(
    server: SshServer,
    cache: Path,
    *args: str,
    timeout: float = 120,
    limits: Callable[[], None] | None = None,
) -> Run:
    """`python -m tracer.cli ARGS` as its own process, as a user would run it: HOME is the
    server's client home (its ~/.ssh), the cache is CACHE; killed past TIMEOUT seconds, with
    LIMITS (a function setting resource limits) applied in the child before it starts."""
    env = {**server.client_env(), "SGTRACE_CACHE": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "tracer.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=limits,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def write_package(folder: Path, modules: dict[str, str]) -> Path:
    """FOLDER/sglang/ holding MODULES ({"mod.py": source}, `__init__.py` added); FOLDER."""
    package = folder / "sglang"
    package.mkdir(parents=True, exist_ok=True)
    for name, text in {"__init__.py": "", **modules}.items():
        (package / name).write_text(text)
    return folder


def fake_program(directory: Path, name: str, script: str) -> Path:
    """An executable sh script DIRECTORY/NAME, to put first on the target's PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def probed_files(root: Path, top: str = "sglang") -> dict[str, bytes]:
    """What the probe lists under ROOT for the package TOP: its `.py` files outside hidden
    folders and `__pycache__`, and the RECORD and METADATA of `TOP-*.dist-info`."""
    found: dict[str, bytes] = {}
    for path in sorted((root / top).rglob("*.py")):
        rel = path.relative_to(root)
        if any(part == "__pycache__" or part.startswith(".") for part in rel.parts):
            continue
        found[str(rel)] = path.read_bytes()
    for info in sorted(root.glob(f"{top}-*.dist-info")):
        for name in ("RECORD", "METADATA"):
            if (info / name).is_file():
                found[str((info / name).relative_to(root))] = (info / name).read_bytes()
    return found


def cached_files(cache: Path) -> dict[str, bytes]:
    """Every file under the cache, by relative path ({} when the cache was never made)."""
    if not cache.exists():
        return {}
    return {
        str(path.relative_to(cache)): path.read_bytes()
        for path in sorted(cache.rglob("*"))
        if path.is_file()
    }


def mirror(cache: Path) -> dict[str, object]:
    """The one mirror manifest a fetch left in the cache (asserts there is exactly one)."""
    manifests = sorted((cache / "remote").glob("*.json"))
    assert len(manifests) == 1, manifests
    return json.loads(manifests[0].read_text())


def mirrored_hashes(cache: Path) -> dict[str, str]:
    """Path -> content hash, as the mirror manifest records the fetched tree."""
    files = mirror(cache)["files"]
    assert isinstance(files, dict)
    return {path: entry[2] for path, entry in files.items()}


def blob_names(cache: Path) -> set[str]:
    """The content hashes stored in the cache's blob store (its index of packs)."""
    return set(BlobStore(cache / "blobs").index)


def hashes(files: dict[str, bytes]) -> dict[str, str]:
    return {path: content_hash(data) for path, data in files.items()}
