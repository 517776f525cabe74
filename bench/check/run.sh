#!/usr/bin/env bash
# Times `gpu-doctor check` next to `python3 -m torch.utils.collect_env` (the peer tool:
# PyTorch's own environment report) in the same run, N times each, and prints the ratio.
#
# usage: bench/check/run.sh [RUNS] [OUTDIR]
#   RUNS    runs of each tool (default 5)
#   OUTDIR  where the per-run times go (default: a temporary folder)
# env: GPU_DOCTOR (default target/release/gpu-doctor), PYTHON (default python3)
set -u
RUNS=${1:-5}
OUTDIR=${2:-$(mktemp -d)}
GD=${GPU_DOCTOR:-target/release/gpu-doctor}
PY=${PYTHON:-python3}
mkdir -p "$OUTDIR"

now_ms() { date +%s%3N; }

time_cmd() { # name, then the command
  local name=$1; shift
  local file="$OUTDIR/$name.ms"
  : > "$file"
  for i in $(seq 1 "$RUNS"); do
    local t0 t1
    t0=$(now_ms)
    "$@" > "$OUTDIR/$name.$i.out" 2> "$OUTDIR/$name.$i.err"
    echo "exit $? run $i" >> "$OUTDIR/$name.exits"
    t1=$(now_ms)
    echo $((t1 - t0)) >> "$file"
  done
}

stats() { # file -> "min median max"
  sort -n "$1" | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%d %d %d", a[1], m, a[NR]}'
}

# Cold: every framework imported in a fresh interpreter (what the first `check` on a machine
# or after a change costs). Warm: the usual run, reusing the probe cache the cold runs filled.
time_cmd check_fresh "$GD" check --fresh --color never
time_cmd check "$GD" check --color never
time_cmd check_json "$GD" check --json
time_cmd collect_env "$PY" -m torch.utils.collect_env

read -r f_min f_med f_max < <(stats "$OUTDIR/check_fresh.ms")
read -r c_min c_med c_max < <(stats "$OUTDIR/check.ms")
read -r j_min j_med j_max < <(stats "$OUTDIR/check_json.ms")
read -r p_min p_med p_max < <(stats "$OUTDIR/collect_env.ms")
{
  echo "runs: $RUNS each"
  printf '%-30s %8s %8s %8s\n' tool min_ms median_ms max_ms
  printf '%-30s %8d %8d %8d\n' "gpu-doctor check --fresh" "$f_min" "$f_med" "$f_max"
  printf '%-30s %8d %8d %8d\n' "gpu-doctor check" "$c_min" "$c_med" "$c_max"
  printf '%-30s %8d %8d %8d\n' "gpu-doctor check --json" "$j_min" "$j_med" "$j_max"
  printf '%-30s %8d %8d %8d\n' "torch.utils.collect_env" "$p_min" "$p_med" "$p_max"
  if [ "$c_med" -gt 0 ] && [ "$f_med" -gt 0 ]; then
    awk -v a="$p_med" -v b="$c_med" 'BEGIN {printf "ratio collect_env / check (median): %.2f\n", a / b}'
    awk -v a="$p_med" -v b="$f_med" 'BEGIN {printf "ratio collect_env / check --fresh (median): %.2f\n", a / b}'
  fi
  # Where check's time goes (from the last --json run).
  last="$OUTDIR/check_json.$RUNS.out"
  if [ -s "$last" ]; then
    "$PY" -c 'import json,sys; print("check timings_ms (last run):", json.load(open(sys.argv[1])).get("timings_ms"))' "$last" 2>/dev/null
  fi
} | tee "$OUTDIR/summary.txt"
