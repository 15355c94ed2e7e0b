"""Every route of the two chains operators ask about, step by step, on the SGLang releases
that carry their sizing inside objects (0.5.12, 0.5.16, 0.5.23), and the generality check on
another codebase of that style (vLLM). Downloaded at test time, never committed.

Each route was read by hand in the release: the flag or the measurement, the steps the value
takes, and where it sits inside an object, the steps that object takes (made, returned, kept in a
local or an attribute, passed) up to where the value is read back out. 0.5.16 and 0.5.23 reach
`max_total_num_tokens` twice: at start-up through the profile (the main route) and after the
CUDA graphs are captured (`post_capture_resize_kv_pool`, the second). 0.5.12 has one: its other
binding of the name (the decode prealloc queue's cap) is on another class, a copy kept elsewhere.

A flag's value rides in the object made from the parsed flags: the route shows that object's
way from where the package's own entry parses (`prepare_server_args`) through the server's
launch (`mp.Process(target=..., args=(...))` into the scheduler process) to the worker that
reads the field. In 0.5.23 ServerArgs is assembled at import time from namespace classes (its
annotations merged with `Schedule`'s and the others', then `msgspec.defstruct`): the flags
generated from it set the `Schedule` field, and the record is made from the parsed flags. Its
settings reach `get_schedule()` through a bag filled by name: the record is published into the
runtime context (`publish` -> `set_server_args` -> `_build_config_bags`), each field read out of
it by a name held in a variable (`resolution_result(server_args, field, ...)`) and given to
`bag._set(field, value)`; the bag made there is returned, kept in the context and handed out by
the accessor. The context is filled in each process that publishes: the publication shown is
the scheduler process's (`publish(server_args, role="scheduler")` in `run_scheduler_process`,
reached through the launch `args = (server_args, ...)`), the process the configurator that reads
the bag runs in, not the launching process's (`role="tokenizer"`). What a route cannot show yet,
and the tests do not ask: the factory
`create_memory_pool_configurator`'s classes other than the default.

Each line below is `FILE | the first line of the step's code`; FILE is short for a path."""

from __future__ import annotations

import os

import pytest

from tracer.session import open_session
from tracer.store.cache import FactCache
from tracer.trace.chains import trace

FILES = {
    "schedule": "sglang/srt/arg_groups/fields/schedule.py",
    "decode": "sglang/srt/disaggregation/decode.py",
    "bootstrap": "sglang/srt/distributed/bootstrap.py",
    "tp_worker": "sglang/srt/managers/tp_worker.py",
    "configurator": "sglang/srt/mem_cache/kv_cache_configurator.py",
    "model_runner": "sglang/srt/model_executor/model_runner.py",
    "kv_pool_runtime": "sglang/srt/model_executor/model_runner_components/kv_pool_runtime.py",
    "kv_mixin": "sglang/srt/model_executor/model_runner_kv_cache_mixin.py",
    "pools": "sglang/srt/model_executor/pool_configurator.py",
    "server_args": "sglang/srt/server_args.py",
    "common": "sglang/srt/utils/common.py",
    "serve": "sglang/cli/serve.py",
    "launch": "sglang/launch_server.py",
    "http": "sglang/srt/entrypoints/http_server.py",
    "engine": "sglang/srt/entrypoints/engine.py",
    "scheduler": "sglang/srt/managers/scheduler.py",
    "context": "sglang/srt/runtime_context.py",
    "cache": "vllm/config/cache.py",
    "vllm": "vllm/config/vllm.py",
    "arg_utils": "vllm/engine/arg_utils.py",
    "gpu_worker": "vllm/v1/worker/gpu_worker.py",
    "worker_utils": "vllm/v1/worker/utils.py",
    "worker_base": "vllm/v1/worker/worker_base.py",
    "entry": "vllm/entrypoints/launchers/api_server/entry.py",
    "ipc_memory": "vllm/multimodal/gpu_ipc_memory.py",
    "serial_utils": "vllm/v1/serial_utils.py",
    "uniproc": "vllm/v1/executor/uniproc_executor.py",
    "executor": "vllm/v1/executor/abstract.py",
    "engine_core": "vllm/v1/engine/core.py",
    "kv_planning": "vllm/v1/core/kv_cache_planning.py",
    "acc_launch": "accelerate/commands/launch.py",
    "acc_env": "accelerate/utils/environment.py",
    "acc_utils": "accelerate/utils/launch.py",
    "lm_main": "lm_eval/__main__.py",
    "lm_evaluator": "lm_eval/evaluator.py",
    "lm_model": "lm_eval/api/model.py",
    "lm_hf": "lm_eval/models/huggingface.py",
}

