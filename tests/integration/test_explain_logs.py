"""`sgtrace explain` on the startup logs SGLang users posted (`../shared/logs/`, read there at
test time; provenance in its PROVENANCE.json): one case per log, each explained with the release
that printed it (the release the log names, else the last one on PyPI before the log's date).
Each case says which values the log binds, and either the number the explanation reproduces
(within 2% of what the log reports) or the exact line that names what cannot be known."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from tests.integration.logbuild import REAL_LOGS
from tracer.analyses.explain.check import verdict
from tracer.analyses.explain.explain import Explanation, explain
from tracer.cli.main import main
from tracer.session import Session

PARAM = "mem_fraction_static"
SINKS = ("max_total_num_tokens",)
CLOSE = 0.02  # the explanation reproduces a logged number within this fraction of it


@dataclass(frozen=True)
class Case:
    log: str
    release: str
    inputs: dict[str, tuple[float | None, str]]  # by the formula's name: (value, how bound)
    tokens: int | None = None  # the token count the log reports, reproduced
    kv_gib: float | None = None  # the KV size the log reports (K + V), against the formula's
    unknown: dict[str, str] = field(default_factory=dict)  # name -> why it is not known
    computed: dict[str, str] = field(default_factory=dict)  # name -> how the code computes it
    notes: tuple[str, ...] = ()  # notes the explanation gives, among others
    ranks: int = 1  # the ranks of its one start
    parts: str = ""  # where the explanation parts from the log (its first line); "": it does not


# What explain says of mem_fraction_static when the log shows neither a ServerArgs(...) line nor
# the flag: the release's own default computation, read from its code and evaluated with what
# the log shows (its command line, the card's capacity or a lower bound of it).
AUTO_0_3_3 = (
    "ServerArgs.mem_fraction_static is not in the log: no ServerArgs(...) line, the command "
    "line (log line 1) does not set --mem-fraction-static; the code's own default computation "
    "gives 0.88: self.mem_fraction_static = 0.88 in ServerArgs.__post_init__ "
    "(server_args.py:135), on the branch self.mem_fraction_static is None true "
    "(server_args.py:125), self.tp_size >= 2 false (server_args.py:132); from the code's "
    "defaults tp_size = 1"
)

LOWER_BOUND = (
    "(MiB, as the code compares it): at least the first free memory the log reports, {} GB "
    "before anything was loaded ({}); the log does not print the capacity)"
)
AUTO_0_5_6_POST2 = (
    "ServerArgs.mem_fraction_static is not in the log: no ServerArgs(...) line, the command "
    "line (log line 1) does not set --mem-fraction-static; the code's own default computation "
    "gives 0.763: self.mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3) if "
    "gpu_mem is not None else 0.88 in ServerArgs._handle_gpu_memory_settings "
    "(server_args.py:886), on the branch gpu_mem is not None true (server_args.py:752), "
    "gpu_mem < 20 * 1024 true (server_args.py:753), self.chunked_prefill_size is None true "
    "(server_args.py:756), self.cuda_graph_max_bs is None true (server_args.py:758), "
    "self.mem_fraction_static is None true (server_args.py:848); from gpu_mem = 15697.92 "
    "(gpu_mem = get_device_memory_capacity() at server_args.py:633, the card's memory capacity "
    + LOWER_BOUND.format("15.33", "'Load weight begin. avail mem=', log line 11 (TP0)")
    + "; the code's defaults pp_size = 1, tp_size = 1; model_config.is_multimodal "
    "(server_args.py:895) taken as false: model_config.is_multimodal is not in the log"
)

AUTO_0_5_6 = (
    "ServerArgs.mem_fraction_static is not in the log: no ServerArgs(...) line, the command "
    "line (log line 5) does not set --mem-fraction-static; the code's own default computation "
    "gives 0.848: self.mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3) if "
    "gpu_mem is not None else 0.88 in ServerArgs._handle_gpu_memory_settings "
    "(server_args.py:859), on the branch gpu_mem is not None true (server_args.py:725), "
    "gpu_mem < 160 * 1024 true (server_args.py:786), self.chunked_prefill_size is None true "
    "(server_args.py:789), self.cuda_graph_max_bs is None true (server_args.py:791), "
    "self.tp_size < 4 true (server_args.py:792), self.mem_fraction_static is None true "
    "(server_args.py:821); from enable_piecewise_cuda_graph = True "
    "(--enable-piecewise-cuda-graph on the command line (log line 5)); gpu_mem = 95938.56 "
    "(gpu_mem = get_device_memory_capacity() at server_args.py:610, the card's memory capacity "
    + LOWER_BOUND.format(
        "93.69",
        "'Load weight end. type=', log line 7 (TP0), derived as after_avail_memory + "
        "self.weight_load_mem_usage = 79.09 + 14.6",
    )
    + "; tp_size = 2 (--tp 2 on the command line (log line 5)); the code's defaults "
    "piecewise_cuda_graph_max_tokens = 4096, pp_size = 1; model_config.is_multimodal "
    "(server_args.py:868) taken as false: model_config.is_multimodal is not in the log"
)


CASES = [
    Case(
        # The line with the count ends in ", " in the code, and without the space in the log.
        "sglang-0.1.17-llama3-8b-4xA10G-tp4-issue565.log",
        "0.1.17",
        {
            "available_gpu_memory": (17.76, "measured"),
            "total_gpu_memory": (21.52, "measured"),
            "self.mem_fraction_static": (0.75, "flag"),
        },
        tokens=405784,
        ranks=4,  # `[gpu_id=N] ...`
    ),
    Case(
        # One start of eight ranks, each naming itself in its messages (`[gpu=3] ...`): its
        # ServerArgs(...) line, printed before the ranks start, is the start's own.
        "sglang-0.2.13-mixtral-8x7b-8xL4-tp8-issue1191.log",
        "0.2.13",
        {
            "available_gpu_memory": (10.75, "measured"),
            "total_gpu_memory": (21.65, "measured"),
            "self.mem_fraction_static": (0.83, "logged-args"),
        },
        tokens=463405,
        ranks=8,
    ),
    Case(
        "sglang-0.4.2.post3-deepseek-v2-lite-1xA40-48Q-issue3451.log",
        "0.4.2.post3",
        {
            "available_gpu_memory": (14.34, "measured"),
            "total_gpu_memory": (43.85, "measured"),
            "self.mem_fraction_static": (0.88, "logged-args"),
        },
        tokens=313444,
    ),
    Case(
        "sglang-0.4.3.post4-qwq32b-4xL4-tp4.log",
        "0.4.3.post4",
        {
            "available_gpu_memory": (6.09, "measured"),
            "total_gpu_memory": (21.63, "measured"),
            "self.mem_fraction_static": (0.85, "logged-args"),
        },
        tokens=46611,
        kv_gib=1.42 + 1.42,
        ranks=4,
    ),
    Case(
        "sglang-0.4.6-qwen3-8b-tp1.log",
        "0.4.6",
        {
            "available_gpu_memory": (63.49, "measured"),
            "total_gpu_memory": (78.84, "derived"),  # avail + usage of "Load weight end"
            "self.mem_fraction_static": (0.9, "flag"),
        },
        tokens=404890,
        kv_gib=27.80 + 27.80,
    ),
    Case(
        # A bench_latency run: no settings printed; mem_fraction_static is the code's own default.
        "sglang-0.3.x-2024-10-10-llama3-8b-1xMI300X-bench_latency.log",
        "0.3.3",
        {
            "available_gpu_memory": (176.33, "measured"),
            "total_gpu_memory": (191.33, "measured"),
            "self.mem_fraction_static": (0.88, "computed"),
        },
        tokens=1256440,  # by construction: the cell size is solved from it (no size logged)
        computed={"self.mem_fraction_static": AUTO_0_3_3},
    ),
    Case(
        # A hybrid model (a Mamba state pool beside the KV pool) in bench_one_batch: no settings.
        "sglang-0.5.6.post2-lfm2-700m-hybrid-1x16GB-bench_one_batch.log",
        "0.5.6.post2",
        {
            "available_gpu_memory": (13.81, "measured"),
            "total_gpu_memory": (15.33, "measured"),
            "self.mem_fraction_static": (0.763, "computed"),
        },
        tokens=473854,
        kv_gib=2.71 + 2.71,  # against what is left once the Mamba state pool took its share
        computed={"self.mem_fraction_static": AUTO_0_5_6_POST2},
        notes=(
            "model_runner.py:1442 taken: `self.mambaish_config is not None` is not known from "
            "the log; taken, as the log prints what the call sets; read from the code with "
            "max_mamba_cache_size = 85292 as the log prints it, "
            "config.mamba2_cache_params.mamba_cache_per_req ≈ 60685.6787 solved from it, "
            "disable_radix_cache = False, mamba_full_memory_ratio = 0.9, "
            "speculative_num_draft_tokens = None",
        ),
    ),
    Case(
        # A main-branch build of November 2025 started without --mem-fraction-static.
        "sglang-main-2025-11-qwen3-30b-a3b-fp8-tp2.log",
        "0.5.6",
        # The card's capacity is bounded below by the first free memory; the KV size it logs,
        # 66.06, is 1.9% above what 0.5.6's computation gives from that bound.
        {
            "available_gpu_memory": (79.09, "measured"),
            "total_gpu_memory": (93.69, "derived"),
            "self.mem_fraction_static": (0.848, "computed"),
        },
        tokens=1443316,
        kv_gib=33.03 + 33.03,
        computed={"self.mem_fraction_static": AUTO_0_5_6},
        ranks=2,
    ),
    Case(
        # A ROCm image's build: its lines read loosely, its settings from its ServerArgs(...);
        # the KV size it logs is not what 0.5.8.post1's formula gives from the logged values.
        "sglang-0.5.8.post1-rocm-glm5-fp8-8xMI355X-tp8-kvfp8.log",
        "0.5.8.post1",
        {
            "available_gpu_memory": (193.9, "measured"),
            "total_gpu_memory": (283.48, "measured"),
            "self.mem_fraction_static": (0.908, "logged-args"),
        },
        tokens=3262823,  # by construction: the cell size is solved from it
        ranks=8,
        parts=(
            "Does not reproduce the log: its sizes, 186.77 (log line 503 (TP0)), are 11% off "
            "rest_memory = 167.8198, what the formula gives from the logged values (cell_size "
            "solved from the logged 3262823 (log line 503 (TP0)), so the count agrees by "
            "construction)"
        ),
    ),
    Case(
        "sglang-2025-05-llama3-8b-1xH200-pd-prefill-issue6753.log",
        "0.4.6.post5",
        {
            "available_gpu_memory": (124.23, "measured"),
            "total_gpu_memory": (139.2, "measured"),
            "self.mem_fraction_static": (0.8717961202189594, "logged-args"),
        },
        tokens=871371,
        kv_gib=53.18 + 53.18,
    ),
    Case(
        "sglang-blackwell-image-2025-06-bge-m3-embedding-issue7590.log",
        "0.4.8",
        {
            "available_gpu_memory": (29.66, "measured"),
            "total_gpu_memory": (30.76, "measured"),
            "self.mem_fraction_static": (0.8, "logged-args"),
        },
        tokens=256568,
        kv_gib=11.74 + 11.74,
    ),
    Case(
        "sglang-latest-2025-02-04-r1distill-qwen7b-1xRTX3090.log",
        "0.4.2.post1",
        {
            "available_gpu_memory": (8.37, "measured"),
            "total_gpu_memory": (22.76, "measured"),
            "self.mem_fraction_static": (0.88, "logged-args"),
        },
        tokens=105531,
    ),
    Case(
        # A main-branch build of November 2025, read with the next release.
        "sglang-main-2025-11-llama31-8b-l40s-tp1.log",
        "0.5.6",
        {
            "available_gpu_memory": (28.91, "measured"),
            "total_gpu_memory": (44.0, "measured"),
            "self.mem_fraction_static": (0.851, "logged-args"),
        },
        tokens=183133,
        kv_gib=11.18 + 11.18,
    ),
]


# From the spine's end to the count the pool is built with, on the branches the logged settings
# select: the page alignment (page_size 1 in each), by line of the release's code.
ONWARD = {
    "sglang-0.4.6-qwen3-8b-tp1.log": [(782, "404890 // 1 * 1")],
    "sglang-0.5.6.post2-lfm2-700m-hybrid-1x16GB-bench_one_batch.log": [(1725, "473854 // 1 * 1")],
    "sglang-main-2025-11-qwen3-30b-a3b-fp8-tp2.log": [(1729, "1443316 // 1 * 1")],
    "sglang-0.5.8.post1-rocm-glm5-fp8-8xMI355X-tp8-kvfp8.log": [(308, "3262823 // 1 * 1")],
    "sglang-2025-05-llama3-8b-1xH200-pd-prefill-issue6753.log": [(891, "871371 // 1 * 1")],
    "sglang-blackwell-image-2025-06-bge-m3-embedding-issue7590.log": [(923, "256568 // 1 * 1")],
    "sglang-main-2025-11-llama31-8b-l40s-tp1.log": [(1729, "183133 // 1 * 1")],
}


def explained(release: Callable[[str], Session], case: Case) -> Explanation:
    session = release(case.release)
    log = (REAL_LOGS / case.log).read_text()
    return explain(session, log, PARAM, SINKS)


@pytest.mark.parametrize("case", CASES, ids=[c.log.removesuffix(".log") for c in CASES])
def test_a_real_log(case: Case, release: Callable[[str], Session]) -> None:
    e = explained(release, case)
    assert e.source == f"pypi:sglang=={case.release}"
    assert (e.starts, len(e.ranks)) == (1, case.ranks)
    inputs = {n: (b.value, b.how) for n, b in e.bindings.items() if b.how not in ("solved",)}
    assert inputs == {**case.inputs, **{n: (None, "unbound") for n in case.unknown}}
    for name, why in {**case.unknown, **case.computed}.items():
        assert e.bindings[name].why == why
    assert (verdict(e).reproduced, verdict(e).line if case.parts else "") == (
        not case.parts,
        case.parts,
    )
    if case.unknown:
        assert e.result is None
        return
    assert e.observed[0].value == case.tokens
    assert e.result == pytest.approx(case.tokens, rel=CLOSE)
    if case.kv_gib is not None and not case.parts:
        assert e.budget is not None
        assert e.budget.value == pytest.approx(case.kv_gib, rel=CLOSE)
    for note in case.notes:
        assert note in e.notes
    assert [(ev.step.line, ev.shown) for ev in e.onward] == ONWARD.get(case.log, [])


def test_a_line_from_another_build_is_read_by_its_labels(
    release: Callable[[str], Session],
) -> None:
    # A ROCm image of 0.5.8.post1 prints `Load weight end. elapsed=..., type=...`: 0.5.8.post1's
    # call prints no elapsed=, so the free memory after loading is read by its label.
    log = "sglang-0.5.8.post1-rocm-glm5-fp8-8xMI355X-tp8-kvfp8.log"
    e = explained(release, Case(log, "0.5.8.post1", {}))
    available = e.bindings["available_gpu_memory"]
    assert (available.value, available.how) == (193.9, "measured")
    assert available.observation is not None and available.observation.loose
    assert dict(available.per_rank)["TP0"] == 193.92
    assert available.why.endswith(
        "'Load weight end. type=' (log line 497 (TP0)) (a line another build printed: read by "
        "its label); the code takes the minimum across ranks (8 ranks)"
    )
    assert (
        "8 lines matched sglang/srt/model_executor/model_runner.py:949 loosely (log line 485 "
        "(TP4): 'Load weight end. elapsed=228.09 s, type=GlmMoeDsaForCausalLM'): another build "
        "of the call (it also shows elapsed=); its values are read by their labels"
    ) in e.notes


@pytest.mark.parametrize(
    ("log", "version", "code"),
    [
        ("sglang-0.4.6-qwen3-8b-tp1.log", "0.4.6", 0),
        ("sglang-0.5.8.post1-rocm-glm5-fp8-8xMI355X-tp8-kvfp8.log", "0.5.8.post1", 1),
        ("sglang-main-2025-11-qwen3-30b-a3b-fp8-tp2.log", "0.5.6", 0),
        ("sglang-0.5.6.post2-lfm2-700m-hybrid-1x16GB-bench_one_batch.log", "0.5.6.post2", 0),
    ],
)
def test_the_exit_status_says_whether_the_log_is_reproduced(
    log: str,
    version: str,
    code: int,
    release: Callable[[str], Session],
    capsys: pytest.CaptureFixture[str],
) -> None:
    release(version)  # downloaded and indexed into the test cache, which the command reads
    argv = ["explain", f"pypi:sglang=={version}", "--log", str(REAL_LOGS / log), "--quiet"]
    assert main(argv) == code
    lines = capsys.readouterr().out.splitlines()
    # A release that fits the log poorly (another build printed it) says so first.
    poor = lines[0].startswith(f"pypi:sglang=={version} fits the log poorly")
    second = lines[2 if poor else 1]
    assert second.startswith("Reproduces the log" if code == 0 else "Does not reproduce the log")
