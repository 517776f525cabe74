#!/usr/bin/env bash
# Validation of `gpu-doctor run` on a real machine with two H200s (works with one: the
# two-GPU step is then skipped and says so). Budget: 6 minutes.
#
#   OUT=/some/dir validation/run.sh          (from the repo root, release binary built)
#
# Scenarios, each a real PyTorch job supervised by the release binary:
#   a  a training job whose starting batch (256) does not fit: gpu-doctor lowers it, raises
#      gradient accumulation, resumes from the newest checkpoint, and the job finishes;
#   b  the fragmentation pattern of testdata/h200/err-frag-oom-real.txt: fixed by
#      expandable_segments; then `gpu-doctor snapshot` reads the hook's snapshot;
#   c  another process holds most of every GPU: gpu-doctor waits until GPU 0's memory is back;
#   d  another process holds most of GPU 0 only: gpu-doctor moves the job to GPU 1;
# then bench/run/run.sh once (time to a working batch against accelerate).
# Everything observed goes under $OUT/run/. No GPU setting is changed. A failing step is
# logged and the script goes on.
set -u
: "${OUT:?set OUT to an output folder}"
D="$OUT/run"
mkdir -p "$D"
D=$(cd "$D" && pwd)
ROOT=$(pwd)
GD=${GPU_DOCTOR:-$ROOT/target/release/gpu-doctor}
PY=${PYTHON:-python3}
V="$ROOT/validation/run"
LOG="$D/steps.log"
: > "$LOG"

step() { # name, timeout seconds, command... (runs in $D/<name>/)
  local name=$1 limit=$2; shift 2
  local t0 t1 rc
  mkdir -p "$D/$name"
  t0=$(date +%s%3N)
  (cd "$D/$name" && timeout "$limit" "$@" > "$D/$name.out" 2> "$D/$name.err")
  rc=$?
  t1=$(date +%s%3N)
  printf '%-22s rc=%-3s %7d ms  %s\n' "$name" "$rc" $((t1 - t0)) "$*" | tee -a "$LOG"
}

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "binary: $GD"
  "$GD" --version 2>&1
  nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used --format=csv 2>&1
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())' 2>&1
} > "$D/about.txt"
NGPU=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
echo "gpus: $NGPU" | tee -a "$LOG"

# a. The batch does not fit; lowered 256 -> 128 -> 64 -> ..., accumulation raised, resumed.
step a_batch 150 env CUDA_VISIBLE_DEVICES=0 "$GD" run \
  --batch-arg --batch-size --accum-arg --grad-accum \
  --resume-arg '--resume {checkpoint}' --checkpoint-glob 'ckpt/*.pt' \
  --report "$D/a_batch.report.json" --run-dir "$D/a_batch/run" \
  -- "$PY" "$V/train.py" --batch-size 256 --steps 4 --short-steps 2

FOUND=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch"]["final"])' "$D/a_batch.report.json" 2>/dev/null || echo 32)
echo "a: batch found: $FOUND" | tee -a "$LOG"

# b. Fragmentation: fixed by expandable segments (both variables, the user's value kept).
step b_frag 120 env CUDA_VISIBLE_DEVICES=0 PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.9 "$GD" run \
  --report "$D/b_frag.report.json" --run-dir "$D/b_frag/run" \
  -- "$PY" "$V/frag.py"
SNAP=$(ls "$D"/b_frag/run/attempt-1/snapshot-*.pickle 2>/dev/null | head -1)
STATS=$(ls "$D"/b_frag/run/attempt-1/memory_stats-*.json 2>/dev/null | head -1)
echo "b: hook snapshot: ${SNAP:-none}; stats: ${STATS:-none}" | tee -a "$LOG"
if [ -n "$SNAP" ]; then
  step b_snapshot      60 "$GD" snapshot "$SNAP"
  step b_snapshot_json 60 "$GD" snapshot --json "$SNAP"
  ls -la "$SNAP" >> "$D/b_frag.out"
fi
[ -n "$STATS" ] && cp "$STATS" "$D/b_frag.memory_stats.json"

# c. Another process holds most of GPU 0 and leaves after 25 s. On one GPU gpu-doctor waits
# for the memory to come back; where another GPU has room it may move instead (d). Only GPU 0
# is hogged so that the rest of the validation, running on GPU 1 in parallel, keeps its memory.
HOGS=()
CUDA_VISIBLE_DEVICES=0 $PY "$V/hog.py" 120 25 > "$D/c_hog0.out" 2>&1 &
HOGS+=($!)
sleep 8   # let the hogs allocate
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > "$D/c_smi_before.txt" 2>&1
step c_wait 120 env CUDA_VISIBLE_DEVICES=0 "$GD" run --wait-timeout 90s --sample-interval 250ms \
  --report "$D/c_wait.report.json" --run-dir "$D/c_wait/run" \
  -- "$PY" "$V/need.py" 40
for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done

# d. Another process holds most of GPU 0 only: gpu-doctor moves the job to GPU 1.
if [ "$NGPU" -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=0 $PY "$V/hog.py" 120 60 > "$D/d_hog0.out" 2>&1 &
  HOG=$!
  sleep 8
  nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > "$D/d_smi_before.txt" 2>&1
  step d_move 90 env CUDA_VISIBLE_DEVICES=0 "$GD" run \
    --report "$D/d_move.report.json" --run-dir "$D/d_move/run" \
    -- "$PY" "$V/need.py" 40
  kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null
else
  echo "d_move: skipped (one GPU)" | tee -a "$LOG"
fi

# The benchmark, once: time to a working batch next to accelerate's find_executable_batch_size.
step bench 160 env RUNS=1 bash "$ROOT/bench/run/run.sh" "$D/bench" "$GD"

# A short summary of what each report says, for docs/validation.md.
for r in "$D"/*.report.json; do
  [ -e "$r" ] || continue
  $PY - "$r" <<'EOF' >> "$D/summary.txt" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[1].rsplit("/", 1)[-1], r["outcome"], "exit", r["exit_code"], "in %.1f s" % r["duration_seconds"])
for a in r["attempts"]:
    print("  %d exit %-3s %-18s %-20s %6.1f s peak %s env %s" % (
        a["attempt"], a["exit_code"], a["cause"], a["action"], a["duration_seconds"],
        a["peak_gpu_memory_bytes"], a["env_changes"]))
if r.get("batch"):
    print("  batch", r["batch"])
EOF
done
cat "$D/summary.txt" 2>/dev/null
echo "done; see $LOG" | tee -a "$LOG"
