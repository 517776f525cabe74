#!/usr/bin/env bash
# Benchmark: does gpu-doctor sanitize keep up with compute-sanitizer?
#
# On a GPU machine, from the repository root, with the release binaries built:
#     cargo build --release -p gpu-doctor
#     cargo build --release -p gpu-doctor-sanitize --example condense
#     OUT=/tmp/bench bash bench/sanitize/run.sh
# It builds validation/sanitize/many_reports.cu (16 384 invalid writes in one launch) and
# times, in the same run, N times each:
#   1. plain `compute-sanitizer --tool memcheck --print-limit 0` (the peer), output to a file;
#   2. `gpu-doctor sanitize --json` on the same program (parses while it streams);
#   3. the parser alone over the saved log (`condense` example), in lines per second.
# It prints the ratio of (2) to (1): the cost of condensing on top of the sanitizer.
# Without a GPU, pass LOG=path/to/saved.log to run step 3 alone.
set -u
OUT="${OUT:-/tmp/gd-bench}"
D="$OUT/sanitize-bench"
mkdir -p "$D"
N="${N:-3}"
GD="${GD:-$PWD/target/release/gpu-doctor}"
CONDENSE="${CONDENSE:-$PWD/target/release/examples/condense}"
CS="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

if [ -z "${LOG:-}" ]; then
    BIN="$D/many_reports"
    nvcc -lineinfo -arch=sm_90 -o "$BIN" validation/sanitize/many_reports.cu || exit 1
    : >"$D/plain.times"
    : >"$D/gd.times"
    for i in $(seq "$N"); do
        t0=$(now)
        "$CS" --tool memcheck --print-limit 0 "$BIN" >"$D/plain.log" 2>&1
        t1=$(now)
        elapsed "$t0" "$t1" >>"$D/plain.times"
        t0=$(now)
        "$GD" sanitize --tool memcheck --json -- "$BIN" >"$D/gd.json" 2>"$D/gd.stderr"
        t1=$(now)
        elapsed "$t0" "$t1" >>"$D/gd.times"
    done
    plain=$(median <"$D/plain.times")
    gd=$(median <"$D/gd.times")
    echo "compute-sanitizer alone:     ${plain}s (median of $N)" | tee "$D/result.txt"
    echo "gpu-doctor sanitize:         ${gd}s (median of $N)" | tee -a "$D/result.txt"
    awk -v a="$plain" -v b="$gd" 'BEGIN { printf "ratio gpu-doctor/plain:      %.3f\n", b / a }' | tee -a "$D/result.txt"
    echo "reports printed: $(grep -c 'Invalid __global__' "$D/plain.log"), findings: $(grep -c '"code"' "$D/gd.json")" | tee -a "$D/result.txt"
    LOG="$D/plain.log"
fi
if [ -x "$CONDENSE" ]; then
    "$CONDENSE" "$LOG" 5 2>&1 >/dev/null | sed 's/^/parser alone: /' | tee -a "$D/result.txt"
else
    echo "parser alone: $CONDENSE missing (cargo build --release -p gpu-doctor-sanitize --example condense)" | tee -a "$D/result.txt"
fi
