#!/usr/bin/env bash
# The whole GPU validation in one call on the device machine: area scripts run in parallel
# streams (each pinned to a GPU where it allocates memory) under per-script time limits, then
# everything under $OUT is packed into one archive (the device tool returns at most 8 files).
#   OUT=/tmp/out validation/all.sh   (then: cat $OUT/results.tgz.* | tar -xzf -)
set -u
cd "$(dirname "$0")/.."
. validation/lib.sh
begin_results
{
  date -u; uname -a; nvidia-smi; nvidia-smi -L
  nvidia-smi --query-gpu=driver_version,name,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.device_count())'
} >"$RESULTS/machine.txt" 2>&1

stream() { # name, then groups of "limit gpu script" separated by ::
  local name=$1; shift
  while [ $# -gt 0 ]; do
    local limit=$1 gpu=$2 script=$3; shift 3
    step "$name" "$limit" "$gpu" bash "$script"
    [ "${1:-}" = "::" ] && shift
  done
}
BUDGET=${BUDGET:-540}
# GPU 0 belongs to `run` (its scenarios fill it and move jobs to GPU 1); everything else
# shares GPU 1, ordered so that the leak detection runs before the snapshot's fragmentation
# pattern briefly fills that GPU. `explain` needs no GPU and is validated on the fixtures.
stream A 110 "$G1" validation/history.sh :: 80 "$G1" validation/status.sh :: 20 "$G1" validation/nvml.sh :: 50 "$G1" validation/check.sh :: 70 "$G1" validation/serve.sh :: 60 "$G1" bench/watch/run.sh &
PA=$!
stream B 170 "$G1" validation/sanitize.sh :: 130 "$G1" validation/guard.sh &
PB=$!
stream C 150 "$G1" validation/fit.sh :: 300 "$G1" validation/snapshot.sh &
PC=$!
stream D 330 "0,$G1" validation/run.sh &
PD=$!
# At the budget, pack whatever has been written, so the archive always comes back.
wait_streams "$BUDGET" $PA $PB $PC $PD
pack_results
