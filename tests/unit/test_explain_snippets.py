"""`explain` end to end on a small tree written here: the formula found by the trace, its
values bound to a log printed by the tree's own logging calls, evaluated; and the command's
answers to bad input."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from tracer.analyses.explain.explain import LogNotFromSource, explain
from tracer.cli.main import main
from tracer.errors import SgtraceError
from tracer.session import Session
from tracer.views.explain_report import explanation_text

TREE = {
    "pkg/__init__.py": "",
    "pkg/runner.py": """
        import logging
        from dataclasses import dataclass

        logger = logging.getLogger(__name__)


        def get_free(device, empty_cache=True, distributed=False):
            free = measure(device)
            if empty_cache:
                clear_cache()
            if distributed:
                tensor = make_tensor(free)
                all_reduce(tensor, op=ReduceOp.MIN)
                free = tensor.item()
            return free


        @dataclass
        class Args:
            fraction: float = 0.9


        class Runner:
            def __init__(self, args: Args):
                self.fraction = args.fraction

            def start(self):
                total = get_free(self.device, empty_cache=False, distributed=True)
                logger.info(f"Load begin. avail mem={get_free(self.device):.2f} GB")
                self.load()
                self.size = self.profile(total)
                logger.info(f"Pool made. #tokens: {self.size}")

            def load(self):
                after = get_free(self.device)
                logger.info("Load end. avail mem=%.2f GB", after)

            def profile(self, total):
                avail = get_free(self.device, empty_cache=False, distributed=True)
                rest = avail - total * (1 - self.fraction)
                return int(rest * (1 << 30)) // 4096
    """,
}

LOG = """\
[2026-11-29 10:00:00] args=Args(fraction=0.85)
[2026-11-29 10:00:01 TP0] Load begin. avail mem=80.00 GB
[2026-11-29 10:00:01 TP1] Load begin. avail mem=79.50 GB
[2026-11-29 10:00:09 TP1] Load end. avail mem=29.00 GB
[2026-11-29 10:00:09 TP0] Load end. avail mem=30.00 GB
[2026-11-29 10:00:10 TP0] Pool made. #tokens: 4000000
"""


@pytest.fixture
def tree(snippet_session: Callable[[dict[str, str]], Session]) -> Session:
    return snippet_session(TREE)


def test_a_formula_bound_to_its_log(tree: Session) -> None:
    e = explain(tree, LOG, "fraction", ("size",))
    first = e.evaluations[0]
    assert (first.target, first.expression) == ("rest", "avail - total * (1 - self.fraction)")
    # Both measurements reduce with MIN across ranks (the `distributed` branch of get_free).
    assert {n: (b.value, b.how) for n, b in e.bindings.items()} == {
        "avail": (29.0, "measured"),
        "total": (79.5, "measured"),
        "self.fraction": (0.85, "logged-args"),
    }
    assert dict(e.bindings["total"].per_rank) == {"TP0": 80.0, "TP1": 79.5}
    assert first.shown == "29 - 79.5 * (1 - 0.85)"
    assert first.value == pytest.approx(17.075)
    assert e.result == int(17.075 * (1 << 30)) // 4096 == 4476108
    text = explanation_text(e)
    assert "the formula gives 4476108: 476108 off the logged value" in text
    assert "total is not a fixed size: it is what get_free() returned in Runner.start" in text


def test_each_start_is_explained_with_its_own_lines(tree: Session) -> None:
    # Two launches; the second prints no settings, so none is taken from the first.
    second = LOG.replace("args=Args(fraction=0.85)", "python -m pkg.runner --port 1")
    log = LOG + second.replace("10:00:", "11:00:")
    e = explain(tree, log, "fraction", ("size",))
    assert (e.start, e.starts) == (2, 2)
    assert e.bindings["self.fraction"].how == "default"  # not the first start's 0.85
    assert e.notes[0] == (
        "the log holds 2 server starts (each begins with Args(...) at log line 1; 'Load begin. "
        "avail mem=' (TP0) at log line 8); start 2 (log lines 7 to the end) is explained, with "
        "its own lines only: --start N explains another"
    )
    first = explain(tree, log, "fraction", ("size",), start=1)
    assert first.bindings["self.fraction"].value == 0.85
    assert first.evaluations[0].shown == "29 - 79.5 * (1 - 0.85)"
    with pytest.raises(SgtraceError, match="--start 3: the log holds 2 starts"):
        explain(tree, log, "fraction", ("size",), start=3)


def test_a_given_value_says_what_the_log_said(tree: Session) -> None:
    e = explain(tree, LOG, "fraction", ("size",), given={"fraction": 0.5})
    why = e.bindings["self.fraction"].why
    assert why.startswith("given with --set, instead of 0.85 (logged-args: Args.fraction")
    with pytest.raises(SgtraceError, match="--set nosuch: not a value the formula reads"):
        explain(tree, LOG, "fraction", ("size",), given={"nosuch": 1.0})


def test_a_log_this_source_did_not_print(tree: Session) -> None:
    with pytest.raises(LogNotFromSource, match="none of the 2 lines of the log"):
        explain(tree, "hello world\nINFO: started\n", "fraction", ("size",))


def test_bad_input_to_the_command(
    write_tree: Callable[[dict[str, str]], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = str(write_tree(TREE))
    log = tmp_path / "server.log"
    log.write_text(LOG)
    packed = tmp_path / "server.log.gz"
    packed.write_bytes(gzip.compress(LOG.encode()))
    cases = {
        ("--log", str(packed)): "the log " + str(packed) + " is compressed",
        ("--log", str(log), "--set", "fraction=nan"): "--set 'fraction=nan' is not NAME=NUMBER",
        ("--log", str(log), "--tokens", "-5"): "--tokens -5: a token count is positive",
        ("--log", str(log), "--param", "nosuch"): "'nosuch' is bound nowhere in the source",
        ("--log", str(log), "--param", "fraction", "--start", "2"): (
            "--start 2: the log holds 1 start: leave out --start"
        ),
    }
    for args, message in cases.items():
        code = main(["explain", root, *args, "--to", "size", "--quiet"])
        err = capsys.readouterr().err.strip().splitlines()
        assert (code, len(err)) == (2, 1), err
        assert message in err[0]
    # Explained, and 12% off the logged count: said first, and the exit status is 1.
    assert main(["explain", root, "--log", str(log), "--param", "fraction", "--to", "size"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[1] == (
        "Does not reproduce the log: the formula gives 4476108, the log reports 4000000 "
        "(log line 6 (TP0)), 12% apart"
    )
    assert "29 - 79.5 * (1 - 0.85)" in out
    reproduced = tmp_path / "reproduced.log"
    reproduced.write_text(LOG.replace("#tokens: 4000000", "#tokens: 4476108"))
    args = ["explain", root, "--log", str(reproduced), "--param", "fraction", "--to", "size"]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "Reproduces the log: the formula gives 4476108, the log 4476108 (log line 6 (TP0); "
        "0% apart)"
    )
