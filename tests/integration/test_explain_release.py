"""`sgtrace explain --log FILE` without SOURCE, on the real logs in ../shared/logs: the release
whose ServerArgs prints exactly the fields the log's settings line shows (a build between two
releases, or newer than every one, said to be so); else the version the log names; else the
release whose logging calls fit the log best, among those uploaded last before the log's
dates, or, for a log without dates, samples of every minor series refined within the best
one. The first line says what decided it; --json has it under `release`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.logbuild import REAL_LOGS
from tracer.cli.main import main


@pytest.mark.parametrize(
    ("log", "series"),
    [
        ("sglang-0.4.2.post3-deepseek-v2-lite-1xA40-48Q-issue3451", "0.4.2.post3,"),
        ("sglang-0.4.6-qwen3-8b-tp1", "0.4.6,"),
        ("sglang-main-2025-11-llama31-8b-l40s-tp1", "0.5."),
    ],
)
def test_the_release_is_chosen_from_the_log(
    log: str, series: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "--log", str(REAL_LOGS / f"{log}.log"), "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"Release: pypi:sglang=={series}"), first
    assert ", decided by " in first, first


@pytest.mark.parametrize(
    ("log", "series"),
    [("sglang-0.1.17-llama3-8b-4xA10G-tp4-issue565", "0.1.")],
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


@pytest.mark.parametrize(
    ("log", "version", "decided"),
    [
        (  # a field removed in a later post-release: found beside the bisection's boundary
            "sglang-0.4.3.post4-qwq32b-4xL4-tp4",
            "0.4.3.post4",
            "its ServerArgs(...) of 107 fields are exactly those of 0.4.3.post4",
        ),
        (  # a ROCm image built after 0.5.8.post1, before 0.5.9 (which a fit took before)
            "sglang-0.5.8.post1-rocm-glm5-fp8-8xMI355X-tp8-kvfp8",
            "0.5.8.post1",
            "its ServerArgs(...) of 327 fields has 3 fields 0.5.8.post1 lacks "
            "(extra_metric_labels, attn_cp_size, moe_dp_size) and lacks 1 field of 0.5.9's "
            "(mamba_backend): a build made between the two, explained with 0.5.8.post1, the "
            "release it was made after",
        ),
        (  # a main-branch build of late May 2025
            "sglang-2025-05-llama3-8b-1xH200-pd-prefill-issue6753",
            "0.4.6.post5",
            "its ServerArgs(...) of 145 fields has 2 fields 0.4.6.post5 lacks "
            "(enable_two_batch_overlap, eplb_algorithm): a build newer than every release "
            "uploaded before 2025-05-29",
        ),
        (  # a log without dates: the fields alone, the newer of two releases that print them
            "sglang-0.2.13-mixtral-8x7b-8xL4-tp8-issue1191",
            "0.2.13",
            "its ServerArgs(...) of 47 fields are exactly those of 0.2.12 to 0.2.13",
        ),
        (  # the `blackwell` image of June 2025
            "sglang-blackwell-image-2025-06-bge-m3-embedding-issue7590",
            "0.4.8.post1",
            "its ServerArgs(...) of 161 fields are exactly those of 0.4.8.post1",
        ),
    ],
)
def test_the_settings_a_log_prints_name_its_release(
    log: str, version: str, decided: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["explain", "--log", str(REAL_LOGS / f"{log}.log"), "--json", "--quiet"])
    captured = capsys.readouterr()
    assert code in (0, 1) and captured.err == "", captured.err
    release = json.loads(captured.out)["release"]
    assert release["source"] == f"pypi:sglang=={version}"
    assert release["decided_by"][0] == decided


def test_the_json_says_the_choice_and_stderr_tells_it(capsys: pytest.CaptureFixture[str]) -> None:
    log = str(REAL_LOGS / "sglang-latest-2025-02-04-r1distill-qwen7b-1xRTX3090.log")
    main(["explain", "--log", log, "--json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)  # stdout is the document alone
    assert document["schema"] == "sgtrace.explain/2"
    assert document["source"] == "pypi:sglang==0.4.2.post1"
    assert document["release"]["decided_by"] == [
        "its ServerArgs(...) of 94 fields are exactly those of 0.4.2.post1"
    ]
    assert captured.err.startswith("Release: pypi:sglang==0.4.2.post1, decided by its ServerArgs")


def test_bad_input_still_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = REAL_LOGS / "sglang-0.4.6-qwen3-8b-tp1.log"
    assert main(["explain", "--log", str(tmp_path / "none.log")]) == 2
    assert "cannot read the log" in capsys.readouterr().err
    code = main(["explain", "pypi:sglang==0.4.6", "--release", "auto", "--log", str(log)])
    assert code == 2 and "give SOURCE or --release auto, not both" in capsys.readouterr().err
