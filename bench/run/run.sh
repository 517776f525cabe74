#!/usr/bin/env bash
# Time to a working batch, and the batch found: `gpu-doctor run` (a new process per attempt,
# the batch flag rewritten) next to accelerate's `find_executable_batch_size` (in-process
# retries), on the same job: validation/run/train.py for one full-length step, starting at a
# batch of 256 that does not fit. Needs a GPU, PyTorch and accelerate.
#
#   bench/run/run.sh [OUT_DIR] [BIN]        RUNS=2 by default
#
# accelerate runs with its default back-off (0.9) and with gpu-doctor's (0.5), so the difference
# that comes from the schedule and the one that comes from the process restarts can be told
# apart; gpu-doctor runs with its default 0.5 (GD_FACTORS="0.5 0.9" adds 0.9 too: about 20
# restarts of some 9 s each from 256 on an H200, over three minutes). Prints a table and ratios.
set -u
OUT=${1:-${OUT:-/tmp}/bench-run}
GD=${2:-target/release/gpu-doctor}
PY=${PYTHON:-python3}
RUNS=${RUNS:-2}
START=${START:-256}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case "$GD" in /*) ;; *) GD="$ROOT/$GD" ;; esac
mkdir -p "$OUT"
RES="$OUT/results.txt"
: > "$RES"

ms() { date +%s%3N; }

gd_once() { # factor run -> "batch attempts ms"
  local f=$1 r=$2 dir="$OUT/gd-$1-$2" t0 t1
  rm -rf "$dir"; mkdir -p "$dir"
  t0=$(ms)
  (cd "$dir" && "$GD" run --backoff 0 --batch-arg --batch-size --batch-factor "$f" \
     --max-attempts 20 --report report.json --run-dir run \
     -- "$PY" "$ROOT/validation/run/train.py" --batch-size "$START" --steps 1 --short-steps 0 \
     > out.txt 2> err.txt)
  t1=$(ms)
  $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); ok=r["outcome"]=="succeeded"; print(r["batch"]["final"] if ok else "failed", len(r["attempts"]), sys.argv[2])' \
    "$dir/report.json" $((t1 - t0)) 2>/dev/null || echo "? ? $((t1 - t0))"
}

acc_once() { # factor run -> "batch tries ms"
  local f=$1 r=$2 dir="$OUT/acc-$1-$2" t0 t1 line
  mkdir -p "$dir"
  local extra=()
  [ "$f" != default ] && extra=(--factor "$f")
  t0=$(ms)
  line=$($PY "$ROOT/bench/run/accel_find.py" --start "$START" "${extra[@]}" 2> "$dir/err.txt" | tail -1)
  t1=$(ms)
  echo "$line" > "$dir/out.txt"
  echo "$line" | awk -v ms=$((t1 - t0)) '{print $2, $4, ms}'
}

printf '%-34s %8s %9s %10s\n' "tool (back-off)" batch attempts "wall ms" | tee -a "$RES"
declare -A BEST
for r in $(seq 1 "$RUNS"); do
  for f in ${GD_FACTORS:-0.5}; do
    read -r b n t < <(gd_once "$f" "$r")
    printf '%-34s %8s %9s %10s\n' "gpu-doctor run ($f)" "$b" "$n" "$t" | tee -a "$RES"
    key="gd-$f"; [ -z "${BEST[$key]:-}" ] || [ "$t" -lt "${BEST[$key]%% *}" ] && BEST[$key]="$t $b"
  done
  for f in default 0.5; do
    read -r b n t < <(acc_once "$f" "$r")
    label=$([ "$f" = default ] && echo "accelerate (default 0.9)" || echo "accelerate ($f)")
    printf '%-34s %8s %9s %10s\n' "$label" "$b" "$n" "$t" | tee -a "$RES"
    key="acc-$f"; [ -z "${BEST[$key]:-}" ] || [ "$t" -lt "${BEST[$key]%% *}" ] && BEST[$key]="$t $b"
  done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "? (not run)" }'; }
best_ms() { local v=${BEST[$1]:-}; echo "${v%% *}"; }
{
  echo
  echo "best of $RUNS (wall ms, batch):"
  for k in gd-0.5 gd-0.9 acc-default acc-0.5; do echo "  $k: ${BEST[$k]:-?}"; done
  echo "time ratio gpu-doctor / accelerate, same 0.5 schedule: $(ratio "$(best_ms gd-0.5)" "$(best_ms acc-0.5)")"
  echo "time ratio gpu-doctor / accelerate, same 0.9 schedule: $(ratio "$(best_ms gd-0.9)" "$(best_ms acc-default)")"
  echo "time ratio, each with its default:                   $(ratio "$(best_ms gd-0.5)" "$(best_ms acc-default)")"
} | tee -a "$RES"