ROUTES = {
    ("0.5.12", "mem_fraction_static"): (
        """
        server_args  | parser.add_argument(
        server_args  | raw_args = parser.parse_args(argv)
        server_args  | return ServerArgs.from_cli_args(raw_args)
        server_args  | args: argparse.Namespace
        server_args  | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args  | mem_fraction_static: Optional[float] = None
        server_args  | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args  | return ServerArgs.from_cli_args(raw_args)
        serve        | server_args = prepare_server_args(dispatch_argv)
        serve        | run_server(server_args)
        launch       | server_args
        launch       | launch_server(server_args)
        http         | server_args: ServerArgs
        http         | server_args=server_args,
        engine       | server_args: ServerArgs
        engine       | server_args, port_args, run_scheduler_process_func
        engine       | server_args: ServerArgs
        engine       | args=(
        scheduler    | server_args: ServerArgs
        scheduler    | server_args,
        scheduler    | server_args: ServerArgs
        scheduler    | self.server_args = server_args
        scheduler    | worker_kwargs = dict(
        scheduler    | self.tp_worker = TpModelWorker(**worker_kwargs)
        tp_worker    | server_args: ServerArgs
        tp_worker    | self.server_args = server_args
        tp_worker    | mem_fraction_static=self.server_args.mem_fraction_static,
        model_runner | mem_fraction_static: float
        model_runner | self.mem_fraction_static = mem_fraction_static
        kv_mixin     | rest_memory = post_model_load_memory - pre_model_load_memory * (
        kv_mixin     | return int(rest_memory * (1 << 30))  # return in bytes
        kv_mixin     | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        kv_mixin     | config = configurator.calculate_pool_sizes(available_bytes, page_size)
        pools        | available_bytes: int
        pools        | max_total_num_tokens = available_bytes // self._cell_size
        pools        | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools        | max_total_num_tokens: int
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        kv_mixin     | config = configurator.calculate_pool_sizes(available_bytes, page_size)
        kv_mixin     | return config
        kv_mixin     | self.memory_pool_config = self._resolve_memory_pool_config(
        kv_mixin     | self._apply_memory_pool_config(self.memory_pool_config)
        kv_mixin     | config: MemoryPoolConfig
        kv_mixin     | self.max_total_num_tokens = config.max_total_num_tokens
        """,
    ),
    ("0.5.12", "pre_model_load_memory"): (
        """
        common       | free_gpu_memory, _ = torch.cuda.mem_get_info(gpu_id)
        common       | return free_gpu_memory / (1 << 30)
        model_runner | pre_model_load_memory = get_available_gpu_memory(
        model_runner | return pre_model_load_memory
        model_runner | pre_model_load_memory = self.init_torch_distributed()
        model_runner | self.initialize(pre_model_load_memory)
        model_runner | pre_model_load_memory: float
        model_runner | self.init_memory_pool(pre_model_load_memory)
        kv_mixin     | pre_model_load_memory: int
        kv_mixin     | pre_model_load_memory
        kv_mixin     | pre_model_load_memory: int
        kv_mixin     | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        kv_mixin     | pre_model_load_memory: int
        kv_mixin     | rest_memory = post_model_load_memory - pre_model_load_memory * (
        kv_mixin     | return int(rest_memory * (1 << 30))  # return in bytes
        kv_mixin     | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        kv_mixin     | config = configurator.calculate_pool_sizes(available_bytes, page_size)
        pools        | available_bytes: int
        pools        | max_total_num_tokens = available_bytes // self._cell_size
        pools        | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools        | max_total_num_tokens: int
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        kv_mixin     | config = configurator.calculate_pool_sizes(available_bytes, page_size)
        kv_mixin     | return config
        kv_mixin     | self.memory_pool_config = self._resolve_memory_pool_config(
        kv_mixin     | self._apply_memory_pool_config(self.memory_pool_config)
        kv_mixin     | config: MemoryPoolConfig
        kv_mixin     | self.max_total_num_tokens = config.max_total_num_tokens
        """,
    ),
    ("0.5.16", "mem_fraction_static"): (
        """
        server_args  | add_cli_args_from_dataclass(parser, ServerArgs)
        server_args  | raw_args = parser.parse_args(argv)
        server_args  | return ServerArgs.from_cli_args(raw_args)
        server_args  | args: argparse.Namespace
        server_args  | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args  | mem_fraction_static: A[
        server_args  | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args  | return ServerArgs.from_cli_args(raw_args)
        serve        | server_args = prepare_server_args(dispatch_argv)
        serve        | run_server(server_args)
        launch       | server_args
        launch       | launch_server(server_args)
        http         | server_args: ServerArgs
        http         | server_args=server_args,
        engine       | server_args: ServerArgs
        engine       | server_args, port_args, run_scheduler_process_func
        engine       | server_args: ServerArgs
        engine       | args=(
        scheduler    | server_args: ServerArgs
        scheduler    | server_args,
        scheduler    | server_args: ServerArgs
        scheduler    | self.server_args = server_args
        scheduler    | worker_kwargs = dict(
        scheduler    | self.tp_worker = TpModelWorker(**worker_kwargs)
        tp_worker    | server_args: ServerArgs
        tp_worker    | self.server_args = server_args
        tp_worker    | server_args=self.server_args,
        model_runner | server_args: ServerArgs
        model_runner | self.server_args = server_args
        model_runner | server_args=self.server_args,
        configurator | server_args: ServerArgs
        configurator | slack_gb = pre_model_load_memory * (1 - self.server_args.mem_fraction_static)
        configurator | rest_memory = available_gpu_memory - slack_gb
        configurator | return int(rest_memory * (1 << 30))  # return in bytes
        configurator | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        configurator | config = self.config_from_budget(available_bytes)
        configurator | budget_bytes: int
        configurator | budget_bytes, self.server_args.page_size
        pools        | available_bytes: int
        pools        | max_total_num_tokens = available_bytes // self._cell_size
        pools        | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools        | max_total_num_tokens: int
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator | config = configurator.calculate_pool_sizes(
        configurator | return config
        configurator | config = self.config_from_budget(available_bytes)
        configurator | config = configurator.finalize_with_max_running_requests(config)
        pools        | config: MemoryPoolConfig
        pools        | return config
        configurator | config = configurator.finalize_with_max_running_requests(config)
        configurator | return config
        configurator | config = self._resolve_memory_pool_config(pre_model_load_memory)
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | config: MemoryPoolConfig
        configurator | max_total_num_tokens = config.max_total_num_tokens
        configurator | max_total_num_tokens=max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return _PoolSizes(
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | max_total_num_tokens=sizes.max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return KVCacheConfigResult(
        model_runner | result = self.kv_cache_configurator.configure(
        model_runner | self.max_total_num_tokens = result.max_total_num_tokens
        """,
        """
        server_args     | add_cli_args_from_dataclass(parser, ServerArgs)
        server_args     | raw_args = parser.parse_args(argv)
        server_args     | return ServerArgs.from_cli_args(raw_args)
        server_args     | args: argparse.Namespace
        server_args     | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args     | mem_fraction_static: A[
        server_args     | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args     | return ServerArgs.from_cli_args(raw_args)
        serve           | server_args = prepare_server_args(dispatch_argv)
        serve           | run_server(server_args)
        launch          | server_args
        launch          | launch_server(server_args)
        http            | server_args: ServerArgs
        http            | server_args=server_args,
        engine          | server_args: ServerArgs
        engine          | server_args, port_args, run_scheduler_process_func
        engine          | server_args: ServerArgs
        engine          | args=(
        scheduler       | server_args: ServerArgs
        scheduler       | server_args,
        scheduler       | server_args: ServerArgs
        scheduler       | self.server_args = server_args
        scheduler       | worker_kwargs = dict(
        scheduler       | self.tp_worker = TpModelWorker(**worker_kwargs)
        tp_worker       | server_args: ServerArgs
        tp_worker       | self.server_args = server_args
        tp_worker       | mem_fraction_static=self.server_args.mem_fraction_static,
        model_runner    | mem_fraction_static: float
        model_runner    | self.mem_fraction_static = mem_fraction_static
        model_runner    | self
        model_runner    | resize = compute_post_capture_kv_resize(self)
        kv_pool_runtime | model_runner: ModelRunner
        kv_pool_runtime | headroom_gb = model_runner.pre_model_load_memory * (
        kv_pool_runtime | budget_bytes = (
        kv_pool_runtime | budget_bytes, cap_tokens=model_runner.max_total_num_tokens
        configurator    | budget_bytes: int
        configurator    | budget_bytes, self.server_args.page_size
        pools           | available_bytes: int
        pools           | max_total_num_tokens = available_bytes // self._cell_size
        pools           | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools           | max_total_num_tokens: int
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator    | config = configurator.calculate_pool_sizes(
        configurator    | return config
        kv_pool_runtime | config = model_runner.kv_cache_configurator.config_from_budget(
        kv_pool_runtime | max_total_num_tokens=config.max_total_num_tokens,
        kv_pool_runtime | max_total_num_tokens: int
        kv_pool_runtime | return PostCaptureKVResize(
        model_runner    | resize = compute_post_capture_kv_resize(self)
        model_runner    | self.max_total_num_tokens = resize.max_total_num_tokens
        """,
    ),
    ("0.5.16", "pre_model_load_memory"): (
        """
        common       | free_gpu_memory, _ = torch.cuda.mem_get_info(gpu_id)
        common       | return free_gpu_memory / (1 << 30)
        bootstrap    | pre_model_load_memory = get_available_gpu_memory(
        bootstrap    | pre_model_load_memory=pre_model_load_memory,
        bootstrap    | pre_model_load_memory: float
        bootstrap    | return TorchDistributedResult(
        model_runner | result = bootstrap.init_torch_distributed(
        model_runner | self.pre_model_load_memory = result.pre_model_load_memory
        model_runner | pre_model_load_memory=self.pre_model_load_memory
        configurator | pre_model_load_memory: int
        configurator | config = self._resolve_memory_pool_config(pre_model_load_memory)
        configurator | pre_model_load_memory: int
        configurator | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        configurator | pre_model_load_memory: int
        configurator | slack_gb = pre_model_load_memory * (1 - self.server_args.mem_fraction_static)
        configurator | rest_memory = available_gpu_memory - slack_gb
        configurator | return int(rest_memory * (1 << 30))  # return in bytes
        configurator | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        configurator | config = self.config_from_budget(available_bytes)
        configurator | budget_bytes: int
        configurator | budget_bytes, self.server_args.page_size
        pools        | available_bytes: int
        pools        | max_total_num_tokens = available_bytes // self._cell_size
        pools        | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools        | max_total_num_tokens: int
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator | config = configurator.calculate_pool_sizes(
        configurator | return config
        configurator | config = self.config_from_budget(available_bytes)
        configurator | config = configurator.finalize_with_max_running_requests(config)
        pools        | config: MemoryPoolConfig
        pools        | return config
        configurator | config = configurator.finalize_with_max_running_requests(config)
        configurator | return config
        configurator | config = self._resolve_memory_pool_config(pre_model_load_memory)
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | config: MemoryPoolConfig
        configurator | max_total_num_tokens = config.max_total_num_tokens
        configurator | max_total_num_tokens=max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return _PoolSizes(
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | max_total_num_tokens=sizes.max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return KVCacheConfigResult(
        model_runner | result = self.kv_cache_configurator.configure(
        model_runner | self.max_total_num_tokens = result.max_total_num_tokens
        """,
        """
        common          | free_gpu_memory, _ = torch.cuda.mem_get_info(gpu_id)
        common          | return free_gpu_memory / (1 << 30)
        bootstrap       | pre_model_load_memory = get_available_gpu_memory(
        bootstrap       | pre_model_load_memory=pre_model_load_memory,
        bootstrap       | pre_model_load_memory: float
        bootstrap       | return TorchDistributedResult(
        model_runner    | result = bootstrap.init_torch_distributed(
        model_runner    | self.pre_model_load_memory = result.pre_model_load_memory
        model_runner    | self
        model_runner    | resize = compute_post_capture_kv_resize(self)
        kv_pool_runtime | model_runner: ModelRunner
        kv_pool_runtime | headroom_gb = model_runner.pre_model_load_memory * (
        kv_pool_runtime | budget_bytes = (
        kv_pool_runtime | budget_bytes, cap_tokens=model_runner.max_total_num_tokens
        configurator    | budget_bytes: int
        configurator    | budget_bytes, self.server_args.page_size
        pools           | available_bytes: int
        pools           | max_total_num_tokens = available_bytes // self._cell_size
        pools           | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools           | max_total_num_tokens: int
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator    | config = configurator.calculate_pool_sizes(
        configurator    | return config
        kv_pool_runtime | config = model_runner.kv_cache_configurator.config_from_budget(
        kv_pool_runtime | max_total_num_tokens=config.max_total_num_tokens,
        kv_pool_runtime | max_total_num_tokens: int
        kv_pool_runtime | return PostCaptureKVResize(
        model_runner    | resize = compute_post_capture_kv_resize(self)
        model_runner    | self.max_total_num_tokens = resize.max_total_num_tokens
        """,
    ),
    ("0.5.23", "mem_fraction_static"): (
        """
        server_args  | add_cli_args_from_dataclass(parser, ServerArgs)
        server_args  | raw_args = parser.parse_args(argv)
        server_args  | server_args = ServerArgs.from_cli_args(raw_args)
        server_args  | args: argparse.Namespace
        server_args  | return cls(**{attr: getattr(args, attr) for attr in attrs})
        schedule     | mem_fraction_static: A[
        server_args  | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args  | server_args = ServerArgs.from_cli_args(raw_args)
        server_args  | return server_args
        serve        | server_args = prepare_server_args(list(request.argv))
        serve        | run_server(server_args)
        launch       | server_args
        launch       | launch_server(server_args)
        http         | server_args: ServerArgs
        http         | server_args=server_args,
        engine       | server_args: ServerArgs
        engine       | server_args, port_args, run_scheduler_process_func, **launch_kwargs
        engine       | server_args: ServerArgs
        engine       | args = (
        scheduler    | server_args: ServerArgs
        scheduler    | server_args,
        context      | server_args
        context      | return _configure_context(_CONTEXT, server_args, role=role, ranks=ranks)
        context      | server_args
        context      | context.set_server_args(server_args)
        context      | server_args: ServerArgs
        context      | self._config_bags = _build_config_bags(server_args)
        context      | server_args: Any
        context      | value = resolution_result(server_args, field, _MISSING)
        context      | value = resolution_result(server_args, field, _MISSING)
        context      | bag._set(field, value)
        context      | value: Any
        context      | bag = tops[parts[0]] = _ConfigBag(parts[0])
        context      | return tops
        context      | self._config_bags = _build_config_bags(server_args)
        context      | bags = self._config_bags
        context      | return bags[name]
        context      | return _CONTEXT.config_bag("schedule")
        configurator | slack_gb = pre_model_load_memory * (1 - get_schedule().mem_fraction_static)
        configurator | rest_memory = available_gpu_memory - slack_gb - mm_reservation_gb
        configurator | return int(rest_memory * (1 << 30))  # return in bytes
        configurator | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        configurator | config = self.config_from_budget(available_bytes)
        configurator | budget_bytes: int
        configurator | budget_bytes, get_schedule().page_size
        pools        | available_bytes: int
        pools        | available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)
        pools        | max_total_num_tokens = (
        pools        | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools        | max_total_num_tokens: int
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator | config = configurator.calculate_pool_sizes(
        configurator | return config
        configurator | config = self.config_from_budget(available_bytes)
        configurator | config = configurator.finalize_with_max_running_requests(config)
        pools        | config: MemoryPoolConfig
        pools        | return config
        configurator | config = configurator.finalize_with_max_running_requests(config)
        configurator | return config
        configurator | config = self._resolve_memory_pool_config(pre_model_load_memory)
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | config: MemoryPoolConfig
        configurator | max_total_num_tokens = config.max_total_num_tokens
        configurator | max_total_num_tokens *= loc_scale
        configurator | max_total_num_tokens=max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return _PoolSizes(
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | max_total_num_tokens=sizes.max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return KVCacheConfigResult(
        model_runner | result = self.kv_cache_configurator.configure(
        model_runner | self.max_total_num_tokens = result.max_total_num_tokens
        """,
        """
        server_args     | add_cli_args_from_dataclass(parser, ServerArgs)
        server_args     | raw_args = parser.parse_args(argv)
        server_args     | server_args = ServerArgs.from_cli_args(raw_args)
        server_args     | args: argparse.Namespace
        server_args     | return cls(**{attr: getattr(args, attr) for attr in attrs})
        schedule        | mem_fraction_static: A[
        server_args     | return cls(**{attr: getattr(args, attr) for attr in attrs})
        server_args     | server_args = ServerArgs.from_cli_args(raw_args)
        server_args     | return server_args
        serve           | server_args = prepare_server_args(list(request.argv))
        serve           | run_server(server_args)
        launch          | server_args
        launch          | launch_server(server_args)
        http            | server_args: ServerArgs
        http            | server_args=server_args,
        engine          | server_args: ServerArgs
        engine          | server_args, port_args, run_scheduler_process_func, **launch_kwargs
        engine          | server_args: ServerArgs
        engine          | args = (
        scheduler       | server_args: ServerArgs
        scheduler       | server_args,
        context         | server_args
        context         | return _configure_context(_CONTEXT, server_args, role=role, ranks=ranks)
        context         | server_args
        context         | context.set_server_args(server_args)
        context         | server_args: ServerArgs
        context         | self._config_bags = _build_config_bags(server_args)
        context         | server_args: Any
        context         | value = resolution_result(server_args, field, _MISSING)
        context         | value = resolution_result(server_args, field, _MISSING)
        context         | bag._set(field, value)
        context         | value: Any
        context         | bag = tops[parts[0]] = _ConfigBag(parts[0])
        context         | return tops
        context         | self._config_bags = _build_config_bags(server_args)
        context         | bags = self._config_bags
        context         | return bags[name]
        context         | return _CONTEXT.config_bag("schedule")
        tp_worker       | mem_fraction_static=get_schedule().mem_fraction_static,
        model_runner    | mem_fraction_static: float
        model_runner    | self.mem_fraction_static = mem_fraction_static
        model_runner    | self
        model_runner    | resize = compute_post_capture_kv_resize(self, draft_runners=draft_runners)
        kv_pool_runtime | model_runner: ModelRunner
        kv_pool_runtime | headroom_gb = model_runner.pre_model_load_memory * (
        kv_pool_runtime | budget_bytes = (
        kv_pool_runtime | budget_bytes, cap_tokens=model_runner.max_total_num_tokens
        configurator    | budget_bytes: int
        configurator    | budget_bytes, get_schedule().page_size
        pools           | available_bytes: int
        pools           | available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)
        pools           | max_total_num_tokens = (
        pools           | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools           | max_total_num_tokens: int
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator    | config = configurator.calculate_pool_sizes(
        configurator    | return config
        kv_pool_runtime | config = model_runner.kv_cache_configurator.config_from_budget(
        kv_pool_runtime | max_total_num_tokens=config.max_total_num_tokens,
        kv_pool_runtime | max_total_num_tokens: int
        kv_pool_runtime | return PostCaptureKVResize(
        model_runner    | resize = compute_post_capture_kv_resize(self, draft_runners=draft_runners)
        model_runner    | self.max_total_num_tokens = resize.max_total_num_tokens
        """,
    ),
    ("0.5.23", "pre_model_load_memory"): (
        """
        common       | free_gpu_memory, _ = torch.cuda.mem_get_info(gpu_id)
        common       | return free_gpu_memory / (1 << 30)
        bootstrap    | pre_model_load_memory = get_available_gpu_memory(
        bootstrap    | return pre_model_load_memory
        model_runner | self.pre_model_load_memory = bootstrap.measure_pre_model_load_memory(
        model_runner | pre_model_load_memory=self.pre_model_load_memory
        configurator | pre_model_load_memory: int
        configurator | config = self._resolve_memory_pool_config(pre_model_load_memory)
        configurator | pre_model_load_memory: int
        configurator | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        configurator | pre_model_load_memory: int
        configurator | slack_gb = pre_model_load_memory * (1 - get_schedule().mem_fraction_static)
        configurator | rest_memory = available_gpu_memory - slack_gb - mm_reservation_gb
        configurator | return int(rest_memory * (1 << 30))  # return in bytes
        configurator | available_bytes = self._profile_available_bytes(pre_model_load_memory)
        configurator | config = self.config_from_budget(available_bytes)
        configurator | budget_bytes: int
        configurator | budget_bytes, get_schedule().page_size
        pools        | available_bytes: int
        pools        | available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)
        pools        | max_total_num_tokens = (
        pools        | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools        | max_total_num_tokens: int
        pools        | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator | config = configurator.calculate_pool_sizes(
        configurator | return config
        configurator | config = self.config_from_budget(available_bytes)
        configurator | config = configurator.finalize_with_max_running_requests(config)
        pools        | config: MemoryPoolConfig
        pools        | return config
        configurator | config = configurator.finalize_with_max_running_requests(config)
        configurator | return config
        configurator | config = self._resolve_memory_pool_config(pre_model_load_memory)
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | config: MemoryPoolConfig
        configurator | max_total_num_tokens = config.max_total_num_tokens
        configurator | max_total_num_tokens *= loc_scale
        configurator | max_total_num_tokens=max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return _PoolSizes(
        configurator | sizes = self._derive_pool_sizes(config=config)
        configurator | max_total_num_tokens=sizes.max_total_num_tokens,
        configurator | max_total_num_tokens: int
        configurator | return KVCacheConfigResult(
        model_runner | result = self.kv_cache_configurator.configure(
        model_runner | self.max_total_num_tokens = result.max_total_num_tokens
        """,
        """
        common          | free_gpu_memory, _ = torch.cuda.mem_get_info(gpu_id)
        common          | return free_gpu_memory / (1 << 30)
        bootstrap       | pre_model_load_memory = get_available_gpu_memory(
        bootstrap       | return pre_model_load_memory
        model_runner    | self.pre_model_load_memory = bootstrap.measure_pre_model_load_memory(
        model_runner    | self.pre_model_load_memory += preloaded_weights_bytes / (1 << 30)
        model_runner    | self
        model_runner    | resize = compute_post_capture_kv_resize(self, draft_runners=draft_runners)
        kv_pool_runtime | model_runner: ModelRunner
        kv_pool_runtime | headroom_gb = model_runner.pre_model_load_memory * (
        kv_pool_runtime | budget_bytes = (
        kv_pool_runtime | budget_bytes, cap_tokens=model_runner.max_total_num_tokens
        configurator    | budget_bytes: int
        configurator    | budget_bytes, get_schedule().page_size
        pools           | available_bytes: int
        pools           | available_bytes = max(available_bytes - self._fixed_overhead_bytes, 0)
        pools           | max_total_num_tokens = (
        pools           | max_total_num_tokens = max_total_num_tokens // page_size * page_size
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        pools           | max_total_num_tokens: int
        pools           | return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)
        configurator    | config = configurator.calculate_pool_sizes(
        configurator    | return config
        kv_pool_runtime | config = model_runner.kv_cache_configurator.config_from_budget(
        kv_pool_runtime | max_total_num_tokens=config.max_total_num_tokens,
        kv_pool_runtime | max_total_num_tokens: int
        kv_pool_runtime | return PostCaptureKVResize(
        model_runner    | resize = compute_post_capture_kv_resize(self, draft_runners=draft_runners)
        model_runner    | self.max_total_num_tokens = resize.max_total_num_tokens
        """,
    ),
}

