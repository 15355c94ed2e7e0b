"""Release dates read from a PEP 691 page, and the log's own dates."""

from __future__ import annotations

import json

from tracer.analyses.explain.fit import log_dates
from tracer.analyses.explain.logread import read_log
from tracer.sources.pypi_http import Page
from tracer.sources.pypi_releases import Release, page_releases, releases
from tracer.versions import RELEASE_LISTS


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
