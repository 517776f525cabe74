#!/usr/bin/env bash
# The issue-5 benchmark alone: a real ~800 MB snapshot made on GPU 0 (produce.py large), then
# bench/snapshot/run.sh with RUNS=3 (pickle.load and gpu-doctor alternating on one quiet
# machine), and what gpu-doctor reads from it next to torch's own numbers.
#   OUT=/tmp/out validation/snapshot-bench.sh     (release binaries in .carry or target/release)
set -u
cd "$(dirname "$0")/.."
: "${OUT:?set OUT}"
mkdir -p target/release && cp .carry/* target/release/ 2>/dev/null
D=$OUT/snapshot-bench; W=${TMPDIR:-/tmp}/snapshot-bench; mkdir -p "$D" "$W"
{ nproc; uptime; nvidia-smi --query-gpu=name,driver_version --format=csv; } >"$D/machine.txt" 2>&1
CUDA_VISIBLE_DEVICES=0 timeout 150 python3 validation/snapshot/produce.py large "$W" >"$D/produce.log" 2>&1
cp "$W/large.stats.json" "$D/" 2>/dev/null
RUNS=${RUNS:-3} timeout 240 bash bench/snapshot/run.sh "$W/large.pickle" target/release/gpu-doctor >"$D/bench.txt" 2>&1
target/release/gpu-doctor snapshot --color never "$W/large.pickle" >"$D/large.txt" 2>&1
echo "exit $?" >>"$D/large.txt"
target/release/gpu-doctor snapshot --json "$W/large.pickle" >"$D/large.json" 2>/dev/null
rm -rf "$W"
head -12 "$D/bench.txt"