VLLM_GPU_MEMORY = """
        arg_utils    | cache_group.add_argument(
        entry        | args = parser.parse_args()
        entry        | uvloop.run(run_server(args))
        entry        | args
        entry        | await run_server_worker(listen_address, sock, args, **uvicorn_kwargs)
        entry        | args
        entry        | args,
        entry        | args: Namespace
        entry        | engine_args = AsyncEngineArgs.from_cli_args(args)
        arg_utils    | args: argparse.Namespace
        arg_utils    | **{attr: getattr(args, attr) for attr in attrs if hasattr(args, attr)}
        arg_utils    | gpu_memory_utilization: float = CacheConfig.gpu_memory_utilization
        arg_utils    | gpu_memory_utilization=self.gpu_memory_utilization,
        cache        | gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)
        arg_utils    | cache_config = CacheConfig(
        arg_utils    | cache_config=cache_config,
        vllm         | cache_config: CacheConfig = Field(default_factory=CacheConfig)
        worker_base  | self.cache_config = vllm_config.cache_config
        gpu_worker   | init_snapshot, self.cache_config, external_weight_memory
        worker_utils | cache_config: CacheConfig
        worker_utils | requested_memory = math.ceil(
        worker_utils | return requested_memory
        gpu_worker   | self.requested_memory = request_memory(
"""


