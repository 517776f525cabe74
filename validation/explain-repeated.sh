#!/usr/bin/env bash
# Times `gpu-doctor explain` on one error line repeated (402 MB, the case the scanner's line
# memo is for) with two builds, alternating them, five runs with this build first and three with
# the older one first, so that a warm-up or a noisy moment of the machine does not fall on one
# build only. Prints user and wall time.
#
#   BIN=target/release/gpu-doctor PREV=/path/to/older/gpu-doctor validation/explain-repeated.sh
set -u
cd "$(dirname "$0")/.."
BIN="${BIN:-target/release/gpu-doctor}"
PREV="${PREV:?set PREV to the binary to compare with}"
rep="${TMPDIR:-/tmp}/gd-repeated.log"
. validation/explain/lib.sh
repeated_log "$rep"
echo "file: $(stat -c %s "$rep") bytes of one repeated error line; $(nproc) cores; $(uptime)"
timed() { # LABEL BINARY
  /usr/bin/time -o "$rep.time" -f "$1: %e s wall, %U s user, %S s sys, peak RSS %M KB" \
    "$2" explain --json "$rep" > /dev/null 2>&1
  grep -v "^Command exited" "$rep.time"  # explain exits 1: it found the failure
}
for i in 1 2 3 4 5; do
  timed "this build, run $i" "$BIN"
  timed "older build, run $i" "$PREV"
done
for i in 6 7 8; do
  timed "older build, run $i" "$PREV"
  timed "this build, run $i" "$BIN"
done
rm -f "$rep" "$rep.time"
