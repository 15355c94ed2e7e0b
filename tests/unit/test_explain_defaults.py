"""A setting's default as the code computes it when the server starts: the construction of a
settings class read statement by statement (never run), with what the log's command line and
sizes show."""

from __future__ import annotations

from textwrap import dedent

import pytest

from tracer.analyses.explain.classcode import Unknown, literal, program
from tracer.analyses.explain.cmdline import command_line, declared_flags, given_fields
from tracer.analyses.explain.defaults import compute_default
from tracer.analyses.explain.interpret import construct
from tracer.analyses.explain.interpvalues import Surroundings, Val
from tracer.analyses.explain.logread import read_log
from tracer.analyses.explain.split import onward, reassigned
from tracer.graph.steps import Step
from tracer.store.step_ids import StepId

SETTINGS = dedent(
    """
    import dataclasses

    LIMIT = 60

    @dataclasses.dataclass
    class Args:
        model_path: str
        tp_size: int = 1
        chunk: int = None
        fraction: float = None
        backend: str = "auto"

        def __post_init__(self):
            if self.model_path.lower() in ["dummy"]:
                return
            capacity = get_capacity(self.device)
            self._memory(capacity)
            for name in names():
                self.backend = name

        def _memory(self, capacity):
            if capacity < 20 * 1024:
                if self.chunk is None:
                    self.chunk = 2048
            elif on_npu() and capacity < 32 * 1024:
                self.chunk = 32768
            else:
                self.chunk = 8192
            if self.fraction is None:
                reserved = 512 + self.chunk * 1.5 + self.tp_size / 8 * 1024
                if capacity > LIMIT * 1024:
                    reserved = max(reserved, 10 * 1024)
                self.fraction = round((capacity - reserved) / capacity, 3)
                if self.config().is_multimodal:
                    self.fraction *= 0.9

        def config(self):
            return load_config(self.model_path)

        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--model-path", "--model", type=str)
            parser.add_argument("--tensor-parallel-size", "--tp-size", type=int)
            parser.add_argument("--fraction", type=float)
            parser.add_argument("--enable-thing", action="store_true")

        @classmethod
        def from_cli_args(cls, args):
            args.tp_size = args.tensor_parallel_size
    """
).encode()


def starting(**values: object) -> dict[str, Val]:
    prog = program(SETTINGS, "Args")
    assert prog is not None
    fields = {name: literal(node) for name, node in prog.fields.items()}
    fields.update(values)
    return {name: Val(value, frozenset({name})) for name, value in fields.items()}


def capacity_of(mib: float) -> object:
    return lambda name, call, line: Val(mib, frozenset({name})) if call == "get_capacity" else None


def test_the_branch_the_values_select_is_taken() -> None:
    prog = program(SETTINGS, "Args")
    assert prog is not None
    run = construct(prog, starting(model_path="org/model"), capacity_of(16 * 1024))
    assert run.fields["chunk"].value == 2048
    # 512 + 2048 * 1.5 + 1 / 8 * 1024 = 3712 of 16384
    assert run.fields["fraction"].value == round((16384 - 3712) / 16384, 3)
    write = run.writes["fraction"]
    assert (write.line, write.function) == (34, "Args._memory")
    assert [(d.line, d.condition, d.taken) for d in write.branch] == [
        (30, "self.fraction is None", True)
    ]
    assert run.fields["fraction"].deps >= {"capacity", "tp_size", "chunk", "fraction"}


def test_an_unknown_call_and_a_false_comparison_is_false() -> None:
    # on_npu() is not known; `capacity < 32 * 1024` is false, so the `and` is false.
    prog = program(SETTINGS, "Args")
    assert prog is not None
    run = construct(prog, starting(model_path="org/model"), capacity_of(80 * 1024))
    assert run.fields["chunk"].value == 8192
    # 512 + 8192 * 1.5 + 1 / 8 * 1024 = 12928, above the 10 GiB floor of a large card
    assert run.fields["fraction"].value == round((81920 - 12928) / 81920, 3)


def test_an_unknown_condition_is_taken_as_false_and_can_be_flipped() -> None:
    prog = program(SETTINGS, "Args")
    assert prog is not None
    run = construct(prog, starting(model_path="org/model"), capacity_of(16 * 1024))
    assumed = {a.condition: a for a in run.assumed.values()}
    multimodal = assumed["self.config().is_multimodal"]
    assert multimodal.line == 35
    flipped = construct(
        prog, starting(model_path="org/model"), capacity_of(16 * 1024), frozenset({multimodal.key})
    )
    assert flipped.fields["fraction"].value == run.fields["fraction"].value * 0.9


def test_what_a_loop_assigns_is_unknown_and_an_unknown_capacity_stays_unknown() -> None:
    prog = program(SETTINGS, "Args")
    assert prog is not None
    run = construct(prog, starting(model_path="org/model"), lambda name, call, line: None)
    assert isinstance(run.fields["backend"].value, Unknown)
    fraction = run.fields["fraction"].value
    assert isinstance(fraction, Unknown)
    assert fraction.what == "capacity = get_capacity(self.device) (line 17)"