def steps_of(text: str) -> list[tuple[str, str]]:
    """`FILE | code` lines as (path, code)."""
    found = []
    for line in text.strip().splitlines():
        if not line.strip():
            continue  # (where two texts are joined)
        short, _, code = line.partition("|")
        found.append((FILES[short.strip()], code.strip()))
    return found


def routes_of(session, name: str, sinks: list[str]) -> list[list[tuple[str, str]]]:
    chain = trace(session.graph, name, sinks=sinks)
    steps = {s.id: s for s in chain.steps}
    assert chain.routes[0] == chain.spine
    return [
        [(steps[i].file, steps[i].code.splitlines()[0].strip()) for i in route]
        for route in chain.routes
    ]


@pytest.fixture(scope="module")
def package(release_cache):
    """`package("pypi:sglang==0.5.23")`: an indexed session, kept for this module only."""
    sessions = {}

    def get(spec: str):
        if spec not in sessions:
            os.environ["SGTRACE_CACHE"] = str(release_cache)
            sessions[spec] = open_session(spec, cache=FactCache(release_cache))
        return sessions[spec]

    yield get
    sessions.clear()


@pytest.mark.release
@pytest.mark.parametrize(("version", "name"), sorted(ROUTES))
def test_every_route_step_by_step(package, version, name):
    found = routes_of(package(f"pypi:sglang=={version}"), name, ["max_total_num_tokens"])
    assert found == [steps_of(route) for route in ROUTES[(version, name)]]


