"""On a real release, a trace's JSON is the same from a fresh process (`sgtrace trace ...
--json`, on the cache the test session made) as in a process that answered other questions
before it: what a query finds never depends on what was asked first."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tracer.cli import presets
from tracer.session import open_session
from tracer.store.cache import FactCache
from tracer.trace.chains import trace
from tracer.views.chain_text import dumps
from tracer.views.schemas import TRACE

OTHERS = [
    "max_running_requests",
    "chunked_prefill_size",
    "page_size",
    "context_length",
    "tp_size",
    "max_prefill_tokens",
    "schedule_policy",
    "kv_cache_dtype",
    "cuda_graph_max_bs",
    "dp_size",
]


@pytest.mark.parametrize("name", ["mem_fraction_static", "max_running_requests"])
def test_a_trace_of_a_release_is_the_same_after_other_questions(release, release_cache, name):
    source = "pypi:sglang==0.5.23"
    session = release("0.5.23")
    for other in OTHERS:
        if other != name:
            trace(session.graph, other, hints=presets.SINKS)
    after = dumps(trace(session.graph, name, hints=presets.SINKS), source)
    env = {**os.environ, "SGTRACE_CACHE": str(release_cache)}
    fresh = subprocess.run(
        [sys.executable, "-m", "tracer.cli", "trace", source, name, "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.rstrip("\n")
    assert json.loads(fresh)["schema"] == TRACE
    assert fresh == after


def test_what_a_call_runs_is_the_same_asked_first_or_after_its_receiver(release_cache):
    """The value follower's answer for a call does not depend on what it was asked before:
    `model_config.get_num_kv_heads(...)` in 0.5.23's attention hook (its receiver a
    parameter whose caller passes `model_config_of(...)`, a ModelConfig) runs
    ModelConfig.get_num_kv_heads whether the call is asked first in a new session or after
    the parameter (with a lower bound on chained questions than the call graph's, the call
    asked first stayed cut)."""
    os.environ["SGTRACE_CACHE"] = str(release_cache)
    path = "sglang/srt/arg_groups/attention_hook.py"
    found = []
    for receiver_first in (False, True):
        session = open_session("pypi:sglang==0.5.23", cache=FactCache(release_cache))
        graph = session.graph
        statements, objects = graph.values.follower
        if receiver_first:
            objects.parameter("sglang.srt.arg_groups.attention_hook._check_xpu_dcp", "model_config")
        calls = graph.facts.flows(path).calls
        call = next(c for c in calls if c.callee == "model_config.get_num_kv_heads")
        found.append(sorted(str(t.function) for t in statements.targets(path, call)))
    assert found[0] == found[1] == ["sglang.srt.configs.model_config.ModelConfig.get_num_kv_heads"]
