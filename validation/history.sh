#!/usr/bin/env bash
# Issue 7 on a real GPU: a leaking PyTorch loop must be flagged (GD581, cause oom_leak) within
# 60 s with a sensible time-to-OOM, while a job that warms up and then plateaus (with periodic
# evaluation spikes) must not be. Records to a file and to the history store at the same time,
# polls `report` every 5 s, and captures the live `watch` screen through a pseudo-terminal.
# Run from the repo root with OUT set; writes $OUT/history/. About 100 s.
set -u
B=$PWD/target/release/gpu-doctor
D="$OUT/history"; mkdir -p "$D"
DB="$D/history.db"
$B record -o "$D/rec-leak.ndjson" --store "$DB" --interval 500ms --duration 95s 2>>"$D/log.txt" &
REC=$!
sleep 2
# The jobs' own pids (each is the python process started here), not read from their logs:
# those are written only once torch has loaded, seconds later.
python3 validation/history/jobs.py plateau 90 >"$D/plateau.log" 2>&1 &
PLATEAU_PID=$!
python3 validation/history/jobs.py leak 85 >"$D/leak.log" 2>&1 &
LEAK_PID=$!
START=$(date +%s)
echo "leak pid $LEAK_PID plateau pid $PLATEAU_PID start $START" >>"$D/log.txt"
FIRST=""
for i in $(seq 1 17); do
  sleep 5
  NOW=$(date +%s)
  $B report --json --since 2m --store "$DB" >"$D/poll-$i.json" 2>>"$D/log.txt"
  python3 - "$D/poll-$i.json" "$LEAK_PID" "$PLATEAU_PID" $((NOW-START)) >>"$D/poll.txt" <<'PY'
import json, sys
path, leak, plateau, t = sys.argv[1], int(sys.argv[2] or 0), int(sys.argv[3] or 0), sys.argv[4]
try:
    doc = json.load(open(path))
except Exception as e:
    print(f"t={t}s unreadable: {e}"); sys.exit()
flags = [(int(f["evidence"][0]["values"].get("pid", -1)), f["evidence"][0]["values"].get("time_to_oom_seconds"), f["message"])
         for f in doc["findings"] if f["cause"] == "oom_leak"]
print(f"t={t}s leak_flagged={any(p == leak for p, _, _ in flags)} plateau_flagged={any(p == plateau for p, _, _ in flags)} {flags}")
PY
done
wait $REC
$B report --source replay:"$D/rec-leak.ndjson" --since 10m --html "$D/report.html" --png "$D/report.png" >"$D/report.txt" 2>&1
$B report --json --source replay:"$D/rec-leak.ndjson" --since 10m >"$D/report.json" 2>&1
# The live monitor on the real GPU, through a pseudo-terminal, 6 s at 10 Hz.
python3 validation/history/jobs.py plateau 12 >/dev/null 2>&1 &
sleep 3
if command -v script >/dev/null; then
  COLUMNS=120 LINES=44 timeout 6 script -qfec "stty cols 120 rows 44; $B watch --interval 100ms" "$D/watch.typescript" >/dev/null 2>&1
fi
wait
rm -f "$DB-wal" "$DB-shm"
echo done >>"$D/log.txt"
