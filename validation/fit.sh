#!/usr/bin/env bash
# Checks `gpu-doctor fit` against measured peak memory on a real GPU (issue 9).
#
# Run from the repo root:  OUT=/tmp/out bash validation/fit.sh
# Needs: target/release/gpu-doctor, python3 with torch, transformers, accelerate; no internet.
# Writes under $OUT/fit/: fit.log (everything, timestamped), env.txt, configs/<case>.json,
# logs/<case>.json (measured), logs/<case>.fit.json (predicted), table.csv, table.md,
# pick.txt. Budget: 5 minutes. Changes no GPU setting. One step failing does not stop it.
set -u
: "${OUT:?set OUT to an output folder}"
BIN=${BIN:-target/release/gpu-doctor}
PY=${PYTHON:-python3}
JOBS=${FIT_JOBS:-3}  # measurements run in parallel; max_memory_allocated is per process
D="$OUT/fit"
mkdir -p "$D/configs" "$D/logs"
exec > >(tee -a "$D/fit.log") 2>&1
log() { echo "[$(date +%H:%M:%S)] $*"; }
START=$(date +%s)

log "environment"
{
  nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version --format=csv
  $PY -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
  $PY -c 'import accelerate; print("accelerate", accelerate.__version__)'
  "$BIN" --version
} >"$D/env.txt" 2>&1
cat "$D/env.txt"

log "measuring (one process per case, $JOBS at a time)"
CASES=$($PY validation/fit/measure.py --list) || { log "cannot list cases"; CASES=""; }
export PY D
# shellcheck disable=SC2016
printf '%s\n' $CASES | xargs -P "$JOBS" -I{} bash -c '
  t0=$(date +%s.%N)
  timeout 150 $PY validation/fit/measure.py --case {} --out "$D" >"$D/logs/{}.json" 2>"$D/logs/{}.err"
  rc=$?
  echo "measured {} rc=$rc in $(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || echo ?)s"
'

log "predicting with $BIN fit"
for c in $CASES; do
  cfg="$D/configs/$c.json"
  [ -f "$cfg" ] || { log "$c: no config (measurement failed), skipped"; continue; }
  args=$($PY validation/fit/measure.py --fit-args "$c")
  echo "+ $BIN fit --config $cfg $args --gpu-model H200 --json"
  # shellcheck disable=SC2086
  "$BIN" fit --config "$cfg" $args --gpu-model H200 --json >"$D/logs/$c.fit.json" 2>"$D/logs/$c.fit.err"
  echo "  rc=$?"
done
log "text output for one case (live GPU)"
args=$($PY validation/fit/measure.py --fit-args llama1b-train-amp)
# shellcheck disable=SC2086
"$BIN" fit --config "$D/configs/llama1b-train-amp.json" $args >"$D/fit-text.txt" 2>&1
echo "rc=$?"; cat "$D/fit-text.txt"

log "table"
$PY validation/fit/report.py "$D" || log "report failed"

log "pick on the live GPU"
{
  echo "+ $BIN pick --min-free 1GiB --lock-dir $D/locks --hold 5s"
  "$BIN" pick --min-free 1GiB --lock-dir "$D/locks" --hold 5s; echo "rc=$?"
  echo "+ $BIN pick --min-free 1GiB --lock-dir $D/locks --hold 5s  (second, GPU leased: expect rc=1 on a 1-GPU machine)"
  "$BIN" pick --min-free 1GiB --lock-dir "$D/locks" --hold 5s; echo "rc=$?"
  echo "+ $BIN pick --json --no-lock"
  "$BIN" pick --json --no-lock; echo "rc=$?"
} >"$D/pick.txt" 2>&1
cat "$D/pick.txt"
if [ $(( $(date +%s) - START )) -lt 220 ]; then
  log "bench: gpu-doctor fit vs accelerate's estimate (3 runs per config)"
  timeout 60 bash bench/fit/bench.sh 3 >"$D/bench.txt" 2>&1; echo "rc=$?"
  cat "$D/bench.txt"
else
  log "bench skipped: over the time budget"
fi
log "done in $(( $(date +%s) - START ))s"
