#!/usr/bin/env bash
# The footprint of `gpu-doctor serve` next to dcgm-exporter's published one.
#   bench/serve/run.sh                 10 minutes of wrk plus 2 minutes idle (release build)
#   LOAD_SECONDS=60 IDLE_SECONDS=30 bench/serve/run.sh     a quick run
# Writes bench/serve/results/<date>.txt (or $OUT/serve-bench.txt). See README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/integration/lib/common.sh
need wrk curl python3
LOAD_SECONDS=${LOAD_SECONDS:-600}
IDLE_SECONDS=${IDLE_SECONDS:-120}
out_dir=${OUT:-bench/serve/results}
mkdir -p "$out_dir"
report="$out_dir/serve-bench-$(date +%Y%m%d-%H%M%S).txt"
make_work serve-bench

# PROFILE=debug only to try the script quickly: the numbers that count are release ones.
PROFILE=${PROFILE:-release}
log "building the $PROFILE binary and the stand-in NVML driver"
if [ "$PROFILE" = release ]; then
  cargo build --quiet --release -p gpu-doctor -p fake-nvml
else
  cargo build --quiet -p gpu-doctor -p fake-nvml
fi
dir=target/$PROFILE
GPU_DOCTOR_BIN="$(realpath $dir/gpu-doctor)"
FAKE_NVML_LIB="$(realpath $dir/libfake_nvml.so)"
export GPU_DOCTOR_BIN FAKE_NVML_LIB

# 1. Idle: sampling 8 GPUs every 5 s (the default), no scrapes; then one scrape every 15 s
#    as Prometheus would. CPU as a fraction of one core, RSS at the end.
port=$(free_port)
GPU_DOCTOR_NVML_LIB="$FAKE_NVML_LIB" FAKE_NVML_SCENARIO="$(scenario eight-gpus)" \
  start_bg serve-idle "$GPU_DOCTOR_BIN" serve --listen "127.0.0.1:$port" >/dev/null
pid=${STARTED_PIDS[-1]}
wait_for 20 "serve" curl -sf "http://127.0.0.1:$port/healthz"
hz=$(getconf CLK_TCK)
t0=$(awk '{print $14 + $15}' "/proc/$pid/stat"); s0=$SECONDS
end=$((SECONDS + IDLE_SECONDS))
while [ "$SECONDS" -lt "$end" ]; do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics"; sleep 15; done
t1=$(awk '{print $14 + $15}' "/proc/$pid/stat"); s1=$SECONDS
idle_rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
idle_cpu=$(python3 -c "print(round(($t1 - $t0) / $hz / max($s1 - $s0, 1) * 100, 3))")
kill "$pid"

# 2. Sustained scraping: the integration load test, for LOAD_SECONDS.
LOAD_SECONDS=$LOAD_SECONDS OUT="$WORK" scripts/integration/serve-load.sh
load=$(cat "$WORK/serve-load.txt")
rss_end_kib=$(echo "$load" | sed -nE 's/^RSS: .* end [0-9]+ MiB \(([0-9]+) KiB\)/\1/p')
cpu_us=$(echo "$load" | sed -nE 's/^CPU per scrape: ([0-9.]+) us.*/\1/p')

# dcgm-exporter, as published (README.md has the sources): 71 MiB RSS and 15-20 % of a core
# at rest on a GPU node (NVIDIA/gpu-monitoring-tools#133); 405-512 MiB working set on 1-8 GPU
# nodes in production (pytorch/ci-infra#1011).
python3 - "$idle_rss" "$idle_cpu" "$rss_end_kib" "$cpu_us" >"$WORK/ratios.txt" <<'PY'
import sys
idle_rss_kib, idle_cpu, load_rss_kib, cpu_us = map(float, sys.argv[1:])
idle_mib, load_mib = idle_rss_kib / 1024, load_rss_kib / 1024
print(f"serve idle (8 GPUs, 5 s sampling, a scrape every 15 s): RSS {idle_mib:.1f} MiB, CPU {idle_cpu:.2f} % of a core")
print(f"serve after sustained scraping: RSS {load_mib:.1f} MiB; CPU per scrape {cpu_us:.0f} us")
print(f"dcgm-exporter published: RSS ~71 MiB, CPU 15-20 % of a core (gpu-monitoring-tools#133); working set 405-512 MiB (pytorch/ci-infra#1011)")
print(f"ratio RSS idle, dcgm-exporter / serve: {71 / idle_mib:.1f}x")
print(f"ratio CPU idle, dcgm-exporter (15 %) / serve: {15 / max(idle_cpu, 0.001):.0f}x")
PY
{
  echo "gpu-doctor serve benchmark, $(date -u +%FT%TZ), $(uname -srm), $(nproc) CPUs"
  echo "binary: $GPU_DOCTOR_BIN ($PROFILE); GPUs: stand-in NVML driver, scenario eight-gpus"
  echo
  cat "$WORK/ratios.txt"
  echo
  echo "$load"
} | tee "$report"
log "report: $report"
