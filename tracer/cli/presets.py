"""What SGLang users trace. The engine knows nothing of SGLang; the CLI applies these."""

from __future__ import annotations

# Where a traced value ends up when nothing else is asked: the KV-cache size in tokens.
SINKS = ("max_total_num_tokens",)

# The parameter whose formula `explain` evaluates against a server's log.
EXPLAIN_PARAMETER = "mem_fraction_static"

# The parameters an operator asks about first (audit's default set).
PARAMETERS = (
    "mem_fraction_static",
    "total_gpu_memory",  # the free memory measured before weights load (<= 0.5.11)
    "pre_model_load_memory",  # its name from 0.5.12
    "max_total_num_tokens",
    "max_running_requests",
    "chunked_prefill_size",
)

# The package, and where it usually lives on a GPU box.
PACKAGE = "sglang"
CHECKOUT_LOCATIONS = ("/sgl-workspace/sglang/python", "~/sglang/python", "/root/sglang/python")
