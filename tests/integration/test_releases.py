"""The spine of the two chains operators ask about, on real SGLang releases from PyPI.

Expected steps were found by reading each release by hand; each is (file, a fragment of the
step's code). The spine must contain them in this order (it may hold more steps between, e.g.
inside `get_available_gpu_memory`, where the measured value starts)."""

from __future__ import annotations

import pytest

from tracer.trace.chains import trace

MR = "sglang/srt/model_executor/model_runner.py"
MIXIN = "sglang/srt/model_executor/model_runner_kv_cache_mixin.py"
ARGS = "sglang/srt/server_args.py"
WORKER = "sglang/srt/managers/tp_worker.py"
POOLS = "sglang/srt/model_executor/pool_configurator.py"

MEM_FRACTION = {
    "0.4.6": [
        (ARGS, '"--mem-fraction-static",'),
        (ARGS, "mem_fraction_static: Optional[float] = None"),
        (WORKER, "mem_fraction_static=server_args.mem_fraction_static,"),
        (MR, "mem_fraction_static: float"),
        (MR, "self.mem_fraction_static = mem_fraction_static"),
        (MR, "rest_memory = available_gpu_memory - total_gpu_memory * ("),
        (MR, "max_num_token = int(rest_memory * (1 << 30) // cell_size)"),
        (MR, "return max_num_token"),
        (MR, "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)"),
    ],
    "0.5.9": [
        (ARGS, '"--mem-fraction-static",'),
        (ARGS, "mem_fraction_static: Optional[float] = None"),
        (WORKER, "mem_fraction_static=self.server_args.mem_fraction_static,"),
        (MR, "mem_fraction_static: float"),
        (MR, "self.mem_fraction_static = mem_fraction_static"),
        (MIXIN, "rest_memory = available_gpu_memory - total_gpu_memory * ("),
        (MIXIN, "return int(rest_memory * (1 << 30)) // cell_size"),
        (MIXIN, "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)"),
    ],
    "0.5.12": [
        (ARGS, '"--mem-fraction-static",'),
        (ARGS, "mem_fraction_static: Optional[float] = None"),
        (WORKER, "mem_fraction_static=self.server_args.mem_fraction_static,"),
        (MR, "mem_fraction_static: float"),
        (MR, "self.mem_fraction_static = mem_fraction_static"),
        (MIXIN, "rest_memory = post_model_load_memory - pre_model_load_memory * ("),
        (MIXIN, "return int(rest_memory * (1 << 30))  # return in bytes"),
        (MIXIN, "available_bytes = self._profile_available_bytes(pre_model_load_memory)"),
        (MIXIN, "config = configurator.calculate_pool_sizes(available_bytes, page_size)"),
        (POOLS, "available_bytes: int"),
        (POOLS, "max_total_num_tokens = available_bytes // self._cell_size"),
        (POOLS, "return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)"),
        (POOLS, "max_total_num_tokens: int"),
        (MIXIN, "self.max_total_num_tokens = config.max_total_num_tokens"),
    ],
}

FREE_MEMORY = {
    "0.4.6": (
        "total_gpu_memory",
        [
            ("sglang/srt/utils.py", "return free_gpu_memory / (1 << 30)"),
            (MR, "min_per_gpu_memory = get_available_gpu_memory("),
            (MR, "return min_per_gpu_memory"),
            (MR, "min_per_gpu_memory = self.init_torch_distributed()"),
            (MR, "self.initialize(min_per_gpu_memory)"),
            (MR, "min_per_gpu_memory: float"),
            (MR, "min_per_gpu_memory,"),
            (MR, "total_gpu_memory: int"),
            (MR, "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)"),
            (MR, "total_gpu_memory: int"),
            (MR, "rest_memory = available_gpu_memory - total_gpu_memory * ("),
            (MR, "max_num_token = int(rest_memory * (1 << 30) // cell_size)"),
            (MR, "return max_num_token"),
            (MR, "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)"),
        ],
    ),
    "0.5.9": (
        "total_gpu_memory",
        [
            ("sglang/srt/utils/common.py", "return free_gpu_memory / (1 << 30)"),
            (MR, "min_per_gpu_memory = get_available_gpu_memory("),
            (MR, "return min_per_gpu_memory"),
            (MR, "min_per_gpu_memory = self.init_torch_distributed()"),
            (MR, "self.initialize(min_per_gpu_memory)"),
            (MR, "min_per_gpu_memory: float"),
            (MR, "self.init_memory_pool(min_per_gpu_memory)"),
            (MIXIN, "total_gpu_memory: int"),
            (MIXIN, "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)"),
            (MIXIN, "total_gpu_memory: int"),
            (MIXIN, "rest_memory = available_gpu_memory - total_gpu_memory * ("),
            (MIXIN, "return int(rest_memory * (1 << 30)) // cell_size"),
            (MIXIN, "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)"),
        ],
    ),
    "0.5.12": (
        "pre_model_load_memory",
        [
            ("sglang/srt/utils/common.py", "return free_gpu_memory / (1 << 30)"),
            (MR, "pre_model_load_memory = get_available_gpu_memory("),
            (MR, "return pre_model_load_memory"),
            (MR, "pre_model_load_memory = self.init_torch_distributed()"),
            (MR, "self.initialize(pre_model_load_memory)"),
            (MR, "pre_model_load_memory: float"),
            (MR, "self.init_memory_pool(pre_model_load_memory)"),
            (MIXIN, "pre_model_load_memory: int"),
            (MIXIN, "available_bytes = self._profile_available_bytes(pre_model_load_memory)"),
            (MIXIN, "pre_model_load_memory: int"),
            (MIXIN, "rest_memory = post_model_load_memory - pre_model_load_memory * ("),
            (MIXIN, "return int(rest_memory * (1 << 30))  # return in bytes"),
            (MIXIN, "config = configurator.calculate_pool_sizes(available_bytes, page_size)"),
            (POOLS, "max_total_num_tokens = available_bytes // self._cell_size"),
            (POOLS, "return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)"),
            (MIXIN, "self.max_total_num_tokens = config.max_total_num_tokens"),
        ],
    ),
}


