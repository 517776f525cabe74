#!/usr/bin/env bash
# Fourth validation of `gpu-doctor explain` on a real GPU: CuPy and JAX running out of memory
# beside another process that holds 60 GiB. Their messages name no other process, so plain
# `explain` can only see the numbers; `explain --live` asks NVML who holds the GPU now (the
# holder still runs) and should name it. Never changes GPU settings. About a minute.
#
#   OUT=/tmp/out validation/explain-live.sh   (from the repo root, after cargo build --release)
set -u
cd "$(dirname "$0")/.."
. validation/explain/lib.sh
begin explain-live

"$PY" validation/explain/errors.py hold > "$DIR/hold.out" 2>&1 &
holder=$!
for _ in $(seq 1 60); do grep -q holding "$DIR/hold.out" 2>/dev/null && break; sleep 1; done
nvidia-smi --query-compute-apps=pid,used_memory --format=csv > "$DIR/apps.txt" 2>&1
for c in cupy_oom_beside_holder jax_oom_beside_holder; do
  step "$c" 180 "$PY" validation/explain/errors.py "$c"
  explain "$c"
  explain "$c" --live
done
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
echo "done; summary in $DIR/summary.txt" | tee -a "$LOG"
