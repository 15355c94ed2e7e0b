"""Release dates read from a PEP 691 page, the log's own dates and the version it names, the
releases tried for a log without dates, and the fits kept per log."""

from __future__ import annotations

import json
from collections.abc import Callable

from tracer.analyses.explain.fit import (
    REFINE_STEPS,
    Fit,
    log_dates,
    named_version,
    newest_best,
    search_undated,
)
from tracer.analyses.explain.logread import read_log
from tracer.analyses.explain.release import nearest
from tracer.sources.pypi_http import Page
from tracer.sources.pypi_releases import Release, keep_fits, kept_fits, page_releases, releases
from tracer.versions import FITS, RELEASE_LISTS


def test_first_upload_of_each_release_file() -> None:
    files = [
        {"filename": "sglang-0.4.6-py3-none-any.whl", "upload-time": "2025-04-27T20:01:02Z"},
        {"filename": "sglang-0.4.6.tar.gz", "upload-time": "2025-04-27T19:59:00.123Z"},
        {"filename": "sglang_router-0.1.0.tar.gz", "upload-time": "2025-04-01T00:00:00Z"},
        {"filename": "sglang-0.4.7.tar.gz"},
    ]
    page = Page(
        "https://pypi.org/simple/sglang/",
        "application/vnd.pypi.simple.v1+json",
        json.dumps({"files": files}).encode(),
    )
    assert page_releases(page, "sglang") == [
        ("0.4.6", "2025-04-27"),
        ("0.4.6", "2025-04-27"),
        ("0.4.7", ""),
    ]
    assert page_releases(Page("u", "text/html", b"<a href=x>x</a>"), "sglang") == []


def test_log_dates() -> None:
    lines = read_log("[2025-05-01 10:00:00 TP0] a\nplain\n[2025-05-03 09:00:00] b\n")
    assert log_dates(lines) == ("2025-05-01", "2025-05-03")
    assert log_dates(read_log("[gpu=0] no date\n")) is None


def test_a_release_list_read_in_the_last_day_comes_from_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path))
    kept = tmp_path / RELEASE_LISTS.name / f"sglang-{RELEASE_LISTS.version}.json"
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps([["0.4.6", "2025-04-27"], ["0.4.7", ""]]))
    # no index is asked: the list kept a minute ago is read back as it was written
    assert releases("SGLang") == [Release("0.4.6", "2025-04-27"), Release("0.4.7", "")]


def test_the_version_a_log_names() -> None:
    def named(text: str) -> str | None:
        return named_version(read_log(text), "sglang")

    assert named("[2025-05-01 10:00:00] sglang==0.4.6.post1 is installed\n") == "0.4.6.post1"
    assert named("INFO SGLang v0.5.9 starting\n") == "0.5.9"
    assert named("[2025-05-01 10:00:00] sglang version: 0.3.3\n") == "0.3.3"
    assert named("/usr/lib/python3/site-packages/sglang-0.2.13.dist-info\n") == "0.2.13"
    assert named("server: sglang, version=0.5.10.dev3\n") == "0.5.10.dev3"
    # another package's version is not the server's
    assert named("Transformers version 5.3.0.dev0 is used for model type glm\n") is None
    assert named("transformers==4.57.1 as a workaround\n") is None


def test_a_release_the_index_lacks_is_taken_as_the_nearest() -> None:
    versions = ["0.4.6", "0.4.6.post1", "0.5.9", "0.5.10"]
    assert nearest("0.4.6.post1", versions) == "0.4.6.post1"
    assert nearest("0.4.6.post7", versions) == "0.4.6.post1"
    assert nearest("0.5.10.dev3", versions) == "0.5.10"
    assert nearest("0.5.9.1", versions) == "0.5.9"
    assert nearest("0.1.0", versions) == "0.4.6"


def scores(table: dict[str, float]) -> tuple[list[str], Callable[[str], Fit], list[str]]:
    """Versions oldest first, a scorer over TABLE, and the versions it was asked for."""
    asked: list[str] = []

    def score(version: str) -> Fit:
        asked.append(version)
        return Fit(version, round(table[version] * 100), 0, 100)

    return list(table), score, asked


def test_an_undated_log_samples_every_series_then_refines_the_best() -> None:
    table = {f"0.1.{n}": 0.4 for n in range(10)}
    table |= {f"0.2.{n}": (0.4 if n < 4 else 1.0 if n < 14 else 0.0) for n in range(18)}
    table |= {f"0.3.{n}": 0.0 for n in range(12)}
    versions, score, asked = scores(table)
    fits = search_undated(versions, score)
    assert asked[:6] == ["0.1.4", "0.1.9", "0.2.8", "0.2.17", "0.3.5", "0.3.11"]
    # the last of the series' releases that print the log, found by bisection, few asked
    assert newest_best(versions, fits) == "0.2.13"
    assert len(asked) == len(set(asked)) <= 6 + REFINE_STEPS


def test_an_undated_log_looks_older_while_a_better_fit_may_be_there() -> None:
    table = {f"0.1.{n}": 0.1 for n in range(5)}
    table |= {f"0.2.{n}": [0.2, 0.9, 0.5, 0.3, 0.3, 0.3, 0.2][n] for n in range(7)}
    versions, score, _ = scores(table)
    assert newest_best(versions, search_undated(versions, score)) == "0.2.1"


def test_fits_kept_for_a_log_are_read_back(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path))
    assert kept_fits("log one") == {}
    keep_fits("log one", {"0.2.13": (41, 0, 41)})
    keep_fits("log one", {"0.2.12": (40, 1, 41)})
    assert kept_fits("log one") == {"0.2.13": (41, 0, 41), "0.2.12": (40, 1, 41)}
    assert kept_fits("log two") == {}
    assert list((tmp_path / FITS.name).iterdir())[0].name.endswith(f"-{FITS.version}.json")