@pytest.mark.release
def test_another_codebase_from_its_flag_through_config_objects_to_the_formula(package):
    """vLLM: `--gpu-memory-utilization` is parsed into the API server's namespace (`args =
    parser.parse_args()`), handed down to `AsyncEngineArgs.from_cli_args(args)`, which copies
    it by name into EngineArgs; from there it is copied into a CacheConfig (a
    pydantic dataclass made by a decorator marked @dataclass_transform), which is kept in a
    VllmConfig, whose cache_config the worker keeps and passes to `request_memory`, where
    `requested_memory = math.ceil(total_memory * cache_config.gpu_memory_utilization)`. No
    line of the engine knows vLLM: the same rules as for SGLang."""
    session = package("pypi:vllm==0.33.0")
    found = routes_of(session, "gpu_memory_utilization", ["requested_memory"])
    assert found[0] == steps_of(VLLM_GPU_MEMORY)


VLLM_AVAILABLE_MEMORY = """
        gpu_worker   | self.available_kv_cache_memory_bytes = (
        gpu_worker   | int(self.available_kv_cache_memory_bytes),
        ipc_memory   | available_kv_cache_memory_bytes: int
        ipc_memory   | return available_kv_cache_memory_bytes
        gpu_worker   | return reserve_mm_ipc_gpu_memory(
        serial_utils | return func(*args, **kwargs)
        uniproc      | result = run_method(self.driver_worker, method, args, kwargs)
        uniproc      | return result if single_value else [result]
        executor     | return self.collective_rpc("determine_available_memory")
        engine_core  | available_gpu_memory = self.model_executor.determine_available_memory()
        engine_core  | vllm_config, kv_cache_specs, available_gpu_memory, global_kv_cache_groups
        kv_planning  | available_memory: list[int]
        kv_planning  | for projected_groups, kv_cache_spec_one_worker, available_memory_one_worker in zip(
        kv_planning  | num_blocks = (
"""  # noqa: E501 (a line of the release)


