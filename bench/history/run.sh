#!/usr/bin/env bash
# 30 days of 8-GPU history at 1 Hz: the store's size under the default retention, and the time
# to render a 24 h report from it (text, JSON and HTML), each the best of 3.
#   bench/history/run.sh        (from the repo root; builds what it needs)
set -eu
cargo build -q --release -p gpu-doctor -p gpu-doctor-store --example fill_30_days
T=${CARGO_TARGET_DIR:-target}/release
DB=${TMPDIR:-/tmp}/gpu-doctor-30d.db
rm -f "$DB" "$DB-wal" "$DB-shm"
s0=$(date +%s)
"$T"/examples/fill_30_days "$DB"
echo "filled in $(( $(date +%s) - s0 )) s; store size: $(du -b "$DB" | cut -f1) bytes ($(du -h "$DB" | cut -f1))"
sqlite_rows() { python3 -c "import sqlite3,sys;c=sqlite3.connect(sys.argv[1]);print(', '.join(f'{t} {c.execute(f\"select count(*) from {t}\").fetchone()[0]}' for t in ['device_raw','device_1s','device_1m','process_raw','process_1s','process_1m']))" "$DB"; }
echo "rows: $(sqlite_rows)"
for mode in "" "--json" "--html /tmp/gpu-doctor-30d.html"; do
  best=""
  for _ in 1 2 3; do
    s=$(date +%s.%N)
    "$T"/gpu-doctor report --since 24h --store "$DB" $mode >/dev/null || true
    e=$(date +%s.%N)
    t=$(python3 -c "print(f'{$e-$s:.3f}')")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $t < $best else 1)"; then best=$t; fi
  done
  echo "report --since 24h ${mode:-(text)}: best of 3 ${best} s"
done
rm -f "$DB" "$DB-wal" "$DB-shm" /tmp/gpu-doctor-30d.html
