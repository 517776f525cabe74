#!/usr/bin/env bash
# The second GPU pass: what the first full pass (validation/all.sh) left unmeasured or showed
# failing, after the fixes. One call on a 2-GPU machine; everything lands in one archive.
#   OUT=/tmp/out validation/second-pass.sh   (then: cat $OUT/results.tgz.* | tar -xzf -)
#
# Phase 1, alone on the machine so the timings are not disturbed (about 3 minutes):
#   status vs nvidia-smi with the NVML phase timings, the recorder's and nvidia-smi's 10 Hz
#   loops with their memory maps (issue 2); check cold (--fresh) and warm next to collect_env
#   (issue 4).
# Phase 2, parallel streams (about 6 minutes):
#   A GPU 1: leak/plateau detection and the live monitor (7), serve with a real Prometheus
#            against nvidia-smi (8), watch next to nvitop and nvtop (7)
#   B GPU 1: budgets: run --memory-limit --enforce with two PyTorch jobs, JAX, guard (11)
#   C GPU 1: a real ~800 MB snapshot, timed next to pickle.load (5)
#   D GPU 0: run's time to a working batch next to accelerate (6), then explain on real
#            failures made on the GPU (3)
# Carried (ignored by git): .carry (release binaries), .whl (nvitop), .tools (prometheus.xz,
# the nvtop .deb and its libraries from Debian).
# RERUN=1 runs a shorter set for re-measuring after fixes: the status bench alone in phase 1,
# then budgets and the watch bench (GPU 1), the large snapshot (GPU 1) and the run bench
# (GPU 0), each on a GPU no other stream fills.
set -u
cd "$(dirname "$0")/.."
. validation/lib.sh
begin_results
mkdir -p target/release
cp .carry/* target/release/ 2>/dev/null
if [ -f .tools/prometheus.xz ]; then
  mkdir -p validation/serve/bin
  python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    .tools/prometheus.xz validation/serve/bin/prometheus && chmod +x validation/serve/bin/prometheus
fi
if ls .tools/nvtop_*.deb >/dev/null 2>&1 && ! command -v nvtop >/dev/null; then
  # Unpacked beside, never over /; its Debian libraries are used only if the system lacks them.
  for f in .tools/*.deb; do dpkg -x "$f" /tmp/nvtop-root; done
  mkdir -p /tmp/nvtop-bin
  printf '#!/bin/sh\nLD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/tmp/nvtop-root/lib/x86_64-linux-gnu:/tmp/nvtop-root/usr/lib/x86_64-linux-gnu exec /tmp/nvtop-root/usr/bin/nvtop "$@"\n' >/tmp/nvtop-bin/nvtop
  chmod +x /tmp/nvtop-bin/nvtop
  export PATH="$PATH:/tmp/nvtop-bin"
fi
{
  date -u; uname -a; nvidia-smi; nvidia-smi -L
  nvidia-smi --query-gpu=driver_version,name,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.device_count())'
  python3 -c 'import accelerate; print("accelerate", accelerate.__version__)'
  python3 -c 'import nvitop; print("nvitop", nvitop.__version__)'
  nvtop --version; ldd /tmp/nvtop-root/usr/bin/nvtop 2>&1 | grep -i "not found"
  validation/serve/bin/prometheus --version 2>&1 | head -1
  target/release/gpu-doctor --version
} >"$RESULTS/machine.txt" 2>&1

# ---- phase 1: alone ----------------------------------------------------------------------
mkdir -p "$RESULTS/quiet"
{
  echo "[$(date -u +%T)] status bench"
  timeout 150 python3 bench/status/bench.py --bin target/release/gpu-doctor --runs 20 \
    --record-seconds 20 --probe target/release/nvml-probe
  if [ -z "${RERUN:-}" ]; then
    echo "[$(date -u +%T)] check bench"
    timeout 150 bash bench/check/run.sh 5 "$RESULTS/quiet/check"
    target/release/gpu-doctor check --color never >"$RESULTS/quiet/check-warm.txt" 2>&1
    target/release/gpu-doctor check --json >"$RESULTS/quiet/check-warm.json" 2>&1
  fi
  echo "[$(date -u +%T)] phase 1 done"
} >"$RESULTS/quiet/bench.txt" 2>&1

# ---- phase 2: streams --------------------------------------------------------------------
if [ -n "${RERUN:-}" ]; then
  (
    step A 150 "$G1" bash validation/guard.sh
    mkdir -p "$RESULTS/watch"
    OUT_DIR="$RESULTS/watch" step A 110 "$G1" bash bench/watch/run.sh 15
  ) &
  PA=$!
  ( ONLY=large step C 240 "$G1" bash validation/snapshot.sh ) &
  PC=$!
  (
    mkdir -p "$RESULTS/run"
    RUNS=1 step D 170 0 bash bench/run/run.sh "$RESULTS/run/bench" target/release/gpu-doctor
  ) &
  PD=$!
  PB=$PD
else
  (
    step A 110 "$G1" bash validation/history.sh
    step A 100 "$G1" bash validation/serve.sh
    mkdir -p "$RESULTS/watch"
    OUT_DIR="$RESULTS/watch" step A 90 "$G1" bash bench/watch/run.sh 20
  ) &
  PA=$!
  ( step B 150 "$G1" bash validation/guard.sh ) &
  PB=$!
  ( ONLY=large step C 240 "$G1" bash validation/snapshot.sh ) &
  PC=$!
  (
    mkdir -p "$RESULTS/run"
    RUNS=1 step D 170 0 bash bench/run/run.sh "$RESULTS/run/bench" target/release/gpu-doctor
    step D 200 0 bash validation/explain.sh
  ) &
  PD=$!
fi
wait_streams "${BUDGET:-400}" $PA $PB $PC $PD
rm -rf "$RESULTS/serve/tsdb"
pack_results
