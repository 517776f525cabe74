#!/usr/bin/env bash
# Validation of `gpu-doctor sanitize` on a real GPU (NVIDIA H200, CUDA 13.0).
#
# Run from the repository root with the release binary at target/release/gpu-doctor:
#     OUT=/tmp/out bash validation/sanitize.sh
# Everything observed (commands, outputs, exit codes, timings) lands in $OUT/sanitize/.
# Budget: about 3 minutes. Nothing here changes GPU settings. A failing step is logged and
# the script goes on.
#
# Each planted bug in validation/sanitize/ is run twice: under plain `compute-sanitizer`
# (the raw log, kept to become a test fixture) and under `gpu-doctor sanitize --json`
# (the condensed findings). Then each raw log goes through `gpu-doctor explain`.
set -u

: "${OUT:?set OUT to an output folder}"
D="$OUT/sanitize"
mkdir -p "$D"
HERE="$(cd "$(dirname "$0")" && pwd)"
SRC="$HERE/sanitize"
GD="${GD:-$PWD/target/release/gpu-doctor}"
BUILD="${TMPDIR:-/tmp}/gd-sanitize-build.$$"
mkdir -p "$BUILD"
START=$(date +%s)
SUMMARY="$D/summary.tsv"
printf 'step\trc\tseconds\n' >"$SUMMARY"

log() { printf '[%s] %s\n' "$(date +%T)" "$*" | tee -a "$D/steps.log" >&2; }

# step NAME TIMEOUT CMD... : runs CMD with stdout/stderr to $D/NAME.out / .err, records the
# command, exit code and wall time; never stops the script.
step() {
    local name="$1" limit="$2"
    shift 2
    printf '%q ' "$@" >"$D/$name.cmd"
    echo >>"$D/$name.cmd"
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout --kill-after=5 "$limit" "$@" >"$D/$name.out" 2>"$D/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    printf '%s\t%s\t%s\n' "$name" "$rc" "$secs" >>"$SUMMARY"
    log "$name: rc=$rc ${secs}s"
    return 0
}

# --- where are we -----------------------------------------------------------------------
CS="$(command -v compute-sanitizer || true)"
for d in ${CUDA_HOME:+"$CUDA_HOME/bin"} /usr/local/cuda/bin /usr/local/cuda-*/bin /opt/cuda/bin; do
    [ -z "$CS" ] && [ -x "$d/compute-sanitizer" ] && CS="$d/compute-sanitizer"
done
log "compute-sanitizer: ${CS:-not found}; gpu-doctor: $GD"
{
    echo "date: $(date -Is)"
    echo "compute-sanitizer: ${CS:-not found}"
    [ -n "$CS" ] && "$CS" --version
    command -v nvcc && nvcc --version
    nvidia-smi -L
    nvidia-smi --query-gpu=driver_version --format=csv,noheader
    python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
    ls -d /usr/local/cuda* /opt/cuda 2>/dev/null
} >"$D/env.txt" 2>&1
[ -n "$CS" ] && "$CS" --help >"$D/compute-sanitizer-help.txt" 2>&1
if [ ! -x "$GD" ]; then
    log "WARNING: $GD missing: only the raw compute-sanitizer logs will be collected"
fi
if [ -z "$CS" ]; then
    log "compute-sanitizer not found: collecting only the gpu-doctor error"
    [ -x "$GD" ] && step gd-missing 20 "$GD" sanitize -- true
    exit 0
fi

# --- build the planted bugs ----------------------------------------------------------------
for cu in oob_write race_shared uninit_read missing_sync divergent_barrier many_reports leak api_error; do
    step "build-$cu" 60 nvcc -lineinfo -arch=sm_90 -o "$BUILD/$cu" "$SRC/$cu.cu"
done

# case NAME TOOL TIMEOUT EXTRA_FLAGS -- CMD... : raw log, then gpu-doctor, then explain.
case_run() {
    local name="$1" tool="$2" limit="$3" extra="$4"
    shift 5
    # shellcheck disable=SC2086 # $extra is a list of flags
    step "raw-$name" "$limit" "$CS" --tool "$tool" --print-limit 0 $extra "$@"
    # the raw log: compute-sanitizer reports go to stdout by default; keep both streams
    cat "$D/raw-$name.out" "$D/raw-$name.err" >"$D/raw-$name.log"
    if [ -x "$GD" ]; then
        step "gd-$name" "$limit" "$GD" sanitize --tool "$tool" --json -- "$@"
        step "gd-$name-text" "$limit" "$GD" --color never sanitize --tool "$tool" -- "$@"
        step "explain-$name" 30 "$GD" explain --json "$D/raw-$name.log"
    fi
}

case_run oob_write memcheck 60 "" -- "$BUILD/oob_write"
case_run race_shared racecheck 60 "" -- "$BUILD/race_shared"
case_run uninit_read initcheck 60 "" -- "$BUILD/uninit_read"
case_run missing_sync racecheck 60 "" -- "$BUILD/missing_sync"
case_run divergent_barrier synccheck 60 "" -- "$BUILD/divergent_barrier"
case_run leak memcheck 60 "--leak-check full" -- "$BUILD/leak"
case_run api_error memcheck 60 "" -- "$BUILD/api_error"
# racecheck's per-hazard report (the default report is one line per race)
step raw-missing_sync-hazard 60 "$CS" --tool racecheck --racecheck-report hazard --print-limit 0 "$BUILD/missing_sync"
cat "$D/raw-missing_sync-hazard.out" "$D/raw-missing_sync-hazard.err" >"$D/raw-missing_sync-hazard.log"

# Triton under memcheck: each tensor its own cudaMalloc, or the overrun hides in a segment.
export PYTORCH_NO_CUDA_MEMORY_CACHING=1
case_run triton_oob memcheck 120 "" -- python3 "$SRC/triton_oob.py"
unset PYTORCH_NO_CUDA_MEMORY_CACHING

# ≥ 10 000 reports: plain compute-sanitizer (default print limit, then unlimited) against
# gpu-doctor sanitize; the line counts say how much each printed.
step many-plain-default 120 "$CS" --tool memcheck "$BUILD/many_reports"
case_run many_reports memcheck 120 "" -- "$BUILD/many_reports"
for f in raw-many_reports.log many-plain-default.out gd-many_reports-text.out gd-many_reports.json; do
    [ -f "$D/$f" ] && printf '%s\t%s lines\n' "$f" "$(wc -l <"$D/$f")" >>"$D/line-counts.txt"
done
if [ -x "$GD" ] && [ -f "$D/raw-many_reports.log" ]; then
    # the parser alone over the saved log
    step explain-many-timed 60 "$GD" explain --json "$D/raw-many_reports.log"
fi
# Keep the big log small enough to carry back: compressed, and the first 400 lines plain.
if [ -f "$D/raw-many_reports.log" ]; then
    head -n 400 "$D/raw-many_reports.log" >"$D/raw-many_reports.head.log"
    gzip -f -9 "$D/raw-many_reports.log"
fi
rm -f "$D/raw-many_reports.out" "$D/gd-many_reports.err" "$D/gd-many_reports-text.err"

rm -rf "$BUILD"
log "done in $(($(date +%s) - START))s"
