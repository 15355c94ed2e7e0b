"""The reference an audit compares a target with, chosen the way a person would: for a git
checkout, the commit it is on (on a host, its modified files fetched as committed with one
remote command; in a local folder, read from its object database by tracer/sources/checkout.py);
for a pip install, the release at the installed version, where its `*.dist-info/RECORD` hashes
say the files differ; the release the tree's own version file names (`--against release`); or
any source the user names."""

from __future__ import annotations

import asyncio
import base64
import csv
import hashlib
import io
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from tracer.errors import NoReference, SgtraceError, TransferFailed
from tracer.sources import open_source
from tracer.sources.answers import Watchdog, run_streamed
from tracer.sources.archive import Progress
from tracer.sources.cache import content_hash
from tracer.sources.checkout import find_checkout
from tracer.sources.fetch import (
    VERSION_LINE,
    FetchResult,
    fetch_many,
    load_mirror,
    mirror_path,
)
from tracer.sources.hint import PackageHint
from tracer.sources.remote import RemoteSpec, SshOptions, parse_remote
from tracer.sources.snapshot import Snapshot, name_unfit, read_source
from tracer.sources.ssh import connect, connection_error
from tracer.sources.tarstream import TarReader

MAX_PRISTINE_BYTES = 256 << 20  # the committed versions of the modified files, all together
RELEASE = "release"  # --against release: the release the target's own version file names


@dataclass(frozen=True, slots=True)
class Pair:
    """A target and the reference it is audited against."""

    target: Snapshot
    reference: Snapshot
    how: str  # how the reference was chosen, for people


@dataclass(frozen=True, slots=True)
class TreeChanges:
    """Paths (relative to the snapshot's root) that differ from a pristine tree."""

    changed: tuple[str, ...] = ()  # modified or removed: the pristine version is needed
    added: tuple[str, ...] = ()  # not in the pristine tree (a folder ends with "/")


# -- git -----------------------------------------------------------------------------------


ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
OCTAL_ESCAPE = re.compile(r"[0-3][0-7]{2}")


def unquote(text: str) -> tuple[str, str] | None:
    """The first path of a `git status --porcelain` field (C-quoted when it holds odd
    characters) and the text after it; None if the quoting is not git's."""
    if not text.startswith('"'):
        path, arrow, rest = text.partition(" -> ")
        return path, (arrow + rest) if arrow else ""
    out = bytearray()
    i = 1
    while i < len(text) and text[i] != '"':
        if text[i] != "\\":
            out += text[i].encode("utf-8", "surrogateescape")
            i += 1
        elif text[i + 1 : i + 2] in ESCAPES:
            out.append(ESCAPES[text[i + 1]])
            i += 2
        elif OCTAL_ESCAPE.fullmatch(text[i + 1 : i + 4]):
            out.append(int(text[i + 1 : i + 4], 8))
            i += 4
        else:
            return None
    if i == len(text):  # no closing quote
        return None
    return out.decode("utf-8", "surrogateescape"), text[i + 1 :]


def parse_porcelain(lines: list[str], label: str) -> TreeChanges:
    """`git status --porcelain` lines (from the host LABEL) -> paths relative to the
    repository's top; a line git would not write is a damaged or hostile host."""
    changed: list[str] = []
    added: list[str] = []
    for line in lines:
        state, rest = line[:2], line[3:]
        if len(line) < 4 or state == "!!":
            continue
        first, after = unquoted(rest, line, label)
        if after.startswith(" -> "):  # renamed or copied: "old -> new"
            second, _ = unquoted(after[4:], line, label)
            if "R" in state:
                changed.append(first)
            added.append(second)
        elif state == "??" or "A" in state:  # untracked, or added since the commit
            added.append(first)
        else:  # modified, deleted, type changed, unmerged: the committed version is wanted
            changed.append(first)
    return TreeChanges(tuple(changed), tuple(added))