@pytest.mark.release
def test_a_result_back_out_of_a_method_run_by_its_name(package):
    """vLLM: the worker's `determine_available_memory` is run by its name
    (`collective_rpc("determine_available_memory")` -> `run_method(self.driver_worker,
    method, ...)` -> `getattr(obj, method)(*args, **kwargs)`, the driver a wrapper whose
    `__getattr__` hands the lookup to its `self.worker: WorkerBase`); its result comes back
    out through `run_method` and `collective_rpc` to the engine core, made by
    `executor_class(vllm_config)` (`executor_class: type[Executor]`), and on into the KV
    planning's block count."""
    session = package("pypi:vllm==0.33.0")
    found = routes_of(session, "Worker.available_kv_cache_memory_bytes", ["num_gpu_blocks"])
    assert found[0][: len(steps_of(VLLM_AVAILABLE_MEMORY))] == steps_of(VLLM_AVAILABLE_MEMORY)


# The namespace handed down to where `args.num_machines` is read, shared by both routes.
ACCELERATE_NAMESPACE = """
    acc_launch   | resource_args.add_argument(
    acc_launch   | args = parser.parse_args()
    acc_launch   | launch_command(args)
    acc_launch   | args
    acc_launch   | args, defaults, mp_from_config_flag = _validate_launch_command(args)
    acc_launch   | args
"""
ACCELERATE_NUM_MACHINES = (
    ACCELERATE_NAMESPACE
    + """
    acc_launch   | return args, defaults, mp_from_config_flag
    acc_launch   | args, defaults, mp_from_config_flag = _validate_launch_command(args)
    acc_launch   | deepspeed_launcher(args)
    acc_launch   | args
    acc_launch   | cmd, current_env = prepare_deepspeed_cmd_env(args)
    acc_utils    | args: argparse.Namespace
    acc_utils    | num_machines = args.num_machines
    acc_utils    | args.nproc_per_node = str(num_processes // num_machines)
"""
)
ACCELERATE_THREADS = (
    ACCELERATE_NAMESPACE
    + """
    acc_launch   | max(int(args.num_processes / args.num_machines), 1),
    acc_env      | default
    acc_env      | return default
    acc_launch   | local_size = get_int_from_env(
    acc_launch   | threads_per_process = int(psutil.cpu_count(logical=False) / local_size)
    acc_launch   | args.num_cpu_threads_per_process = threads_per_process
"""
)


