"""How tests/bench/bench_chains.py reads a chain written by hand and scores sgtrace's spine
against it: hand-made chains and spines."""

from __future__ import annotations

import pytest

from tests.bench.bench_chains import (
    ChainFileError,
    Step,
    holds,
    on_its_line,
    read_chain,
    score,
    spine_of,
)

CHAIN = """\
# where it starts and ends
# source: pypi:pkg==1.0
# name: limit
# to: size
# 3 steps.
pkg/cli.py:10  cli_flag  parser.add_argument(
pkg/cli.py:20   local_assign   args = parser.parse_args()
pkg/pool.py:5  attr_write  self.size = args.limit
"""


def test_a_chain_file_gives_its_source_name_sink_and_steps_in_order(tmp_path):
    path = tmp_path / "pkg-1.0-limit.txt"
    path.write_text(CHAIN)
    chain = read_chain(path)
    assert (chain.name, chain.source, chain.param, chain.to) == (
        "pkg-1.0-limit",
        "pypi:pkg==1.0",
        "limit",
        "size",
    )
    assert chain.steps == (
        Step("pkg/cli.py", 10, "cli_flag", "parser.add_argument("),
        Step("pkg/cli.py", 20, "local_assign", "args = parser.parse_args()"),
        Step("pkg/pool.py", 5, "attr_write", "self.size = args.limit"),
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (CHAIN + "pkg/pool.py:7 use x\n", "x.txt:9: not PATH:LINE  KIND  CODE"),
        (CHAIN.replace("# to: size\n", ""), "x.txt: no `# to:` line"),
        (CHAIN.replace("# 3 steps.", "# 4 steps."), "x.txt: says 4 steps, holds 3"),
    ],
)
def test_a_chain_file_that_does_not_read_names_its_line(tmp_path, text, error):
    path = tmp_path / "x.txt"
    path.write_text(text)
    with pytest.raises(ChainFileError, match=f"^{error}"):
        read_chain(path)


def step(path: str, line: int, code: str, kind: str = "local_assign") -> Step:
    return Step(path, line, kind, code)


def test_a_spine_step_holds_a_hand_step_of_the_same_file_and_code_a_few_lines_away():
    hand = step("a.py", 10, "x = f(y)")
    assert holds(step("a.py", 13, "x  =  f(y)", "call_arg"), hand)  # blanks, kind: not compared
    assert not holds(step("a.py", 14, "x = f(y)"), hand)  # more than 3 lines away
    assert not holds(step("b.py", 10, "x = f(y)"), hand)
    assert not holds(step("a.py", 10, "x = f(z)"), hand)


HAND = [step("a.py", n, f"s{n}") for n in range(1, 7)]


def test_held_steps_are_counted_in_order_and_a_spine_step_holds_one_at_most():
    # The spine skips hand step 2, holds 3 and 4, takes a step of its own, then goes through
    # hand steps 6 and 5 in the wrong order: only one of them is held, the earlier hand step.
    spine = [HAND[0], HAND[2], HAND[3], step("z.py", 1, "own"), HAND[5], HAND[4]]
    found = score(HAND, spine)
    assert found.pairs == ((0, 0), (2, 1), (3, 2), (4, 5))
    assert (found.held, found.steps, found.prefix, found.first_miss) == (4, 6, 1, 1)
    # Skipping hand step 2 is still following the chain; the step of its own is leaving it.
    assert (found.trail, found.leave) == (3, 3)
    # A line that is two hand steps (an argument, then a return) needs two spine steps.
    twice = [step("a.py", 1, "return g(x)", "call_arg"), step("a.py", 1, "return g(x)", "return")]
    assert score(twice, twice[:1]).held == 1
    assert score(twice, twice).held == 2


def test_a_spine_that_starts_off_the_chain_is_scored_from_where_it_joins():
    spine = [step("z.py", 1, "field"), HAND[3], HAND[4], HAND[5]]
    found = score(HAND, spine)
    assert (found.held, found.trail, found.prefix, found.first_miss, found.leave) == (
        3,
        3,
        0,
        0,
        None,
    )
    assert score(HAND, []).held == 0


def test_a_parameter_is_on_its_line_as_a_whole_parameter():
    param = step("a.py", 1, "args", "param")
    assert on_its_line(param, "    listen_address, sock, args, client_config=None,")
    assert on_its_line(step("a.py", 1, "self", "param"), "def resolve_once(self) -> None:")
    assert on_its_line(step("a.py", 1, "size: int", "param"), "        size: int,")
    assert not on_its_line(param, "    listen_address, sock, uvicorn_kwargs,")
    assert not on_its_line(param, "    **args,")  # `**args` is another parameter's text
    assert on_its_line(step("a.py", 1, "x = 1"), "        x = 1  ")
    assert not on_its_line(step("a.py", 1, "x = 1"), "        x = 1  # one")


def test_the_spine_of_a_trace_json_is_its_steps_first_lines():
    trace = {
        "spine": ["b", "a"],
        "nodes": [
            {"id": "a", "file": "p.py", "line": 3, "kind": "param", "code": "n: int"},
            {"id": "b", "file": "p.py", "line": 1, "kind": "cli_flag", "code": "add(\n  '--n',\n)"},
        ],
    }
    assert spine_of(trace) == [
        Step("p.py", 1, "cli_flag", "add("),
        Step("p.py", 3, "param", "n: int"),
    ]