def unquoted(text: str, line: str, label: str) -> tuple[str, str]:
    found = unquote(text)
    if found is None or not found[0]:
        raise TransferFailed(
            f"git status on {label} wrote a line git does not write: {line!r}",
            "check the checkout on the host (git status)",
        )
    return found


def under_root(changes: TreeChanges, toplevel: str, root: str) -> TreeChanges:
    """CHANGES (relative to the repository's TOPLEVEL) as paths relative to ROOT; paths
    outside ROOT are dropped, and only Python files (and folders) are kept."""

    def inside(paths: tuple[str, ...], folders: bool) -> tuple[str, ...]:
        kept = []
        for path in paths:
            moved = posixpath.relpath(posixpath.join(toplevel, path), root)
            moved += "/" if path.endswith("/") else ""
            if moved.startswith("../") or name_unfit(moved):  # as the fetch skips them
                continue
            if moved.endswith(".py") or (folders and moved.endswith("/")):
                kept.append(moved)
        return tuple(kept)

    return TreeChanges(inside(changes.changed, False), inside(changes.added, True))


async def committed_files(
    spec: RemoteSpec, options: SshOptions, toplevel: str, commit: str, paths: list[str]
) -> dict[str, bytes]:
    """PATHS (relative to TOPLEVEL) as COMMIT has them, in one remote `git archive`, read
    as it streams (checked, capped, up to the archive's end)."""
    command = shlex.join(
        ["git", "--literal-pathspecs", "-C", toplevel, "archive", "--format=tar", commit, "--"]
        + paths
    )
    found: dict[str, bytes] = {}
    reader = committed_reader(set(paths), spec.label, found)
    watchdog = Watchdog(options.idle_timeout, spec.label, "running git archive")

    def consume(chunk: bytes) -> bool:
        reader.feed(chunk)
        return reader.ended

    try:
        async with await connect(spec, options) as conn:
            finished = await run_streamed(conn, command, consume, watchdog)
    except (OSError, asyncssh.Error) as exc:
        raise connection_error(spec, exc) from exc
    if not reader.ended and finished.status != 0:
        raise TransferFailed(
            f"git archive on {spec.label} failed ({finished.reason()})",
            "check that the checkout's commit is intact (git fsck)",
        )
    reader.finish()
    return found


def committed_reader(wanted: set[str], label: str, found: dict[str, bytes]) -> TarReader:
    """A reader of `git archive`'s tar that puts the WANTED files in FOUND: its folders
    and the commit's pax header passed over, anything else refused, MAX_PRISTINE_BYTES in
    all."""
    return TarReader(wanted, label, found.__setitem__, folders=True, max_total=MAX_PRISTINE_BYTES)


def git_reference(result: FetchResult, committed: dict[str, bytes]) -> Snapshot:
    """The target with its modified files as committed (COMMITTED, relative to the snapshot
    root) and its untracked ones dropped."""
    changes = git_changes(result)
    return overlay(
        result.snapshot,
        f"{result.spec.text}@{result.probe.git_commit[:12]}",
        committed,
        changes.added,
    )


def git_changes(result: FetchResult) -> TreeChanges:
    probe = result.probe
    changes = parse_porcelain(probe.dirty, result.spec.label)
    return under_root(changes, probe.git_toplevel, probe.root)


def overlay(
    target: Snapshot, label: str, pristine: dict[str, bytes], drop: tuple[str, ...]
) -> Snapshot:
    """TARGET with the files of PRISTINE put back and the paths (or folders) of DROP left out."""
    files = dict(target.files)
    for path in drop:
        for name in [p for p in files if p == path or (path.endswith("/") and p.startswith(path))]:
            del files[name]
    contents = {}
    for path, data in pristine.items():
        files[path] = content_hash(data)
        contents[path] = data
    return Snapshot(
        label=label,
        root=target.root,
        files=dict(sorted(files.items())),
        meta=dict(target.meta),
        contents=contents,
        blobs=target.blobs,
    )


# -- a pip install ---------------------------------------------------------------------------


