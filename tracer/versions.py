"""One version scheme for every cached kind: a kind's version is a hash of the source files
that produce it (modules of this package, and the query files they load) and of the versions
of the kinds it is made from. Change one of those files and the kind's entries are made anew;
change anything else and they stay. There is no number to remember to bump.

Every kind is declared here, once, with what produces it (files named, not imported: any
stage may use this module). Fetched blobs need no version: they are named by their content."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent  # tracer/


@dataclass(frozen=True)
class CachedKind:
    """A kind of cached facts: its folder under the fact cache, and what produces it."""

    name: str
    # Files under tracer/ ("extract/symbols.py"), or folders ("extract/": every .py in it).
    modules: tuple[str, ...]
    # Files under the query package ("python/calls.scm"), or folders ("python/": every .scm).
    queries: tuple[str, ...] = ()
    made_from: tuple[CachedKind, ...] = field(default=())

    @cached_property
    def version(self) -> str:
        digest = hashlib.blake2b(self.name.encode(), digest_size=8)
        for path in self.sources():
            digest.update(f"\0{path.name}\0".encode())
            digest.update(path.read_bytes())
        for kind in self.made_from:
            digest.update(kind.version.encode())
        return digest.hexdigest()

    def sources(self) -> list[Traversable]:
        """The files this kind's version is a hash of, in a fixed order."""
        found = expand(PACKAGE, self.modules, ".py")
        return found + expand(files("tracer.queries"), self.queries, ".scm")


def expand(root: Traversable, names: tuple[str, ...], suffix: str) -> list[Traversable]:
    """NAMES under ROOT, each folder (a name ending in /) as its files ending in SUFFIX."""
    found: list[Traversable] = []
    for name in names:
        place = root.joinpath(name.rstrip("/"))
        if name.endswith("/"):
            inside = [p for p in place.iterdir() if p.name.endswith(suffix) and p.is_file()]
            found += sorted(inside, key=lambda p: p.name)
        else:
            found.append(place)
    return found


# -- the sources' caches ---------------------------------------------------------------------

SEALED = "sources/sealed.py"  # how the entries below are stored: behind their checksum

# A local tree's content hashes by (size, mtime), so an unchanged file is not read again.
STAT = CachedKind("stat", ("sources/snapshot.py", SEALED))
# The manifest of a host's tree (sizes, mtimes, content hashes), so a fetch sends what changed.
MANIFESTS = CachedKind("remote", ("sources/fetch.py", "sources/probe.sh"))
# A release from the package index, downloaded and unpacked (only its Python files).
RELEASES = CachedKind(
    "pypi",
    ("sources/pypi.py", "sources/pypi_index.py", "sources/pypi_unpack.py", "sources/snapshot.py"),
)

# A project's releases and their upload dates on the indexes (kept a day), to pick the one
# that printed a log.
RELEASE_LISTS = CachedKind("release-lists", ("sources/pypi_releases.py", "sources/pypi_index.py"))

# -- the facts ---------------------------------------------------------------------------------

EXTRACTION = ("extract/",)
QUERIES = ("python/",)  # the extractor's queries (views/ holds those of views)

# Each file's symbols (imports, classes, functions), by content; and all of a tree's at once.
SUMMARIES = CachedKind("summaries", (*EXTRACTION, SEALED), QUERIES)
# Each file's calls, assignments, returns and reads, as rows cached unit by unit.
FLOWS = CachedKind(
    "flowrows",
    (*EXTRACTION, "store/rows.py", "store/units.py", "store/parts.py", "store/columns.py"),
    QUERIES,
)
# What each file binds, writes, reads and calls by name, made from its summary and flows.
NAMES = CachedKind(
    "names",
    ("store/names.py", "store/step_ids.py", "store/parts.py", "store/columns.py"),
    made_from=(SUMMARIES, FLOWS),
)
# A tree's files that mention a word, or match a pattern.
GREPS = CachedKind("greps", ("store/facts.py", "sources/snapshot.py", SEALED))
# A tree's words and the files holding each (store/words.py), answering the greps.
WORDS = CachedKind("words", ("store/words.py", SEALED))
# The index's tables derived from a tree's summaries (importers, subclasses).
DERIVED = CachedKind("derived", ("index/index.py",), made_from=(SUMMARIES,))
# The calls found by value that run each function a trace asked for (graph/call_values.py,
# `held_callers`), by snapshot: made by the dataflow graph's and the call rules' code.
HELD = CachedKind(
    "held", ("graph/", "index/", "index/calls/", "store/"), made_from=(SUMMARIES, FLOWS)
)
# Each file's logging calls as templates of the lines they print.
TEMPLATES = CachedKind(
    "templates", ("analyses/explain/templates.py", "extract/parse.py", SEALED), ("python/views/",)
)
# How well each release's logging calls fit a log, by the log's content hash, so the release
# that printed a log is picked again without opening the releases tried.
FITS = CachedKind(
    "release-fits",
    (
        "analyses/explain/fit.py",
        "analyses/explain/match.py",
        "analyses/explain/loose.py",
        "analyses/explain/logread.py",
        "analyses/explain/survey.py",
        "sources/pypi_releases.py",
    ),
    made_from=(RELEASES, TEMPLATES),
)

KINDS = (
    STAT,
    MANIFESTS,
    RELEASES,
    RELEASE_LISTS,
    SUMMARIES,
    FLOWS,
    NAMES,
    GREPS,
    WORDS,
    DERIVED,
    HELD,
    TEMPLATES,
    FITS,
)
