"""`pypi:NAME==VERSION`: a release from the package index, downloaded once and unpacked safely."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from tracer.errors import SourceNotFound, UnsafeArchive, VersionNotFound
from tracer.sources.cache import cache_root
from tracer.sources.snapshot import MAX_FILE_BYTES, Snapshot, local_snapshot
from tracer.versions import RELEASES

SPEC = re.compile(r"^pypi:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")
MAX_TOTAL_BYTES = 2 << 30
KEPT_SUFFIXES = (".py", "/RECORD", "/METADATA", "/PKG-INFO")
# Pure-Python files are the same in every platform wheel: any one will do.
WHEEL_PYTHONS = ("3.12", "3.11", "3.10", "3.13")
WHEEL_PLATFORMS = (
    "manylinux_2_34_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_34_aarch64",
)


def parse_spec(spec: str) -> tuple[str, str]:
    match = SPEC.match(spec)
    if not match:
        raise SourceNotFound(
            f"{spec!r} is not a PyPI source", "write pypi:NAME==VERSION, e.g. pypi:sglang==0.5.9"
        )
    return match["name"], match["version"]


def pypi_snapshot(spec: str) -> Snapshot:
    name, version = parse_spec(spec)
    tree = cache_root() / RELEASES.name / f"{name.lower()}-{version}-{RELEASES.version}"
    if not (tree / ".complete").exists():
        fetch_release(name, version, tree)
    snapshot = local_snapshot(tree / "tree", label=spec)
    snapshot.meta.update({"name": name, "version": version})
    return snapshot


def fetch_release(name: str, version: str, tree: Path) -> None:
    """Download and unpack NAME==VERSION into TREE; TREE appears whole or not at all."""
    tree.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tree.parent, prefix=".partial-") as tmp:
        work = Path(tmp)
        archive = download(name, version, work / "download")
        unpack(archive, work / "out" / "tree")
        (work / "out" / ".complete").write_text(archive.name + "\n")
        if tree.exists():
            shutil.rmtree(tree)
        (work / "out").rename(tree)


def download(name: str, version: str, dest: Path) -> Path:
    """`pip download --no-deps`: a wheel for this Python, the sdist, then a wheel for any
    common Python and platform (only the .py files are kept, and they are the same in all)."""
    requirement = f"{name}=={version}"
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(dest)]
    platforms = [arg for platform in WHEEL_PLATFORMS for arg in ("--platform", platform)]
    attempts = [
        base + ["--only-binary=:all:", requirement],
        base + ["--no-binary=:all:", requirement],
    ]
    attempts += [
        base + ["--only-binary=:all:", "--python-version", python, *platforms, requirement]
        for python in WHEEL_PYTHONS
    ]
    versions: dict[str, None] = {}
    for command in attempts:
        result = subprocess.run(command, capture_output=True, text=True)
        found = sorted(dest.glob("*")) if dest.exists() else []
        if result.returncode == 0 and found:
            return found[0]
        errors = result.stderr
        if "Could not fetch URL" in errors or "Failed to establish" in errors:
            raise SourceNotFound(
                f"cannot reach the package index for {requirement}",
                "check the network or pip's index settings",
            )
        listed = re.search(r"\(from versions: ([^)]*)\)", errors)
        if listed and listed[1].strip() != "none":
            versions.update(dict.fromkeys(listed[1].split(", ")))
    hint = f"check the name and version with `pip index versions {name}`"
    if versions:
        hint = "recent versions: " + ", ".join(list(versions)[-8:])
    raise VersionNotFound(f"{requirement} is not on the package index", hint)


def safe_member(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or name.startswith(("/", "\\")) or ":" in name:
        raise UnsafeArchive(
            f"archive member {name!r} would escape the target",
            "the download is corrupt or hostile; nothing was written",
        )
    return path


def unpack(archive: Path, target: Path) -> None:
    """Extract the Python files (and package metadata) of ARCHIVE into TARGET, refusing any
    member that is absolute, climbs out with `..`, or is a link or device; sizes capped."""
    target.mkdir(parents=True)
    total = 0
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                path = safe_member(info.filename)
                if info.is_dir() or not info.filename.endswith(KEPT_SUFFIXES):
                    continue
                total = check_size(info.filename, info.file_size, total)
                out = target / path
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(zf.read(info))
        return
    with tarfile.open(archive) as tf:
        for member in tf:
            path = safe_member(member.name)
            if not member.isfile():
                if member.issym() or member.islnk() or member.isdev():
                    continue  # links and devices never leave the archive
                continue
            if not member.name.endswith(KEPT_SUFFIXES):
                continue
            total = check_size(member.name, member.size, total)
            parts = path.parts[1:] if len(path.parts) > 1 else path.parts  # drop NAME-VER/
            out = target.joinpath(*parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            source = tf.extractfile(member)
            if source is not None:
                out.write_bytes(source.read())


def check_size(name: str, size: int, total: int) -> int:
    if size > 4 * MAX_FILE_BYTES:
        raise UnsafeArchive(
            f"archive member {name!r} is {size} bytes", "refusing oversized members"
        )
    total += size
    if total > MAX_TOTAL_BYTES:
        raise UnsafeArchive("archive unpacks past 2 GiB", "refusing oversized archives")
    return total