def record_hashes(text: str) -> dict[str, str]:
    """`*.dist-info/RECORD`: path -> its urlsafe base64 sha256 (entries without a hash left out)."""
    hashes = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) >= 2 and row[1].startswith("sha256="):
            hashes[row[0]] = row[1].removeprefix("sha256=")
        elif len(row) >= 2 and row[1].startswith("sha256:"):
            hashes[row[0]] = row[1].removeprefix("sha256:")
    return hashes


def record_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def record_changes(snapshot: Snapshot, record: dict[str, str], top: str) -> TreeChanges:
    """The Python files under TOP that RECORD does not list with their current hash."""
    prefix = f"{top}/"
    changed = [
        p for p in snapshot.files if p in record and record[p] != record_digest(snapshot.read(p))
    ]
    added = [p for p in snapshot.files if p.startswith(prefix) and p not in record]
    changed += [
        p for p in record if p.startswith(prefix) and p.endswith(".py") and p not in snapshot.files
    ]
    return TreeChanges(tuple(sorted(changed)), tuple(added))


def fetched_record(result: FetchResult) -> str | None:
    """The RECORD of the package's dist-info, as the fetch brought it, or None."""
    files = load_mirror(mirror_path(result.spec, result.probe))
    blobs = result.snapshot.blobs
    for path, entry in sorted(files.items()):
        folder, _, name = path.rpartition("/")
        info = folder.startswith(f"{result.probe.top}-") and folder.endswith(".dist-info")
        if name == "RECORD" and info and blobs is not None and blobs.has(entry[2]):
            return blobs.read(entry[2]).decode("utf-8", "replace")
    return None


def installed_reference(
    target: Snapshot, record: str, top: str, hint: PackageHint
) -> tuple[Snapshot, str]:
    """TARGET (a pip install of the package TOP) with the files its RECORD disowns put back
    as the release on PyPI has them (the release of HINT's package)."""
    version = target.meta.get("version", "") or snapshot_version(target, hint)
    if not version:
        raise NoReference(
            f"{target.label} has a RECORD but no version in its METADATA",
            "name the reference: --against pypi:NAME==VERSION",
        )
    changes = record_changes(target, record_hashes(record), top)
    spec = hint.pypi(version)
    release = open_source(spec)
    pristine = {p: release.read(p) for p in changes.changed if p in release.files}
    how = (
        f"the installed release, {spec}: its RECORD disowns {len(changes.changed)} file(s), "
        f"{len(changes.added)} more are not in it"
    )
    return overlay(target, spec, pristine, changes.added), how


# -- versions ------------------------------------------------------------------------------


def snapshot_version(snapshot: Snapshot, hint: PackageHint) -> str:
    """The release a tree is, as far as it says: the version its source recorded (PyPI, a
    host's METADATA or version.py), else a local folder's `NAME-VERSION.dist-info/METADATA`
    for one of its packages (HINT's first), else `__version__` in a package's `version.py`;
    "" if none."""
    if snapshot.meta.get("version"):
        return snapshot.meta["version"]
    tops = sorted(
        {
            p.split("/")[0]
            for p in snapshot.files
            if p.count("/") == 1 and p.endswith("/__init__.py")
        },
        key=lambda top: (top != hint.name, top),
    )
    if snapshot.blobs is None:  # a local folder: its dist-info sits beside the package
        for top in tops:
            for metadata in sorted(snapshot.root.glob("*.dist-info/METADATA")):
                name = metadata.parent.name.split("-")[0].lower().replace(".", "_")
                if name == top.lower() and (version := metadata_version(metadata)):
                    return version
    # A checkout given at its top holds the package deeper (`python/sglang/version.py`).
    deeper = sorted(
        p.rsplit("/", 1)[0] for p in snapshot.files if p.endswith(f"/{hint.name}/__init__.py")
    )
    for top in [*tops, *(d for d in deeper if d not in tops)]:
        for name in ("version.py", "_version.py"):
            if f"{top}/{name}" in snapshot.files:
                text = snapshot.read(f"{top}/{name}").decode("utf-8", "replace")
                if found := VERSION_LINE.search(text):
                    return found[1]
    return ""


