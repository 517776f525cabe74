#!/usr/bin/env bash
# Real PyTorch memory snapshots on the GPU (a transformer training loop with random init, a
# leaking loop with a half-way snapshot, a fragmenting pattern that ends in an OOM, a
# stacks="all" run), torch's own numbers for each (memory_stats at dump time, the figures
# torch.cuda._memory_viz computes), `gpu-doctor snapshot` on each, hostile files, and the
# benchmark on a snapshot of several hundred MB next to Python's pickle.load.
# Run from the repo root with OUT set; writes $OUT/snapshot/. Budget: about 4 minutes.
set -u
B=target/release/gpu-doctor
D="$OUT/snapshot"; W="$D/work"; mkdir -p "$D" "$W"
L="$D/log.txt"
step() { echo "+ $*" >>"$L"; local s; s=$(date +%s%N); "$@"; local rc=$?; echo "exit $rc ($(( ($(date +%s%N) - s) / 1000000 )) ms)" >>"$L"; return 0; }

nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv >"$D/gpu.txt" 2>&1
python3 -c "import torch; print(torch.__version__, torch.version.cuda)" >>"$D/gpu.txt" 2>&1

# ONLY=large skips the small snapshots (for a pass that re-measures the benchmark alone).
SMALL_MODES="train leak frag-oom stacks-all"
[ "${ONLY:-}" = large ] && SMALL_MODES=""
for mode in $SMALL_MODES; do
  step timeout 75 python3 validation/snapshot/produce.py "$mode" "$W" >"$D/$mode.produce.log" 2>&1
  cp "$W/$mode.stats.json" "$D/" 2>>"$L"
  if [ -f "$W/$mode.pickle" ]; then
    step timeout 60 $B snapshot --json "$W/$mode.pickle" >"$D/$mode.gpu-doctor.json" 2>"$D/$mode.gpu-doctor.err"
    step timeout 60 $B snapshot --color never --html "$D/$mode.html" "$W/$mode.pickle" >"$D/$mode.gpu-doctor.txt" 2>&1
    echo "exit codes: json/text above; $mode size $(stat -c %s "$W/$mode.pickle")" >>"$L"
  fi
done
if [ -f "$W/leak-early.pickle" ] && [ -f "$W/leak.pickle" ]; then
  step $B snapshot diff --color never "$W/leak-early.pickle" "$W/leak.pickle" >"$D/leak-diff.txt" 2>&1
  step $B snapshot diff --json "$W/leak-early.pickle" "$W/leak.pickle" >"$D/leak-diff.json" 2>&1
fi
python3 validation/snapshot/compare.py "$D" >"$D/compare.txt" 2>&1

# Hostile files: each must be refused with exit 2 and a clear error.
for f in testdata/snapshots/evil-*.pickle testdata/snapshots/protocol0.pickle; do
  $B snapshot "$f" >/dev/null 2>"$D/hostile.tmp"; rc=$?
  echo "$(basename "$f"): exit $rc: $(head -c 300 "$D/hostile.tmp" | tr '\n' ' ')" >>"$D/hostile.txt"
done
rm -f "$D/hostile.tmp"

# Small real snapshots become fixtures (at most 3, each under 2 MB).
n=0
for mode in leak frag-oom train leak-early stacks-all; do
  f="$W/$mode.pickle"
  if [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 2000000 ] && [ $n -lt 3 ]; then cp "$f" "$D/"; n=$((n+1)); fi
done

# The large snapshot and the benchmark (then the large file is deleted).
step timeout 150 python3 validation/snapshot/produce.py large "$W" >"$D/large.produce.log" 2>&1
cp "$W/large.stats.json" "$D/" 2>>"$L"
if [ -f "$W/large.pickle" ]; then
  RUNS=${BENCH_RUNS:-1} step timeout 200 bash bench/snapshot/run.sh "$W/large.pickle" "$B" >"$D/bench.txt" 2>&1
  step timeout 60 $B snapshot --json "$W/large.pickle" >"$D/large.gpu-doctor.json" 2>"$D/large.gpu-doctor.err"
fi
rm -rf "$W"
echo done >>"$L"
