#!/usr/bin/env bash
# Validation of the NVML backend on a real GPU (budget: 60 s).
#
# Run from the repo root with the release binary built and OUT set:
#   OUT=/tmp/val bash validation/nvml.sh
# Writes everything it observes under $OUT/nvml/: each command, its output, exit status and
# wall time. It compares nvidia-smi with `gpu-doctor status --json` (and, when built,
# `target/release/nvml-probe`, which prints NvmlSource's inventory/samples/events and
# per-sample timings) while idle and while a PyTorch process holds ~10 GiB.
# It never changes GPU settings. A failing step is logged and the script goes on.
set -u

BIN=${BIN:-target/release/gpu-doctor}
PROBE=${PROBE:-target/release/nvml-probe}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${OUT:?set OUT to an output folder}"
DIR="$OUT/nvml"
mkdir -p "$DIR"
LOG="$DIR/log.txt"
: >"$LOG"

log() { printf '%s %s\n' "$(date +%H:%M:%S.%N | cut -c1-12)" "$*" | tee -a "$LOG" >&2; }

# step NAME TIMEOUT CMD...: runs CMD, saves stdout to NAME.out, stderr to NAME.err, and a
# line with the exit status and wall time to the log.
step() {
    local name=$1 limit=$2
    shift 2
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout "$limit" "$@" >"$DIR/$name.out" 2>"$DIR/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    log "step=$name rc=$rc wall_s=$(awk "BEGIN{printf \"%.3f\", $t1 - $t0}") cmd=$*"
    return 0
}

QUERY=index,uuid,name,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu,power.draw,clocks.sm,clocks.mem,pcie.link.gen.current,pcie.link.width.current

snapshot() {
    local phase=$1
    step "$phase-smi-gpu" 10 nvidia-smi --query-gpu=$QUERY --format=csv,noheader,nounits
    step "$phase-smi-apps" 10 nvidia-smi --query-compute-apps=pid,used_memory --format=csv
    step "$phase-status" 10 "$BIN" status --json
    if [ -x "$PROBE" ]; then
        step "$phase-probe" 20 "$PROBE" --samples 20 --interval-ms 50 --timing
    fi
}

log "start: $(uname -r), bin=$BIN probe=$PROBE"
step versions 10 nvidia-smi --query-gpu=driver_version,name,pci.bus_id,serial,compute_cap --format=csv
step nvidia-smi-q 15 nvidia-smi -q -d MEMORY,ECC,TEMPERATURE,PERFORMANCE,PIDS,CLOCK,POWER
[ -x "$BIN" ] || log "missing $BIN: status steps will fail (build with cargo build --release)"

# 1. Idle; and what each NVML call costs here (nvidia-ml-py), and what a sample costs us.
snapshot idle
step call-cost 20 python3 "$HERE/nvml/call_cost.py"
if [ -x "$PROBE" ]; then
    step probe-cpu-1000-samples 30 bash -c "time '$PROBE' --samples 1000 >/dev/null"
fi

# 2. A PyTorch process holding ~10 GiB.
log "starting the holder"
python3 "$HERE/nvml/hold_memory.py" 10 40 >"$DIR/holder.out" 2>"$DIR/holder.err" &
HOLDER=$!
ready=0
for _ in $(seq 1 60); do
    if grep -q '^ready' "$DIR/holder.out" 2>/dev/null; then ready=1; break; fi
    if ! kill -0 "$HOLDER" 2>/dev/null; then break; fi
    sleep 0.5
done
log "holder pid=$HOLDER ready=$ready: $(head -c 200 "$DIR/holder.out")"
if [ "$ready" = 1 ]; then
    snapshot busy
else
    log "holder did not get ready; see holder.err"
fi

# 3. Kill it and look once more: the process must be gone from both.
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null
sleep 1
step after-smi-apps 10 nvidia-smi --query-compute-apps=pid,used_memory --format=csv
step after-status 10 "$BIN" status --json

# 4. A missing library: a clear error, exit 2, no panic.
GPU_DOCTOR_NVML_LIB=/nonexistent/libnvidia-ml.so.1 step no-driver 10 "$BIN" status --json

log "done"
