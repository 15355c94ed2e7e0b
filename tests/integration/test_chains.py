"""The chains written by hand from the code (tests/integration/chains/), which the trace is judged
by (`python -m tests.bench.bench_chains`), checked against the releases they were read in,
downloaded at test time: every step names a line of its release that is the step's code.

Nothing is traced here: this keeps the ground truth true to the code, so a figure of the
benchmark can only move with the engine."""

from __future__ import annotations

import os

import pytest

from tests.bench.bench_chains import CHAINS, chain_files, on_its_line, read_chain
from tracer.sources.pypi import pypi_snapshot

FILES = chain_files(CHAINS)


def test_every_chain_file_reads():
    names = {f.stem for f in FILES}
    assert {
        "sglang-0.5.9-max_running_requests",
        "sglang-0.5.9-chunked_prefill_size",
        "sglang-0.5.23-max_running_requests",
        "sglang-0.5.23-chunked_prefill_size",
        "vllm-0.33.0-gpu_memory_utilization",
        "transformers-4.57.6-model_timeout",
    } <= names
    for path in FILES:
        chain = read_chain(path)  # raises on a line that does not read or a wrong count
        assert chain.steps[0].kind == "cli_flag", path.name


@pytest.mark.release
@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_every_hand_step_is_the_code_on_its_line(release_cache, path):
    chain = read_chain(path)
    os.environ["SGTRACE_CACHE"] = str(release_cache)
    snapshot = pypi_snapshot(chain.source)
    wrong = []
    for number, step in enumerate(chain.steps, 1):
        lines = snapshot.read(step.path).decode().splitlines()
        line = lines[step.line - 1] if step.line <= len(lines) else ""
        if not on_its_line(step, line):
            wrong.append(f"{number}. {step.where()}: {step.code!r}, the line is {line.strip()!r}")
    assert wrong == []