def metadata_version(path: Path) -> str:
    """The `Version:` header of the METADATA file PATH; "" if none, or if it is not a regular
    file within the cap of a tree's files (read as they are: a FIFO or /dev/zero in its
    place is never read)."""
    try:
        text = read_source(path).decode("utf-8", "replace")
    except OSError:  # NotRegular and OverCap among them
        return ""
    for line in text.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
        if not line:  # the headers end at the first blank line
            break
    return ""


# -- choosing ------------------------------------------------------------------------------


def aligned(target: Snapshot, reference: Snapshot) -> Snapshot:
    """TARGET re-rooted where the reference's packages are (a checkout's top given where the
    release holds `pkg/` at its root: `python/pkg/x.py` -> `pkg/x.py`)."""
    if set(target.files) & set(reference.files):
        return target
    tops = {
        p.split("/")[0] for p in reference.files if p.count("/") == 1 and p.endswith("/__init__.py")
    }
    prefixes = sorted(
        (
            p[: -len(f"{top}/__init__.py")]
            for p in target.files
            for top in tops
            if p.endswith(f"/{top}/__init__.py")
        ),
        key=len,
    )
    if not prefixes:
        return target
    prefix = prefixes[0]
    files = {p[len(prefix) :]: h for p, h in target.files.items() if p.startswith(prefix)}
    contents = {p[len(prefix) :]: d for p, d in target.contents.items() if p.startswith(prefix)}
    return Snapshot(
        label=target.label,
        root=target.root / prefix.rstrip("/"),
        files=files,
        warnings=target.warnings,
        meta=target.meta,
        contents=contents,
        blobs=target.blobs,
    )


def choose_references(
    texts: list[str],
    against: str | None,
    options: SshOptions,
    progress: Progress | None,
    hint: PackageHint,
) -> list[Pair | SgtraceError]:
    """For each target as the user wrote it, its snapshot and its reference (or the error
    that stopped it). Remote targets are fetched at once, their committed files too; HINT
    is the package a host holds (looked for where no path is given, its release on PyPI the
    reference of a pip install)."""
    remote: dict[int, RemoteSpec] = {}
    for n, text in enumerate(texts):
        local = text.startswith("pypi:") or Path(text).expanduser().exists()
        spec = None if local else parse_remote(text, bare_host=True)
        if spec is not None:
            remote[n] = spec
    results: dict[int, FetchResult | SgtraceError] = dict(
        zip(remote, fetch_many(list(remote.values()), options, progress, hint), strict=True)
    )
    named = against if against and against != RELEASE else None
    reference = open_source(named, options, progress, hint) if named else None
    committed = fetch_committed(
        {n: r for n, r in results.items() if isinstance(r, FetchResult) and not against}, options
    )
    pairs: list[Pair | SgtraceError] = []
    for n, text in enumerate(texts):
        try:
            pairs.append(pair_for(text, results.get(n), reference, against, committed.get(n), hint))
        except SgtraceError as error:
            pairs.append(error)
    return pairs


def pair_for(
    text: str,
    fetched: FetchResult | SgtraceError | None,
    reference: Snapshot | None,
    against: str | None,
    committed: dict[str, bytes] | SgtraceError | None,
    hint: PackageHint,
) -> Pair:
    if isinstance(fetched, SgtraceError):
        raise fetched
    if isinstance(committed, SgtraceError):
        raise committed
    target = open_source(text) if fetched is None else fetched.snapshot
    if against == RELEASE:
        return release_pair(target, hint)
    if reference is not None:
        return Pair(aligned(target, reference), reference, f"--against {against}")
    if fetched is None:
        return local_pair(text, target, hint)
    probe = fetched.probe
    if probe.git_commit:
        changes = git_changes(fetched)
        how = checkout_how(probe.git_commit, len(changes.changed), len(changes.added))
        return Pair(fetched.snapshot, git_reference(fetched, committed or {}), how)
    record = fetched_record(fetched)
    if record is not None:
        reference, how = installed_reference(fetched.snapshot, record, probe.top, hint)
        return Pair(fetched.snapshot, reference, how)
    raise NoReference(
        f"{fetched.spec.text} is neither a git checkout nor a pip install with a RECORD",
        f"name the reference: --against {hint.pypi('VERSION')} (or a folder, or host:/path)",
    )