@pytest.mark.release
def test_a_codebase_that_keeps_its_flags_in_the_parsed_namespace(package):
    """accelerate 1.2.1: `--num_machines` is added to an argument group of the parser
    `launch_command_parser` returns; `main` parses it and hands the namespace to
    `launch_command`, then `_validate_launch_command`, which reads `args.num_machines` into the
    default of `get_int_from_env` and keeps `threads_per_process` computed from it on the
    namespace. Two config classes declare a `num_machines` field too, but no flag names
    either: the flag's value stays in the namespace, at `.num_machines`, and the search
    follows the namespace step by step. No sink is named: the spine ends where the value is
    kept: the nearest place that keeps a value computed from it, the threads per process
    kept on the namespace (12 steps); the launchers' `args.nproc_per_node = str(num_processes
    // num_machines)` (14 steps) are other routes. No line of the engine knows
    accelerate."""
    session = package("pypi:accelerate==1.2.1")
    chain = trace(session.graph, "num_machines")
    steps = {s.id: s for s in chain.steps}
    routes = [
        [(steps[i].file, steps[i].code.splitlines()[0].strip()) for i in route]
        for route in chain.routes
    ]
    assert routes[0] == steps_of(ACCELERATE_THREADS)
    assert steps_of(ACCELERATE_NUM_MACHINES) in routes[1:]
    ends = {route[-1][1] for route in routes}
    assert "args.nnodes = str(num_machines)" in ends


