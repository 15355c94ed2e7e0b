"""`sgtrace explain --log FILE` picking the release: a tie between post-releases of one version
goes to the newest of them that could have printed the log (uploaded by the log's dates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.logbuild import REAL_LOGS
from tracer.analyses.explain.fit import Fit
from tracer.analyses.explain.release import later_posts
from tracer.cli.main import main

VERSIONS = ["0.4.6", "0.4.6.post1", "0.4.6.post2", "0.4.6.post3", "0.4.6.post4", "0.4.7"]


def fit_of(scores: dict[str, int]) -> object:
    return lambda version: Fit(f"pypi:sglang=={version}", scores[version], 0, 7)


def test_a_tie_between_post_releases_tries_the_newer_ones() -> None:
    tried = {v: Fit(f"pypi:sglang=={v}", 6, 0, 7) for v in ("0.4.6.post1", "0.4.6.post2")}
    more = later_posts("0.4.6.post2", VERSIONS, tried, fit_of({"0.4.6.post3": 6, "0.4.6.post4": 5}))
    assert {v: f.exact for v, f in more.items()} == {"0.4.6.post3": 6, "0.4.6.post4": 5}


def test_no_tie_tries_nothing_more() -> None:
    tried = {"0.4.6.post1": Fit("a", 5, 0, 7), "0.4.6.post2": Fit("b", 6, 0, 7)}
    assert later_posts("0.4.6.post2", VERSIONS, tried, fit_of({})) == {}


def test_a_post_release_uploaded_after_the_log_is_not_chosen(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Dated 2025-05-14: 0.4.6.post2..post4 print 6 of its 7 server lines alike; 0.4.6.post5,
    # uploaded on 2025-05-24, cannot have printed it. (Without the lines that name 0.4.6,
    # which would decide it.)
    text = (REAL_LOGS / "sglang-0.4.6-qwen3-8b-tp1.log").read_text()
    log = tmp_path / "server.log"
    log.write_text("".join(line for line in text.splitlines(True) if not line.startswith("#")))
    assert main(["explain", "--log", str(log), "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(
        "Release: pypi:sglang==0.4.6.post4, decided by the best fit of the releases uploaded "
        "last before 2025-05-14 (fit 86%); tried 3 ("
    ), first
    assert first.endswith("0.4.6.post2 86%, 0.4.6.post3 86%, 0.4.6.post4 86%"), first
