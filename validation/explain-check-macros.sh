#!/usr/bin/env bash
# Validation of `gpu-doctor explain` on the reports of hand-written CUDA programs' check macros,
# made on a real GPU: the classic HANDLE_ERROR line after a kernel that traps, and a
# multi-line `CUDA Error:` ... `Error text:` report after an allocation larger than the GPU.
# Needs nvcc. Never changes GPU settings. Under a minute.
#
#   OUT=/tmp/out validation/explain-check-macros.sh   (from the repo root, after cargo build --release)
set -u
cd "$(dirname "$0")/.."
. validation/explain/lib.sh
begin explain-check-macros
step build 300 nvcc -o "$DIR/check_macros" validation/explain/check_macros.cu
for c in trap oom; do
  step "macro_$c" 60 "$DIR/check_macros" "$c"
  explain "macro_$c"
done
echo "done; summary in $DIR/summary.txt" | tee -a "$LOG"
