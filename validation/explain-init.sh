#!/usr/bin/env bash
# Second validation of `gpu-doctor explain` on a real GPU: failures while another process holds
# the whole GPU (a fresh PyTorch, CuPy and JAX process cannot create its CUDA context), and a
# CPU allocation the host cannot give, and the fragmentation failure in a PID namespace of its
# own (as in a container). Saves what each printed and runs `explain` on it (text,
# --json, and --live while the holder still runs). Never changes GPU settings. About 2 minutes.
#
#   OUT=/tmp/out validation/explain-init.sh   (from the repo root, after cargo build --release)
set -u
cd "$(dirname "$0")/.."
. validation/explain/lib.sh
begin explain-init

step torch_host_alloc 60 "$PY" validation/explain/errors.py torch_host_alloc
explain torch_host_alloc

CUDA_VISIBLE_DEVICES=0 "$PY" validation/explain/errors.py hold_all > "$DIR/hold_all.out" 2>&1 &
holder=$!
for _ in $(seq 1 60); do grep -q holding "$DIR/hold_all.out" 2>/dev/null && break; sleep 1; done
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv >> "$DIR/env.txt" 2>&1
for c in torch_init_beside_full cupy_init_beside_full jax_init_beside_full; do
  step "$c" 120 env CUDA_VISIBLE_DEVICES=0 "$PY" validation/explain/errors.py "$c"
  explain "$c"
  explain "$c" --live
done
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# The fragmentation failure again, in a PID namespace of its own, as in a container: NVML
# reports the job under its host PID, so PyTorch cannot tell it is the job and lists it as
# `Process N has X memory in use` with no "this process" clause. Needs unshare (as root, or
# with user namespaces).
# (Driver 580 reports PIDs in the caller's namespace, so PyTorch still finds "this process"
# there: pass 9 in docs/validation.md.)
ns=""
if unshare --pid --fork --mount-proc true 2> /dev/null; then
  ns="unshare --pid --fork --mount-proc"
elif unshare --user --map-root-user --pid --fork --mount-proc true 2> /dev/null; then
  ns="unshare --user --map-root-user --pid --fork --mount-proc"
fi
if [ -n "$ns" ]; then
  step torch_frag_pid_namespace 120 $ns "$PY" validation/explain/errors.py torch_frag
  explain torch_frag_pid_namespace
else
  echo "torch_frag_pid_namespace: skipped (unshare cannot make a PID namespace here)" | tee -a "$LOG"
fi
echo "done; summary in $DIR/summary.txt" | tee -a "$LOG"