def checkout_how(commit: str, changed: int, added: int) -> str:
    return (
        f"the commit it is on, {commit[:12]}: {changed} file(s) modified or removed, "
        f"{added} untracked or added"
    )


def local_pair(text: str, target: Snapshot, hint: PackageHint) -> Pair:
    """A local folder's reference, as a host's is chosen: the commit a git checkout is on,
    else the release a pip install's RECORD names."""
    checkout = find_checkout(target)
    if checkout is not None:
        label = f"{text}@{checkout.commit[:12]}"
        reference = overlay(target, label, checkout.committed, checkout.added)
        how = checkout_how(checkout.commit, len(checkout.changed), len(checkout.added))
        return Pair(target, reference, how)
    found = local_record(target)
    if found is not None:
        top, record = found
        reference, how = installed_reference(target, record, top, hint)
        return Pair(target, reference, how)
    raise NoReference(
        f"{text} is neither a git checkout nor a pip install with a RECORD",
        f"name the reference: --against {hint.pypi('VERSION')}, --against release (the "
        "release its version file names), or a folder",
    )


def local_record(snapshot: Snapshot) -> tuple[str, str] | None:
    """(the package's top folder, its RECORD's text) of a local tree laid out as a pip
    install: a `TOP-VERSION.dist-info/RECORD` beside a package TOP of the tree; None if none."""
    tops = sorted({p.split("/")[0] for p in snapshot.files if p.count("/") >= 1})
    for top in tops:
        for info in sorted(snapshot.root.glob("*.dist-info")):
            name = info.name.split("-")[0].lower().replace(".", "_")
            if name != top.lower() or not (info / "RECORD").is_file():
                continue
            try:
                return top, read_source(info / "RECORD").decode("utf-8", "replace")
            except OSError:  # not a regular file, or past the cap: no RECORD to go by
                continue
    return None


def release_pair(target: Snapshot, hint: PackageHint) -> Pair:
    """TARGET against the release its own version file names (`--against release`)."""
    version = snapshot_version(target, hint)
    if not version:
        raise NoReference(
            f"{target.label} names no version of {hint.name} (no version.py, METADATA or "
            "dist-info)",
            f"name the reference: --against {hint.pypi('VERSION')}",
        )
    spec = hint.pypi(version)
    reference = open_source(spec)
    return Pair(aligned(target, reference), reference, f"the release its version names, {spec}")


def fetch_committed(
    results: dict[int, FetchResult], options: SshOptions
) -> dict[int, dict[str, bytes] | SgtraceError]:
    """For each git checkout with modified files, those files as committed (relative to the
    snapshot root): one remote command per host, all hosts at once."""
    asks: dict[int, tuple[FetchResult, dict[str, str]]] = {}
    for n, result in results.items():
        probe = result.probe
        if not probe.git_commit:
            continue
        names = {
            posixpath.relpath(posixpath.join(probe.root, p), probe.git_toplevel): p
            for p in git_changes(result).changed
        }
        if names:
            asks[n] = (result, names)
    if not asks:
        return {}

    async def one(result: FetchResult, names: dict[str, str]) -> dict[str, bytes] | SgtraceError:
        probe = result.probe
        try:
            found = await committed_files(
                result.spec, options, probe.git_toplevel, probe.git_commit, sorted(names)
            )
        except SgtraceError as error:
            return error
        return {names[p]: data for p, data in found.items()}

    async def every() -> list[dict[str, bytes] | SgtraceError]:
        return list(await asyncio.gather(*(one(*ask) for ask in asks.values())))

    return dict(zip(asks, asyncio.run(every()), strict=True))


__all__ = ["Pair", "TreeChanges", "choose_references", "snapshot_version"]
