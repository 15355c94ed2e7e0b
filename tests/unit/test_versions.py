"""One version scheme: a cached kind's version is a hash of what produces it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tracer.versions import FLOWS, HELD, KINDS, NAMES, PACKAGE, SUMMARIES, CachedKind


def test_every_kind_names_files_that_exist_and_a_version_of_its_own() -> None:
    for kind in KINDS:
        sources = kind.sources()
        assert sources and all(source.is_file() for source in sources), kind.name
    versions = [kind.version for kind in KINDS]
    assert len(set(versions)) == len(KINDS)
    # The extractor's queries are part of what produces summaries and flows.
    assert {"calls.scm", "symbols.py"} <= {s.name for s in SUMMARIES.sources()}
    assert {"rows.py", "units.py", "flows.py"} <= {s.name for s in FLOWS.sources()}


def test_a_version_changes_with_the_files_and_the_kinds_it_is_made_from() -> None:
    fewer = CachedKind(SUMMARIES.name, ("extract/parse.py",), SUMMARIES.queries)
    assert fewer.version != SUMMARIES.version
    assert CachedKind(SUMMARIES.name, SUMMARIES.modules, SUMMARIES.queries).version == (
        SUMMARIES.version
    )
    # NAMES is made from SUMMARIES and FLOWS: another version of one is another of NAMES.
    assert replace(NAMES, made_from=(fewer, FLOWS)).version != NAMES.version


def test_a_kind_naming_a_folder_names_the_code_in_its_subfolders_too() -> None:
    """A folder stands for its own files only: the code of a folder inside it is named as
    well, else a change there keeps the kind's old entries (the calls found by value were
    kept when the call graph's follower, index/calls/, changed)."""
    for kind in KINDS:
        named = {PACKAGE / m.rstrip("/") for m in kind.modules}
        for folder in (PACKAGE / m.rstrip("/") for m in kind.modules if m.endswith("/")):
            for inner in Path(folder).iterdir():
                if inner.is_dir() and any(inner.glob("*.py")):
                    assert inner in named, (kind.name, str(inner))
    assert "__init__.py" in {s.name for s in HELD.sources() if s.parent.name == "calls"}
