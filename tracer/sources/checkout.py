"""A local git checkout's reference: the commit it is on, and the Python files of the work tree
that differ from it, with their committed bytes (what `git diff HEAD` compares).

Only git's object database is read (`rev-parse`, `ls-tree`, `cat-file`): never `git status`
or `git diff` on the work tree, which would run what the checkout's own config names (an
fsmonitor hook, a clean filter). A file is changed when its bytes hash to another blob than the
commit's, as git hashes a blob; nothing of the checkout is written (no index refresh)."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tracer.errors import NoReference, printable
from tracer.sources.snapshot import Snapshot, name_unfit

MAX_COMMITTED_BYTES = 256 << 20  # the committed versions of the changed files, all together
TIMEOUT = 120.0  # seconds for one git command
COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Options that keep git to its object database: no hook, filter or pager the checkout's
# config may name is run by these commands, and these settings make sure of it.
GIT = ("git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")


@dataclass(frozen=True, slots=True)
class Checkout:
    """A work tree's changes against the commit it is on (paths relative to the snapshot)."""

    toplevel: Path
    commit: str
    changed: tuple[str, ...]  # modified or removed: their committed bytes are in `committed`
    added: tuple[str, ...]  # in the work tree, not in the commit
    committed: dict[str, bytes]


def git(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        return subprocess.run(
            [*GIT, *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=env,
            timeout=TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise NoReference(
            f"{cwd} may be a git checkout, but git is not installed",
            "install git, or name the reference: --against SOURCE",
        ) from None
    except subprocess.TimeoutExpired:
        raise NoReference(
            f"git did not answer within {TIMEOUT:.0f} s in {cwd}",
            "check the checkout (git fsck), or name the reference: --against SOURCE",
        ) from None


def blob_id(data: bytes, length: int) -> str:
    """The id git gives a blob of DATA, for an object name of LENGTH hex digits (SHA-1 or
    SHA-256 repositories)."""
    digest = hashlib.sha1 if length == 40 else hashlib.sha256
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def find_checkout(snapshot: Snapshot) -> Checkout | None:
    """The checkout SNAPSHOT's root is in and its changes; None if the root is in no git
    work tree, or git is not installed. A repository without a commit has no reference."""
    root = snapshot.root
    if not os.path.isdir(root):
        return None
    try:
        facts = git(["rev-parse", "--show-toplevel", "HEAD"], root)
    except NoReference:
        return None
    lines = facts.stdout.decode("utf-8", "surrogateescape").splitlines()
    if facts.returncode != 0 or len(lines) != 2 or not COMMIT.fullmatch(lines[1]):
        inside = git(["rev-parse", "--show-toplevel"], root)
        if inside.returncode == 0:
            raise NoReference(
                f"{snapshot.label} is a git checkout without a commit to compare with",
                "commit it, or name the reference: --against SOURCE",
            )
        return None
    toplevel, commit = Path(lines[0]), lines[1]
    committed_ids = tree_blobs(toplevel, commit, root)
    if not committed_ids:  # a folder the work tree around it does not track: no checkout of it
        return None
    changed, added = [], []
    for path in snapshot.files:
        known = committed_ids.get(path)
        if known is None:
            added.append(path)
        elif blob_id(snapshot.read(path), len(known)) != known:
            changed.append(path)
    removed = [p for p in committed_ids if p not in snapshot.files]
    changed = sorted(changed + removed)
    return Checkout(
        toplevel,
        commit,
        tuple(changed),
        tuple(added),
        blobs(toplevel, {p: committed_ids[p] for p in changed}),
    )


def tree_blobs(toplevel: Path, commit: str, root: Path) -> dict[str, str]:
    """The Python files of COMMIT under ROOT (relative to it) -> their blob ids."""
    listed = git(["ls-tree", "-r", "-z", "--full-tree", commit], toplevel)
    if listed.returncode != 0:
        raise NoReference(
            f"git cannot list the commit {commit[:12]} of {toplevel} "
            f"({printable(listed.stderr.decode('utf-8', 'replace').strip()[:200])})",
            "check the checkout (git fsck), or name the reference: --against SOURCE",
        )
    prefix = posixpath.relpath(str(root), str(toplevel))
    found = {}
    for entry in listed.stdout.split(b"\0"):
        meta, tab, name = entry.partition(b"\t")
        fields = meta.split()
        if not tab or len(fields) != 3 or fields[1] != b"blob" or fields[0] == b"120000":
            continue  # submodules, links and the empty tail
        path = name.decode("utf-8", "surrogateescape")
        inside = path if prefix == "." else posixpath.relpath(path, prefix)
        if inside.startswith("../") or not inside.endswith(".py") or name_unfit(inside):
            continue
        found[inside] = fields[2].decode()
    return found


def blobs(toplevel: Path, wanted: dict[str, str]) -> dict[str, bytes]:
    """The bytes of the blobs WANTED names (path -> id), read with one `git cat-file --batch`
    (the raw committed bytes: no filter runs), MAX_COMMITTED_BYTES in all."""
    if not wanted:
        return {}
    ids = list(dict.fromkeys(wanted.values()))
    done = git(["cat-file", "--batch"], toplevel, ("\n".join(ids) + "\n").encode())
    out, at, contents = done.stdout, 0, {}
    for blob in ids:
        end = out.find(b"\n", at)
        header = out[at:end].split() if end >= 0 else []
        if len(header) != 3 or header[0].decode() != blob or header[1] != b"blob":
            raise NoReference(
                f"git cannot read the committed file {blob[:12]} in {toplevel}",
                "check the checkout (git fsck), or name the reference: --against SOURCE",
            )
        size = int(header[2])
        if sum(map(len, contents.values())) + size > MAX_COMMITTED_BYTES:
            raise NoReference(
                f"the committed versions of the changed files of {toplevel} pass "
                f"{MAX_COMMITTED_BYTES >> 20} MB",
                "name the reference: --against SOURCE",
            )
        contents[blob] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return {path: contents[blob] for path, blob in wanted.items()}
