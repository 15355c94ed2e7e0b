"""Which release printed a log: a record the log prints whole is a fingerprint of the releases
whose class has exactly its fields, found by bisection; a build between two releases, or newer
than every one, is said to be so. Releases here are plain tables of fields and fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracer.analyses.explain.fingerprint import (
    Printed,
    declared_fields,
    difference,
    keywords,
    printed_records,
)
from tracer.analyses.explain.fit import Fit
from tracer.analyses.explain.logread import read_log
from tracer.analyses.explain.release import Candidate, choose_release
from tracer.sources.snapshot import local_snapshot
from tracer.store.cache import FactCache
from tracer.store.facts import Facts

BASE = [f"f{i}" for i in range(10)]
# Each release's Settings fields: one added a release, one (`old`) removed in 1.4.
RELEASES = {
    "1.0": [*BASE, "old"],
    "1.1": [*BASE, "old", "a"],
    "1.2": [*BASE, "old", "a", "b"],
    "1.3": [*BASE, "old", "a", "b", "c"],
    "1.3.post1": [*BASE, "old", "a", "b", "c"],
    "1.4": [*BASE, "a", "b", "c", "d"],
    "1.5": [*BASE, "a", "b", "c", "d", "e"],
}


def settings_line(fields: list[str]) -> str:
    shown = ", ".join(f"{f}={i!r}" if i % 2 else f"{f}='x,(y)'" for i, f in enumerate(fields))
    return f"[2025-01-02 10:00:00] server_args=Settings({shown})"


class Releases:
    """What the choice asks of releases, answered from RELEASES, counting what is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.fitted: list[str] = []

    def fields(self, version: str, name: str) -> list[tuple[str, ...]]:
        self.asked.append(version)
        return [tuple(RELEASES[version])] if name == "Settings" else []

    def fit(self, version: str) -> Fit:
        self.fitted.append(version)
        return Fit(f"pypi:pkg=={version}", 9, 0, 10)


def choose(lines: list[str], known: list[str] | None = None):
    releases = Releases()
    log = read_log("\n".join(lines) + "\n")
    candidates = [Candidate(v, "2025-01-01") for v in known or RELEASES]
    choice = choose_release(log, "pkg", candidates, releases.fit, releases.fields, 0.6)
    return choice, releases


def test_a_printed_record_reads_its_keywords_in_order() -> None:
    text = "Settings(a='x, y', b=(1, 2), c={'k': 'v'}, d=\"q\\\"(\", e=None)"
    assert keywords(text, len("Settings(")) == ("a", "b", "c", "d", "e")
    assert keywords(text[:-5], len("Settings(")) is None  # cut short: not a fingerprint
    lines = read_log(settings_line(BASE) + "\nshort=Other(a=1, b=2)\n")
    assert printed_records(lines) == [Printed("Settings", tuple(BASE))]


def test_the_release_with_exactly_those_fields_is_found_by_bisection() -> None:
    choice, releases = choose([settings_line(RELEASES["1.2"])])
    assert choice.version == "1.2"
    assert choice.decided == ["its Settings(...) of 13 fields are exactly those of 1.2"]
    assert len(releases.asked) <= 5 < len(RELEASES)


def test_releases_printing_the_same_fields_go_to_the_newest_fit() -> None:
    choice, _ = choose([settings_line(RELEASES["1.3"])])
    assert choice.version == "1.3.post1"
    assert (
        choice.decided[0] == "its Settings(...) of 14 fields are exactly those of 1.3 to 1.3.post1"
    )


def test_a_field_removed_later_does_not_hide_the_release() -> None:
    choice, _ = choose([settings_line(RELEASES["1.4"])])
    assert choice.version == "1.4"


def test_a_build_between_two_releases_is_explained_with_the_one_it_was_made_after() -> None:
    choice, _ = choose([settings_line([*RELEASES["1.1"], "b_draft"])])
    assert (choice.version, choice.between) == ("1.1", ("1.1", "1.2"))
    assert choice.decided == [
        "its Settings(...) of 13 fields has 1 field 1.1 lacks (b_draft) and lacks 1 field of "
        "1.2's (b): a build made between the two, explained with 1.1, the release it was made after"
    ]


def test_a_build_newer_than_every_release_is_said_to_be_so() -> None:
    choice, _ = choose([settings_line([*RELEASES["1.5"], "f", "g", "h", "i"])])
    assert (choice.version, choice.newer) == ("1.5", True)
    assert choice.decided == [
        "its Settings(...) of 19 fields has 4 fields 1.5 lacks (f, g, h and 1 more): a build "
        "newer than every release"
    ]


def test_without_a_record_the_version_the_log_names_decides() -> None:
    choice, releases = choose(["[2025-01-02 10:00:00] pkg 1.3 starting"])
    assert (choice.version, choice.decided) == ("1.3", ["the log names 1.3"])
    assert releases.asked == []


def test_the_fields_a_class_prints_leave_out_class_variables_and_repr_false(
    tmp_path: Path,
) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "settings.py").write_text(
        "from dataclasses import dataclass, field\n"
        "from typing import ClassVar\n\n"
        "@dataclass\n"
        "class Settings:\n"
        "    a: int = 1\n"
        "    kind: ClassVar[str] = 'x'\n"
        "    secret: str = field(default='', repr=False)\n"
        "    b: float = 0.5\n"
    )
    facts = Facts(local_snapshot(root), FactCache(tmp_path / "cache"))
    assert declared_fields(facts, "Settings") == [("a", "b")]
    found = difference(Printed("Settings", ("a", "b", "c")), declared_fields(facts, "Settings"))
    assert found is not None and (found.missing, found.extra) == (("c",), ())
    assert declared_fields(facts, "Missing") == []


@pytest.mark.parametrize("names", [["1.0"], ["1.0", "1.1"]])
def test_a_log_older_than_every_release_takes_the_oldest(names: list[str]) -> None:
    choice, _ = choose([settings_line(BASE)], known=names)
    assert choice.version == "1.0"


def test_a_version_newer_than_every_release_is_said_to_be_so() -> None:
    choice, _ = choose(["[2025-01-02 10:00:00] pkg 2.0 starting"])
    assert (choice.version, choice.newer) == ("1.5", True)
    assert choice.decided == [
        "the log names 2.0, newer than every release on the index; the nearest, 1.5"
    ]
