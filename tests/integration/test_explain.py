"""`sgtrace explain` on real releases: logs built from each release's own logging templates
with chosen numbers, and real log excerpts published in SGLang's issue tracker."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.logbuild import REAL_LOGS, build_log
from tracer.analyses.explain.check import Verdict, verdict
from tracer.analyses.explain.explain import Explanation, explain
from tracer.cli.main import main
from tracer.session import Session
from tracer.views.explain_report import explanation_text

LOGS = REAL_LOGS
SINKS = ("max_total_num_tokens",)


def bound(e: Explanation) -> dict[str, tuple[float | None, str]]:
    return {name: (b.value, b.how) for name, b in e.bindings.items()}


def first_formula(e: Explanation) -> tuple[str, str, float | None]:
    ev = e.evaluations[0]
    return ev.expression, ev.shown, ev.value


# -- logs built from each release's own templates -----------------------------------------


def test_046_formula_in_model_runner(release: Callable[[str], Session]) -> None:
    session = release("0.4.6")
    log = build_log(
        session,
        [
            ("", "server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, tp_size=1)", []),
            ("TP0", "Load weight begin. avail mem=", [94.02]),
            ("TP0", "Load weight end. type=", ["LlamaForCausalLM", "torch.bfloat16", 21.71, 72.31]),
            ("TP0", "KV Cache is allocated. #tokens: {}, K size: ", [170860, 5.21, 5.21]),
            ("TP0", "Memory pool end. avail mem=", [11.05]),
        ],
    )
    e = explain(session, log, "mem_fraction_static", SINKS)
    assert first_formula(e) == (
        "available_gpu_memory - total_gpu_memory * (1 - self.mem_fraction_static)",
        "21.71 - 94.02 * (1 - 0.88)",
        pytest.approx(10.4276),
    )
    assert bound(e) == {
        "available_gpu_memory": (21.71, "measured"),
        "total_gpu_memory": (94.02, "measured"),
        "self.mem_fraction_static": (0.88, "logged-args"),
        "cell_size": (pytest.approx(65530.25, abs=0.01), "solved"),
    }
    assert [ev.step.kind for ev in e.evaluations] == [
        "formula",
        "local_assign",
        "return",
        "attr_write",
    ]
    assert e.result == 170860
    assert e.evaluations[1].shown == "int(10.4276 * (1 << 30) // 65530.2479)"
    assert [o.value for o in e.observed] == [170860]
    assert "before 'Load weight begin. avail mem=' was logged" in explanation_text(e)


def test_059_formula_in_the_kv_cache_mixin(release: Callable[[str], Session]) -> None:
    session = release("0.5.9")
    log = build_log(
        session,
        [
            ("", "server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, tp_size=1)", []),
            ("TP0", "Load weight begin. avail mem=", [94.02]),
            (
                "TP0",
                "Load weight end.{}avail mem=",
                [12.5, "Llama", "torch.bfloat16", 21.71, 72.31],
            ),
            ("TP0", "KV Cache is allocated. #tokens: {}, K size: ", [170860, 5.21, 5.21]),
            ("TP0", "Memory pool end. avail mem=", [11.05]),
        ],
    )
    e = explain(session, log, "mem_fraction_static", SINKS, tokens=200000)
    assert e.evaluations[0].step.file.endswith("model_runner_kv_cache_mixin.py")
    assert first_formula(e)[1:] == ("21.71 - 94.02 * (1 - 0.88)", pytest.approx(10.4276))
    assert bound(e)["total_gpu_memory"] == (94.02, "measured")
    assert bound(e)["available_gpu_memory"] == (21.71, "measured")
    assert e.result == 170860
    tokens, free = e.what_if
    assert tokens.result >= 200000 and tokens.value == pytest.approx(0.899, abs=5e-4)
    # 11.05 GiB stay free after the pool: 11.05 / 94.02 more of the measured memory.
    assert free.value == pytest.approx(0.88 + 11.05 / 94.02, abs=1e-6)


def test_0512_renamed_and_split_across_ranks(release: Callable[[str], Session]) -> None:
    session = release("0.5.12")
    log = build_log(
        session,
        [
            ("", "server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, tp_size=2)", []),
            ("TP0", "Load weight begin. avail mem=", [94.02]),
            ("TP1", "Load weight begin. avail mem=", [93.90]),
            (
                "TP1",
                "Load weight end.{}avail mem=",
                [12.5, "Llama", "torch.bfloat16", 21.60, 72.30],
            ),
            (
                "TP0",
                "Load weight end.{}avail mem=",
                [12.5, "Llama", "torch.bfloat16", 21.71, 72.31],
            ),
            ("TP0", "KV Cache is allocated. #tokens: {}, K size: ", [170860, 5.21, 5.21]),
            ("TP1", "KV Cache is allocated. #tokens: {}, K size: ", [170860, 5.21, 5.21]),
            ("TP0", "Memory pool end. avail mem=", [11.05]),
        ],
    )
    e = explain(session, log, "mem_fraction_static", SINKS)
    assert e.ranks == ("TP0", "TP1") and e.rank == "TP0"
    assert first_formula(e)[0] == (
        "post_model_load_memory - pre_model_load_memory * (1 - self.mem_fraction_static)"
    )
    pre = e.bindings["pre_model_load_memory"]
    # The code takes the minimum of the measured free memory across ranks.
    assert (pre.value, dict(pre.per_rank)) == (93.9, {"TP0": 94.02, "TP1": 93.9})
    post = e.bindings["post_model_load_memory"]
    assert (post.value, dict(post.per_rank)) == (21.6, {"TP0": 21.71, "TP1": 21.6})
    assert first_formula(e)[1:] == ("21.6 - 93.9 * (1 - 0.88)", pytest.approx(10.332))
    assert e.result == 170860
    assert e.evaluations[-1].step.code == "self.max_total_num_tokens = config.max_total_num_tokens"


# -- real logs from SGLang's issue tracker ---------------------------------------------------


def test_real_log_046_derives_the_free_memory_before_loading(
    release: Callable[[str], Session],
) -> None:
    # ../shared/logs/sglang-0.4.6-qwen3-8b-tp1.log: the "Load weight begin" line is not in
    # the excerpt; the free memory before loading is avail + usage of "Load weight end".
    session = release("0.4.6")
    log = (LOGS / "sglang-0.4.6-qwen3-8b-tp1.log").read_text()
    e = explain(session, log, "mem_fraction_static", SINKS)
    assert bound(e)["total_gpu_memory"] == (78.84, "derived")
    assert bound(e)["available_gpu_memory"] == (63.49, "measured")
    assert bound(e)["self.mem_fraction_static"] == (0.9, "flag")
    assert first_formula(e)[1:] == ("63.49 - 78.84 * (1 - 0.9)", pytest.approx(55.606))
    assert e.result == 404890
    # K size + V size as logged, against rest_memory.
    assert "27.8 + 27.8 = 55.6, against rest_memory = 55.606" in explanation_text(e)


def test_real_log_two_ranks_interleaved(release: Callable[[str], Session]) -> None:
    # ../shared/logs/sglang-main-2025-11-qwen3-30b-a3b-fp8-tp2.log: TP0 and TP1 interleaved,
    # no --mem-fraction-static on the command line (given here with --set).
    session = release("0.5.6")
    log = (LOGS / "sglang-main-2025-11-qwen3-30b-a3b-fp8-tp2.log").read_text()
    e = explain(session, log, "mem_fraction_static", SINKS, given={"mem_fraction_static": 0.85})
    assert e.ranks == ("TP0", "TP1")
    total = e.bindings["total_gpu_memory"]
    assert total.how == "derived" and dict(total.per_rank) == {"TP0": 93.69, "TP1": 93.78}
    assert total.value == 93.69
    assert bound(e)["self.mem_fraction_static"] == (0.85, "given")
    available = e.bindings["available_gpu_memory"]
    assert (available.value, dict(available.per_rank)) == (79.09, {"TP0": 79.09, "TP1": 79.18})
    assert first_formula(e)[1:] == ("79.09 - 93.69 * (1 - 0.85)", pytest.approx(65.0365))
    assert [o.value for o in e.observed][:1] == [1443316] == [e.result]


def test_real_log_l40s_matches_the_logged_tokens(release: Callable[[str], Session]) -> None:
    # ../shared/logs/sglang-main-2025-11-llama31-8b-l40s-tp1.log: a main build of November
    # 2025, read with 0.5.6; its server_args line (mem_fraction_static=0.851) is from the
    # second run of the same PR on the same machine (see the file's header).
    session = release("0.5.6")
    log = (LOGS / "sglang-main-2025-11-llama31-8b-l40s-tp1.log").read_text()
    e = explain(session, log, "mem_fraction_static", SINKS)
    assert bound(e)["total_gpu_memory"] == (44.0, "measured")
    assert bound(e)["available_gpu_memory"] == (28.91, "measured")
    assert bound(e)["self.mem_fraction_static"] == (0.851, "logged-args")
    assert first_formula(e)[1:] == ("28.91 - 44 * (1 - 0.851)", pytest.approx(22.354))
    assert e.result == 183133 == e.observed[0].value


# -- the command ---------------------------------------------------------------------------


def test_cli_json_and_bad_input(
    release: Callable[[str], Session], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release("0.4.6")  # downloaded and indexed into the test cache
    log = LOGS / "sglang-0.4.6-qwen3-8b-tp1.log"
    assert main(["explain", "pypi:sglang==0.4.6", "--log", str(log), "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == 404890
    assert {b["name"]: b["how"] for b in out["bindings"]}["total_gpu_memory"] == "derived"
    assert main(["explain", "pypi:sglang==0.4.6", "--log", str(tmp_path / "none.log")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sgtrace: error: cannot read the log")
    (tmp_path / "empty.log").write_text("")
    assert main(["explain", "pypi:sglang==0.4.6", "--log", str(tmp_path / "empty.log")]) == 2
    assert "the log is empty" in capsys.readouterr().err
    code = main(["explain", "pypi:sglang==0.4.6", "--log", str(log), "--set", "x"])
    assert code == 2 and "--set 'x' is not NAME=NUMBER" in capsys.readouterr().err


def test_the_last_of_several_server_starts(release: Callable[[str], Session]) -> None:
    session = release("0.5.9")

    def start(before: float, after: float, tokens: int) -> list[tuple[str, str, list[object]]]:
        return [
            ("", "server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, tp_size=1)", []),
            ("TP0", "Load weight begin. avail mem=", [before]),
            ("TP0", "Load weight end.{}avail mem=", [12.5, "Llama", "bf16", after, before - after]),
            ("TP0", "KV Cache is allocated. #tokens: {}, K size: ", [tokens, 5.21, 5.21]),
            ("TP0", "Memory pool end. avail mem=", [11.05]),
        ]

    log = build_log(session, start(90.0, 20.0, 150000) + start(94.02, 21.71, 170860))
    e = explain(session, log, "mem_fraction_static", SINKS)
    assert first_formula(e)[1] == "21.71 - 94.02 * (1 - 0.88)"
    assert e.result == 170860
    assert (
        "the log holds 2 server starts (each begins with ServerArgs(...) at log lines 1, 6); "
        "start 2 (log lines 6 to the end) is explained, with its own lines only: --start N "
        "explains another"
    ) in e.notes
    # The first start, with its own lines only.
    e = explain(session, log, "mem_fraction_static", SINKS, start=1)
    assert (e.start, e.starts) == (1, 2)
    assert first_formula(e)[1] == "20 - 90 * (1 - 0.88)"
    assert e.observed[0].value == 150000 == e.result


def test_cli_text_has_each_heading_once(
    release: Callable[[str], Session], capsys: pytest.CaptureFixture[str]
) -> None:
    release("0.4.6")
    log = LOGS / "sglang-0.4.6-qwen3-8b-tp1.log"
    assert main(["explain", "pypi:sglang==0.4.6", "--log", str(log), "--quiet"]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line and not line.startswith((" ", "\t"))]
    assert headings[1] == (
        "Reproduces the log: its sizes, 27.8 + 27.8 = 55.6, against rest_memory = 55.606 (0.011% "
        "apart; cell_size solved from the logged 404890 (log line 7), so the count agrees by "
        "construction)"
    )
    assert [h.split(" (")[0].split(":")[0] for h in headings] == [
        "pypi",
        "Reproduces the log",
        "The formula",
        "What the log reports",
        "Where each value comes from",
        "The reserve",
        "Note",  # the capture line matched loosely (another build of the call)
        "Note",
        "Note",
        "Note",
        "Free memory as logged",
        "What would change it",
    ]
    values = out.split("\nWhere each value comes from:\n")[1].split("\n\n")[0].splitlines()
    assert [line.split(" = ")[0].split(" ≈ ")[0].strip() for line in values] == [
        "available_gpu_memory",
        "total_gpu_memory",
        "self.mem_fraction_static",
        "cell_size",
    ]


def test_a_cap_that_binds_is_named_not_solved_around(release: Callable[[str], Session]) -> None:
    # Started with max_total_tokens=50000: the pool holds the cap, not what the memory allows,
    # so no cell size is solved to force the formula onto the logged count.
    session = release("0.5.9")
    settings = "model_path='m', mem_fraction_static=0.88, tp_size=1, max_total_tokens=50000"
    log = build_log(
        session,
        [
            ("", f"server_args=ServerArgs({settings})", []),
            ("TP0", "Load weight begin. avail mem=", [94.02]),
            ("TP0", "Load weight end.{}avail mem=", [12.5, "Llama", "bf16", 21.71, 72.31]),
            ("TP0", "KV Cache is allocated. #tokens: {}, K size: ", [50000, 1.52, 1.52]),
            ("TP0", "Memory pool end. avail mem=", [18.0]),
        ],
    )
    e = explain(session, log, "mem_fraction_static", SINKS)
    assert e.cap is not None and (e.cap.name, e.cap.value, e.cap.line) == (
        "ServerArgs.max_total_tokens",
        50000,
        1,
    )
    assert bound(e)["cell_size"] == (None, "unbound")
    assert verdict(e) == Verdict(
        True,
        "Reproduces the log: the count it reports, 50000 (log line 4 (TP0)), is the cap "
        "ServerArgs.max_total_tokens = 50000 (log line 1); the formula alone gives no number "
        "(cell_size is not in the log)",
    )
    assert (
        "the logged count 50000 is ServerArgs.max_total_tokens = 50000 (log line 1): the cap "
        "binds, so nothing is solved from the count; the formula alone gives no number "
        "(cell_size is not in the log)"
    ) in e.notes
