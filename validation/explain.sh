#!/usr/bin/env bash
# Validation of `gpu-doctor explain` on a real GPU (written for one H200; driver 580, CUDA 13,
# PyTorch 2.11, CuPy, JAX, compute-sanitizer). Makes real failures (OOM shapes, device
# asserts, illegal and misaligned accesses, NCCL refusal, a leak, another process holding
# memory), saves what each printed, and runs `gpu-doctor explain` (text and --json) on it.
# Never changes GPU settings. Each step is logged and timed; a failing step does not stop the
# run. About 5 minutes.
#
#   OUT=/tmp/out validation/explain.sh      (from the repo root, after cargo build --release)
set -u
cd "$(dirname "$0")/.."
. validation/explain/lib.sh
begin explain

for c in torch_oom torch_frag torch_fraction torch_malloc_async torch_leak torch_eval_autograd torch_assert \
         torch_nll_assert torch_badordinal cupy_illegal cupy_misaligned cupy_oom jax_oom; do
  step "$c" 120 "$PY" validation/explain/errors.py "$c"
  explain "$c"
done

# NCCL: two ranks on one GPU.
step nccl_duplicate_gpu 120 "$PY" -m torch.distributed.run --nproc_per_node=2 validation/explain/errors.py nccl_duplicate_gpu
explain nccl_duplicate_gpu

# compute-sanitizer's report on the illegal write.
if command -v compute-sanitizer > /dev/null; then
  step sanitizer_illegal 180 compute-sanitizer --tool memcheck "$PY" validation/explain/errors.py cupy_illegal
  explain sanitizer_illegal
fi

# Another process holds 60 GiB: the OOM message names it; --live names it too.
"$PY" validation/explain/errors.py hold > "$DIR/hold.out" 2>&1 &
holder=$!
for _ in $(seq 1 60); do grep -q holding "$DIR/hold.out" 2>/dev/null && break; sleep 1; done
step torch_oom_beside_holder 120 "$PY" validation/explain/errors.py torch_oom_beside_holder
explain torch_oom_beside_holder
explain torch_oom_beside_holder --live
step live-json 60 "$BIN" explain --json --live "$DIR/torch_oom.out"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# The kernel log as this machine gives it (may need root; a refusal is a result too).
step kernel 60 "$BIN" explain --color never --kernel
step kernel-json 60 "$BIN" explain --json --kernel

# Throughput on this machine: a 1 GB synthetic log against grep.
step bench 300 env SIZE_MB=1024 BIN="$BIN" bench/explain/run.sh

echo "done; summary in $DIR/summary.txt" | tee -a "$LOG"
