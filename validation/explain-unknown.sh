#!/usr/bin/env bash
# Third validation of `gpu-doctor explain` on a real GPU: jobs that fail of causes that are not
# the GPU's (a shape bug on the GPU, a CPU index error, a JAX type error, a missing shared
# library, a native crash), which explain must report as a failure of no known GPU cause
# (GD579) or as the missing library (GD543), not as "no problem"; a CUDA-graph capture broken
# by a forbidden call (GD547, cause other); and NCCL's own debug trace of
# a refused communicator (`NCCL INFO ... -> 5`). Never changes GPU settings. About a minute.
#
#   OUT=/tmp/out validation/explain-unknown.sh   (from the repo root, after cargo build --release)
set -u
cd "$(dirname "$0")/.."
. validation/explain/lib.sh
begin explain-unknown

for c in torch_shape_mismatch torch_cpu_index jax_shape_mismatch missing_shared_lib torch_graph_capture; do
  step "$c" 120 "$PY" validation/explain/errors.py "$c"
  explain "$c"
done
# The crash as a shell reports it: bash prints `Segmentation fault (core dumped)` for a child
# it forked (the `; true` keeps it from exec'ing Python directly).
step python_segfault 120 bash -c "\"$PY\" validation/explain/errors.py python_segfault; true"
explain python_segfault

# Two ranks on one GPU with NCCL's debug output: its error return trace after the refusal.
step nccl_duplicate_gpu_debug 120 env NCCL_DEBUG=INFO "$PY" -m torch.distributed.run --nproc_per_node=2 validation/explain/errors.py nccl_duplicate_gpu
explain nccl_duplicate_gpu_debug
grep -c -- ' -> [1-6]' "$DIR/nccl_duplicate_gpu_debug.out" | sed 's/^/NCCL return-trace lines: /' | tee -a "$DIR/summary.txt"
echo "done; summary in $DIR/summary.txt" | tee -a "$LOG"
