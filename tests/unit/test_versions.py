"""One version scheme: a cached kind's version is a hash of what produces it."""

from __future__ import annotations

from dataclasses import replace

from tracer.versions import FLOWS, KINDS, NAMES, SUMMARIES, CachedKind


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
