"""A cap on the pool named in whatever form the log prints the settings: a `ServerArgs(...)`
line (tests/integration/test_explain.py), a dict of them (`server_args={...}`), the command
line. Logs built from 0.5.9's own logging templates, with chosen numbers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.logbuild import build_log
from tracer.analyses.explain.check import verdict
from tracer.analyses.explain.explain import explain
from tracer.session import Session

SINKS = ("max_total_num_tokens",)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (
            "server_args={'model_path': 'm', 'mem_fraction_static': 0.88, 'tp_size': 1, "
            "'max_total_tokens': 50000}",
            "server_args['max_total_tokens']",
        ),
        (
            "python -m sglang.launch_server --model-path m --max-total-tokens 50000",
            "--max-total-tokens",
        ),
    ],
)
def test_a_cap_printed_as_a_dict_or_a_flag_binds(
    settings: str, named: str, release: Callable[[str], Session]
) -> None:
    session = release("0.5.9")
    log = build_log(
        session,
        [
            ("", settings, []),
            ("TP0", "Load weight begin. avail mem=", [94.02]),
            ("TP0", "Load weight end.{}avail mem=", [12.5, "Llama", "bf16", 21.71, 72.31]),
            ("TP0", "KV Cache is allocated. #tokens: {}, K size: ", [50000, 1.52, 1.52]),
            ("TP0", "Memory pool end. avail mem=", [18.0]),
        ],
    )
    e = explain(session, log, "mem_fraction_static", SINKS)
    assert e.cap is not None and (e.cap.name, e.cap.value, e.cap.line) == (named, 50000, 1)
    assert verdict(e).reproduced
    assert verdict(e).line.startswith(
        f"Reproduces the log: the count it reports, 50000 (log line 4 (TP0)), is the cap {named} "
        "= 50000 (log line 1)"
    )
