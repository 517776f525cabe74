#!/usr/bin/env bash
# Recordings from a real GPU (idle, one process holding memory, memory growing and freed),
# `status` next to nvidia-smi on the same moment, and the status/recorder benchmark.
# Run from the repo root with OUT set; writes $OUT/status/.
set -u
B=target/release/gpu-doctor
D="$OUT/status"; mkdir -p "$D"
log() { echo "+ $*" >>"$D/log.txt"; "$@" >>"$D/log.txt" 2>&1; echo "exit $?" >>"$D/log.txt"; }

nvidia-smi >"$D/smi-idle.txt" 2>&1
$B status --color never >"$D/status-idle.txt" 2>&1
$B record -o "$D/rec-idle.ndjson" --interval 250ms --duration 3s 2>>"$D/log.txt"

python3 validation/status/hold.py 12 10 >"$D/hold.log" 2>&1 &
HOLD=$!
for _ in $(seq 60); do grep -q holding "$D/hold.log" 2>/dev/null && break; sleep 0.5; done
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits >"$D/smi-holding-gpu.csv" 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >"$D/smi-holding-apps.csv" 2>&1
$B status --json >"$D/status-holding.json" 2>&1
$B status --color never >"$D/status-holding.txt" 2>&1
$B record -o "$D/rec-holding.ndjson" --interval 250ms --duration 3s 2>>"$D/log.txt"
kill $HOLD 2>/dev/null; wait $HOLD 2>/dev/null

$B record -o "$D/rec-growing.ndjson" --interval 250ms --duration 12s 2>>"$D/log.txt" &
REC=$!
sleep 1
python3 validation/status/hold.py 0 16 --grow >"$D/grow.log" 2>&1
wait $REC

log $B status --source replay:"$D/rec-growing.ndjson" --color never
GPU_DOCTOR_NVML_LIB=/nonexistent/libnvidia-ml.so.1 $B status >"$D/no-driver.txt" 2>&1; echo "exit $?" >>"$D/no-driver.txt"

python3 bench/status/bench.py --bin $B --runs 20 --record-seconds 30 >"$D/bench.txt" 2>&1
echo done >>"$D/log.txt"