def test_flags_land_in_fields_by_their_declarations() -> None:
    lines = read_log(
        "$ python -m pkg.serve --model org/m --tp 2 --enable-thing --unknown 3 -\n"
        "-fraction=0.5\n"
        "[2025-01-01 10:00:00] started\n"
    )
    found = command_line(lines)
    assert found is not None
    line, words = found
    assert words[-1] == "--fraction=0.5"  # the terminal cut the flag in two, not the log
    flags = declared_flags(SETTINGS, frozenset({"model_path", "tp_size", "fraction"}))
    given = given_fields(words, flags, line.number)
    assert {name: g.value for name, g in given.items()} == {
        "model_path": "org/m",
        "tp_size": 2,  # --tp is a prefix of --tp-size; its dest is copied into tp_size
        "enable_thing": True,
        "fraction": 0.5,
    }
    assert given["tp_size"].flag == "--tp 2"


def test_a_default_computed_with_the_logs_lower_bound_or_a_given_capacity() -> None:
    log = "python -m pkg.serve --model-path org/m --tp-size 2\n"
    computed = compute_default(SETTINGS, "pkg/args.py", "Args", "fraction", read_log(log), None, {})
    assert computed is not None
    assert (computed.value, computed.missing, computed.missing_name) == (
        None,
        "capacity = get_capacity(self.device) (line 17)",
        "capacity",
    )
    given = compute_default(
        SETTINGS, "pkg/args.py", "Args", "fraction", read_log(log), None, {"capacity": 16384}
    )
    assert given is not None
    # 512 + 2048 * 1.5 + 2 / 8 * 1024 = 3840 of 16384
    assert given.value == round((16384 - 3840) / 16384, 3)
    assert [(i.name, i.value, i.how) for i in given.inputs] == [
        ("capacity", 16384, "given"),
        ("tp_size", 2, "flag"),
    ]
    assert [a.condition for a in given.assumed] == ["self.config().is_multimodal"]


RUNNER = dedent(
    """
    class Runner:
        def size(self, total):
            rest = total * 0.5
            if self.hybrid_config is not None:
                rest = self.split(rest)
            return rest

        def split(self, total):
            args = self.server_args
            share = total * args.state_ratio / (1 + args.state_ratio)
            args.max_states = int(share * (1 << 30) // self.config.per_state)
            return total - args.max_states * self.config.per_state / (1 << 30)
    """
).encode()


def reassignment_step() -> Step:
    code = "rest = self.split(rest)"
    return Step(
        StepId("pkg/runner.py#a1.0"),
        "local_assign",
        "pkg/runner.py",
        6,
        6,
        "Runner.size",
        code,
        "rest",
    )


def test_a_split_the_log_shows_is_taken_and_its_unknown_solved() -> None:
    # The log prints `max_states: 1000`: the split ran, and its per-state size is solved from
    # it; the state pool then holds ratio / (1 + ratio) of the memory.
    prog = program(RUNNER, "Runner")
    assert prog is not None
    logged = {"max_states": Val(1000, frozenset({"max_states"}))}
    settings = {"state_ratio": Val(0.5), "max_states": Val(None)}
    around = Surroundings("server_args", settings, logged.get)
    found = reassigned(prog, reassignment_step(), 6.0, around)
    assert found.taken
    assert found.value == pytest.approx(4.0, rel=1e-3)  # up to one state, from the floor
    assert found.why == (
        "runner.py:6 taken: `self.hybrid_config is not None` is not known from the log; taken, "
        "as the log prints what the call sets; read from the code with max_states = 1000 as the "
        "log prints it, self.config.per_state ≈ 2146407.4962 solved from it, state_ratio = 0.5"
    )


def test_a_split_the_log_does_not_show_is_passed_by() -> None:
    prog = program(RUNNER, "Runner")
    assert prog is not None
    around = Surroundings("server_args", {"state_ratio": Val(0.5)})
    found = reassigned(prog, reassignment_step(), 6.0, around)
    assert (found.taken, found.value) == (False, 6.0)


POOL = dedent(
    """
    class Runner:
        def init_pool(self, total, max_total_tokens):
            self.max_total_num_tokens = self.profile(total)
            if self.spec_algorithm.is_eagle():
                self.max_total_num_tokens += 100
            if max_total_tokens is not None:
                self.max_total_num_tokens = min(self.max_total_num_tokens, max_total_tokens)
            self.max_total_num_tokens = (
                self.max_total_num_tokens
                // self.server_args.page_size
                * self.server_args.page_size
            )
            self.pool = make_pool(self.max_total_num_tokens)
    """
).encode()


def sink_step() -> Step:
    code = "self.max_total_num_tokens = self.profile(total)"
    return Step(
        StepId("pkg/runner.py#a0.0"),
        "attr_write",
        "pkg/runner.py",
        4,
        4,
        "Runner.init_pool",
        code,
        "max_total_num_tokens",
    )


@pytest.mark.parametrize(
    ("cap", "writes"),
    [(None, [(9, 404864)]), (300000, [(8, 300000), (9, 299968)])],
)
def test_the_way_on_from_the_sink_takes_the_branches_the_settings_select(
    cap: int | None, writes: list[tuple[int, int]]
) -> None:
    # The settings' page size is 64; a cap given as a setting binds when it is below the count;
    # whether a draft model runs is not known (`is_eagle()`): taken as not.
    prog = program(POOL, "Runner")
    assert prog is not None
    settings = {"page_size": Val(64), "max_total_tokens": Val(cap)}
    found = onward(prog, sink_step(), 404890, Surroundings("server_args", settings))
    assert [(w.line, w.value.value) for w in found] == writes
