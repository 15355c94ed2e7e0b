"""`sgtrace explain --log FILE` without SOURCE: the release whose logging calls fit the real
logs in ../shared/logs best, among the releases on the index uploaded last before the log's
dates (a log from a build not on PyPI: a release of the same minor series); for a log without
dates, samples of every minor series refined within the best one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.logbuild import REAL_LOGS
from tracer.cli.main import main


@pytest.mark.parametrize(
    ("log", "series"),
    [
        ("sglang-0.4.2.post3-deepseek-v2-lite-1xA40-48Q-issue3451", "0.4.2.post3"),
        ("sglang-0.4.6-qwen3-8b-tp1", "0.4.6"),
        ("sglang-main-2025-11-llama31-8b-l40s-tp1", "0.5."),
    ],
)
def test_the_release_is_chosen_from_the_log(
    log: str, series: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "--log", str(REAL_LOGS / f"{log}.log"), "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"Release: pypi:sglang=={series}"), first
    assert "the best fit (" in first and " opened now, " in first, first


@pytest.mark.parametrize(
    ("log", "series"),
    [
        ("sglang-0.2.13-mixtral-8x7b-8xL4-tp8-issue1191", "0.2.13"),
        ("sglang-0.1.17-llama3-8b-4xA10G-tp4-issue565", "0.1."),
    ],
)
def test_a_log_without_dates_is_matched_across_the_whole_history(
    log: str, series: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(REAL_LOGS / f"{log}.log")
    assert main(["explain", "--log", path, "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"Release: pypi:sglang=={series}"), first
    assert " opened now, " in first and "0.5.23 0%" in first, first
    # a second run reads every fit back: it opens only the release it explains with
    assert main(["explain", "--log", path, "--quiet"]) == 0
    again = capsys.readouterr().out.splitlines()[0]
    assert again.split("; tried ")[0] == first.split("; tried ")[0]
    assert "(0 opened now, " in again, again


def test_bad_input_still_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = REAL_LOGS / "sglang-0.4.6-qwen3-8b-tp1.log"
    assert main(["explain", "--log", str(tmp_path / "none.log")]) == 2
    assert "cannot read the log" in capsys.readouterr().err
    code = main(["explain", "pypi:sglang==0.4.6", "--release", "auto", "--log", str(log)])
    assert code == 2 and "give SOURCE or --release auto, not both" in capsys.readouterr().err