def spine_pairs(chain) -> list[tuple[str, str]]:
    steps = {s.id: s for s in chain.steps}
    return [(steps[i].file, steps[i].code) for i in chain.spine]


def assert_in_order(spine: list[tuple[str, str]], expected: list[tuple[str, str]]) -> None:
    """Each expected (file, fragment) matches a spine step, after the previous one matched."""
    position = 0
    for file, fragment in expected:
        for index in range(position, len(spine)):
            if spine[index][0] == file and fragment in spine[index][1].splitlines()[0:12]:
                position = index + 1
                break
            if spine[index][0] == file and any(
                line.strip() == fragment for line in spine[index][1].splitlines()
            ):
                position = index + 1
                break
        else:
            shown = "\n".join(f"  {f}: {c.splitlines()[0]}" for f, c in spine)
            raise AssertionError(f"{file}: {fragment!r} not found in order in the spine:\n{shown}")


@pytest.mark.release
@pytest.mark.parametrize("version", sorted(MEM_FRACTION))
def test_mem_fraction_static_spine(release, version):
    session = release(version)
    chain = trace(session.graph, "mem_fraction_static", sinks=["max_total_num_tokens"])
    assert_in_order(spine_pairs(chain), MEM_FRACTION[version])
    last = {s.id: s for s in chain.steps}[chain.spine[-1]]
    assert last.name == "max_total_num_tokens" and last.kind in ("attr_write", "formula")


@pytest.mark.release
@pytest.mark.parametrize("version", sorted(FREE_MEMORY))
def test_measured_free_memory_spine(release, version):
    name, expected = FREE_MEMORY[version]
    session = release(version)
    chain = trace(session.graph, name, sinks=["max_total_num_tokens"])
    assert_in_order(spine_pairs(chain), expected)
    first = {s.id: s for s in chain.steps}[chain.spine[0]]
    assert first.file.endswith(("utils.py", "utils/common.py"))  # inside get_available_gpu_memory
    # The CUDA measurement, not another device's branch (hpu, npu) or psutil's fallback.
    assert first.code == "free_gpu_memory, _ = torch.cuda.mem_get_info(gpu_id)"


@pytest.mark.release
def test_backward_from_the_result_reaches_both_inputs(release):
    """`--direction backward` from max_total_num_tokens: the formula and its inputs."""
    session = release("0.5.9")
    chain = trace(session.graph, "ModelRunner.max_total_num_tokens", direction="backward")
    codes = [s.code.splitlines()[0].strip() for s in chain.steps]
    assert "rest_memory = available_gpu_memory - total_gpu_memory * (" in codes
    last = {s.id: s for s in chain.steps}[chain.spine[-1]]
    assert last.name == "max_total_num_tokens"


@pytest.mark.release
@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (
            "0.4.6",
            [
                "max_num_token = int(rest_memory * (1 << 30) // cell_size)",
                "return max_num_token",
                "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)",
            ],
        ),
        (
            "0.5.9",
            [
                "return int(rest_memory * (1 << 30)) // cell_size",
                "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)",
            ],
        ),
    ],
)
def test_a_sinks_own_name_backward_ends_at_its_computation(release, version, expected):
    """`sgtrace trace ... max_total_num_tokens --direction backward`: from the binding the
    others copy (the model runner's), not a metrics record or a controller's copy of it."""
    session = release(version)
    chain = trace(
        session.graph, "max_total_num_tokens", direction="backward", sinks=["max_total_num_tokens"]
    )
    steps = {s.id: s for s in chain.steps}
    assert [steps[i].code.splitlines()[0].strip() for i in chain.spine] == expected
