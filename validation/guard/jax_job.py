"""A JAX job under `gpu-doctor run --memory-limit`: reports the allocator limit JAX took from
XLA_PYTHON_CLIENT_MEM_FRACTION, allocates ALLOC_GIB, then tries TRY_GIB more, which should
not fit in the budget, and reports memory_stats() after each.

usage: jax_job.py ALLOC_GIB TRY_GIB"""

import json
import os
import sys

import jax
import jax.numpy as jnp

alloc, attempt = float(sys.argv[1]), float(sys.argv[2])
print("env", json.dumps({k: os.environ.get(k) for k in (
    "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_PREALLOCATE")}), flush=True)
dev = jax.devices()[0]
print("device", dev, flush=True)


def stats(label):
    s = dev.memory_stats() or {}
    keep = {k: s.get(k) for k in ("bytes_limit", "bytes_in_use", "peak_bytes_in_use", "bytes_reserved")}
    print(label, json.dumps(keep), flush=True)
    return s


stats("start")
a = jnp.ones((int(alloc * (1 << 30)) // 4,), dtype=jnp.float32)
a.block_until_ready()
stats("after %.1f GiB" % alloc)
try:
    b = jnp.ones((int(attempt * (1 << 30)) // 4,), dtype=jnp.float32)
    b.block_until_ready()
    stats("after %.1f GiB more (NOT kept to the budget)" % attempt)
    print("RESULT over-budget allocation succeeded", flush=True)
except Exception as e:  # XlaRuntimeError: RESOURCE_EXHAUSTED
    print("RESULT over-budget allocation refused:", type(e).__name__, str(e).splitlines()[0][:300], flush=True)
    stats("after the refused allocation")
