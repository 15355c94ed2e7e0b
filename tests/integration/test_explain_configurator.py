"""`sgtrace explain` on the releases whose KV budget is profiled in kv_cache_configurator.py
(0.5.16 on): the value rides in objects from the formula to the logged count. The logs are
built from each release's own logging templates (tests/integration/logbuild.py) with the
numbers of a Llama-3.1-8B start on an 80 GB GPU: no log printed by these releases was posted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.logbuild import build_log
from tracer.analyses.explain.check import verdict
from tracer.analyses.explain.explain import explain
from tracer.cli.main import main
from tracer.session import Session

SINKS = ("max_total_num_tokens",)
# Llama-3.1-8B in bf16: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes per token.
CELL = 131072
TOKENS = 442607  # int((63.49 - 78.84 * (1 - 0.88)) * 2**30) // CELL


def start_lines(settings: str, kv_literal: str, dtype: list[object], mm: bool = False):
    lines: list[tuple[str, str, list[object]]] = [
        ("", settings, []),
        ("TP0", "Load weight begin. avail mem=", [78.84]),
        ("TP0", "Load weight end. elapsed=", [4.2, "LlamaForCausalLM", "", 63.49, 15.35]),
    ]
    if mm:
        lines.append(("TP0", "Reserving {} GB of the KV budget", [2.0]))
    tokens = TOKENS if not mm else int((63.49 - 78.84 * 0.12 - 2.0) * 2**30) // CELL
    size = round(tokens * CELL / 2 / 2**30, 2)
    lines += [
        ("TP0", kv_literal, [*dtype, "torch.bfloat16", tokens, size, size]),
        ("TP0", "Memory pool end. avail mem=", [7.2]),
    ]
    return lines


def log_0523(mm: bool = False) -> list[tuple[str, str, list[object]]]:
    # 0.5.23 prints its settings as a dict, and names the pool in a hole of the KV line.
    settings = "server_args={'model_path': 'meta-llama/Llama-3.1-8B-Instruct', 'tp_size': 1, "
    settings += "'mem_fraction_static': 0.88, 'page_size': 1}"
    return start_lines(
        settings, "{} is allocated. dtype: {}, #tokens: {}, K size: ", ["KV Cache"], mm
    )


def test_0523_profile_route_to_the_logged_count(release: Callable[[str], Session]) -> None:
    session = release("0.5.23")
    e = explain(session, build_log(session, log_0523()), "mem_fraction_static", SINKS)
    formulas = [ev for ev in e.evaluations if ev.step.kind == "formula"]
    assert [(ev.target, ev.shown) for ev in formulas[:2]] == [
        ("slack_gb", "78.84 * (1 - 0.88)"),
        ("rest_memory", "63.49 - 9.4608 - 0"),
    ]
    assert {n: (b.value, b.how) for n, b in e.bindings.items()} == {
        "pre_model_load_memory": (78.84, "measured"),
        "get_schedule().mem_fraction_static": (0.88, "logged-args"),
        "available_gpu_memory": (63.49, "measured"),
        "mm_reservation_gb": (0.0, "implied"),
        # The configurator's own adjustments, which the log does not give: each taken as
        # leaving the value as it is (a fixed overhead, a scale), and said so.
        "self._fixed_overhead_bytes": (0.0, "assumed"),
        "self._cell_size": (CELL, "solved"),
        "page_size": (1.0, "logged-args"),
        "loc_scale": (1.0, "assumed"),
    }
    assert (
        "server_args['mem_fraction_static']" in e.bindings["get_schedule().mem_fraction_static"].why
    )
    assert e.bindings["loc_scale"].why.endswith("the value on its way is scaled by it: taken as 1")
    # Through the objects: MemoryPoolConfig, _PoolSizes, KVCacheConfigResult hold the count.
    held = [ev.shown for ev in e.evaluations if ev.shown.startswith("holds")]
    assert held and set(held) == {f"holds .max_total_num_tokens = {TOKENS}"}
    assert e.evaluations[-1].step.code == "self.max_total_num_tokens = result.max_total_num_tokens"
    assert e.result == TOKENS == e.observed[0].value
    v = verdict(e)
    assert v.reproduced and v.line.startswith(
        "Reproduces the log: its sizes, 27.01 + 27.01 = 54.02, against rest_memory = 54.0292"
    )


def test_0523_a_logged_multimodal_reservation_is_read(release: Callable[[str], Session]) -> None:
    session = release("0.5.23")
    e = explain(session, build_log(session, log_0523(mm=True)), "mem_fraction_static", SINKS)
    assert (e.bindings["mm_reservation_gb"].value, e.bindings["mm_reservation_gb"].how) == (
        2.0,
        "printed",
    )
    assert e.bindings["self._cell_size"].value == CELL
    assert verdict(e).reproduced


def test_0523_without_settings_names_the_missing_one(
    release: Callable[[str], Session], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = release("0.5.23")
    lines = log_0523()[1:]  # no server_args line, no command line
    path = tmp_path / "server.log"
    path.write_text(build_log(session, lines))
    assert main(["explain", "pypi:sglang==0.5.23", "--log", str(path), "--quiet"]) == 1
    first = capsys.readouterr().out.splitlines()[1]
    assert first == (
        "Does not reproduce the log: the formula stops at slack_gb (kv_cache_configurator.py:"
        "3007): Schedule.mem_fraction_static is not in the log: no Schedule(...) line, no "
        "command line setting --mem-fraction-static: give --set mem_fraction_static=VALUE"
    )
    given = ["--set", "mem_fraction_static=0.88"]
    assert main(["explain", "pypi:sglang==0.5.23", "--log", str(path), "--quiet", *given]) == 0


def test_0516_record_filled_by_its_constructor(release: Callable[[str], Session]) -> None:
    # 0.5.16 measures the free memory before loading into TorchDistributedResult(...): a
    # record, not a setting; its value is what the constructor is given.
    session = release("0.5.16")
    settings = "server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
    settings += "tp_size=1, mem_fraction_static=0.88, page_size=1)"
    lines = start_lines(settings, "KV Cache is allocated. dtype: {}, #tokens: {}, K size: ", [])
    e = explain(session, build_log(session, lines), "mem_fraction_static", SINKS)
    pre = e.bindings["pre_model_load_memory"]
    assert (pre.value, pre.how, pre.function) == (78.84, "measured", "get_available_gpu_memory")
    assert pre.at is not None and pre.at.file.endswith("distributed/bootstrap.py")
    assert e.bindings["self.server_args.mem_fraction_static"].value == 0.88
    assert e.bindings["self._cell_size"].value == CELL
    assert e.result == TOKENS and verdict(e).reproduced