LM_EVAL_BATCH_SIZE = """
    lm_main      | parser.add_argument(
    lm_main      | return parser.parse_args()
    lm_main      | args = parse_eval_args(parser)
    lm_main      | batch_size=args.batch_size,
    lm_evaluator | batch_size: Optional[Union[int, str]] = None
    lm_evaluator | {
    lm_model     | additional_config: Optional[dict] = None
    lm_model     | additional_config = {} if additional_config is None else additional_config
    lm_model     | additional_config = {
    lm_model     | return cls(**arg_dict, **additional_config)
    lm_hf        | batch_size: Optional[Union[int, str]] = 1
    lm_hf        | self.batch_size_per_gpu = int(batch_size)
"""


@pytest.mark.release
def test_a_codebase_that_picks_its_classes_from_a_registry(package):
    """lm-eval 0.4.5: `--batch_size` goes into `simple_evaluate`, which builds the model with
    `registry.get_model(model).create_from_arg_obj(model_args, {"batch_size": batch_size,
    ...})`: a class a decorator (`@register_model("hf", ...)`) keeps in a dict, a classmethod
    of its base `LM` that makes it with `cls(**arg_dict, **additional_config)`. No type says
    which class: the call graph's own rules find it, and the value kept at "batch_size" goes
    to `HFLM.__init__`'s `batch_size`: the spine, from the flag (the routes from the
    parameter itself, where nothing flows in by name, come after). No line of the engine
    knows lm-eval."""
    session = package("pypi:lm-eval==0.4.5")
    found = routes_of(session, "batch_size", ["batch_size_per_gpu"])
    assert found[0] == steps_of(LM_EVAL_BATCH_SIZE)


@pytest.mark.release
def test_without_a_sink_each_class_the_registry_may_make_is_a_route(package):
    """lm-eval 0.4.5 with no sink named: the flag's value ends where the classes the
    registry may make keep what they compute from it. The spine is the same way as with
    `--to batch_size_per_gpu` (the HF model's module is the one other models import); the
    NeMo model's `create_from_arg_string`, which puts the value at "batch_size" in a dict of
    its own (`args["batch_size"] = additional_config.get("batch_size", 1)`) and makes the class
    with `cls(**args)`, gives `batch_size` alone, not `devices`, as another route."""
    session = package("pypi:lm-eval==0.4.5")
    found = routes_of(session, "batch_size", [])
    assert found[0] == steps_of(LM_EVAL_BATCH_SIZE)
    nemo = [route for route in found if route[-1][0] == "lm_eval/models/nemo_lm.py"]
    assert nemo and nemo[0][-4:] == [
        (
            "lm_eval/models/nemo_lm.py",
            'args["batch_size"] = additional_config.get("batch_size", 1)',
        ),
        ("lm_eval/models/nemo_lm.py", "return cls(**args)"),
        ("lm_eval/models/nemo_lm.py", "batch_size: int = 1"),
        ("lm_eval/models/nemo_lm.py", "self._batch_size = int(batch_size)"),
    ]
