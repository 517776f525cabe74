#!/usr/bin/env bash
# Re-checks `gpu-doctor explain` on a real GPU after rule changes: runs the four explain
# validations (real failures made on the GPU), then explains every failure output they saved
# with a previous binary too, and lists where the primary finding differs. Then the throughput
# benchmark, and a log of one error line repeated (the case the scanner's line memo is for),
# each next to grep in the same run.
#
#   OUT=/tmp/out BIN=target/release/gpu-doctor PREV=/path/to/older/gpu-doctor \
#     validation/explain-compare.sh
set -u
cd "$(dirname "$0")/.."
BIN="${BIN:-target/release/gpu-doctor}"
PREV="${PREV:?set PREV to the binary to compare with}"
OUT="${OUT:?set OUT to an output folder}"
export BIN OUT
PY="${PYTHON:-python3}"
. validation/explain/lib.sh

validation/explain.sh
validation/explain-unknown.sh
validation/explain-init.sh
validation/explain-live.sh

primary() { # BINARY FILE: the primary finding's code and cause
  "$1" explain --json "$2" 2>/dev/null | "$PY" -c 'import json,sys; t=sys.stdin.read(); d=json.loads(t[t.index("{"):]) if "{" in t else {}; f=d.get("findings") or [{}]; print(f[0].get("code","-"), f[0].get("cause","none"))'
}
compare="$OUT/compare.txt"
: > "$compare"
for f in "$OUT"/explain/*.out "$OUT"/explain-unknown/*.out "$OUT"/explain-init/*.out "$OUT"/explain-live/*.out; do
  case "$f" in *.explain.out|*.explain-json.out|*.explain--live.out|*.explain-json--live.out) continue ;; esac
  [ -f "$f" ] || continue
  now=$(primary "$BIN" "$f"); before=$(primary "$PREV" "$f")
  mark=same; [ "$now" = "$before" ] || mark=DIFFERENT
  echo "$mark $(basename "$(dirname "$f")")/$(basename "$f"): before [$before] now [$now]" >> "$compare"
done
echo "compared $(wc -l < "$compare") outputs, $(grep -c '^DIFFERENT' "$compare") differ" | tee -a "$compare"

SIZE_MB="${SIZE_MB:-1024}" LOG=/tmp/gd-bench.log bench/explain/run.sh > "$OUT/bench.txt" 2>&1

# One error line, repeated: 400 MB.
rep=/tmp/gd-repeated.log
repeated_log "$rep"
{
  echo "file: $(stat -c %s "$rep") bytes of one repeated error line"
  for b in "$BIN" "$PREV"; do
    /usr/bin/time -f "$b explain --json: %e s, peak RSS %M KB" "$b" explain --json "$rep" > /dev/null
  done
  # To a file: GNU grep notices /dev/null and stops at the first match.
  /usr/bin/time -f "grep -c CUDA: %e s, peak RSS %M KB" grep -c CUDA "$rep" > "$rep.count"
  /usr/bin/time -f "grep -c -E (7 words): %e s, peak RSS %M KB" \
    grep -c -E 'CUDA|memory|Xid|NCCL|CUBLAS|CUDNN|assert' "$rep" > "$rep.count"
} > "$OUT/repeated.txt" 2>&1
rm -f "$rep" "$rep.count" /tmp/gd-bench.log /tmp/gd-bench-quarter.log
