#!/usr/bin/env bash
# Validates `gpu-doctor serve` on a real GPU: its numbers against nvidia-smi (idle and under a
# PyTorch load), scrape latency, serve's own CPU and RSS, /healthz, malformed requests, and a
# real Prometheus when validation/serve/bin/prometheus was carried over (README.md there).
# Run from the repo root:  OUT=/tmp/out validation/serve.sh   (about 75 s; budget 90 s)
# Writes everything under $OUT/serve/. Never changes GPU settings. Keeps going when a step fails.
set -u
OUT=${OUT:?set OUT to an output folder}
D="$OUT/serve"
mkdir -p "$D"
BIN=${GPU_DOCTOR_BIN:-target/release/gpu-doctor}
PY=${PYTHON:-python3}
HERE=validation/serve
PORT=${SERVE_PORT:-19836}
LOG="$D/log.txt"
: >"$LOG"
step() { echo "== $(date +%T) $*" | tee -a "$LOG"; }
run() { echo "\$ $*" >>"$LOG"; "$@" >>"$LOG" 2>&1; local rc=$?; echo "(exit $rc)" >>"$LOG"; return $rc; }
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

step "environment"
run nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
run "$BIN" --version

step "serve on 127.0.0.1:$PORT, interval 1s"
"$BIN" serve --listen "127.0.0.1:$PORT" --interval 1s >"$D/serve.stdout" 2>"$D/serve.stderr" &
serve_pid=$!
pids+=("$serve_pid")
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done
curl -s -i "http://127.0.0.1:$PORT/healthz" >"$D/healthz.txt" 2>&1
cat "$D/healthz.txt" >>"$LOG"

snap() {  # snap NAME: a scrape and nvidia-smi, as close together as possible
  curl -s -H 'Accept: text/plain' "http://127.0.0.1:$PORT/metrics" >"$D/$1.metrics"
  nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw \
    --format=csv,noheader,nounits >"$D/$1.smi-gpu.csv" 2>&1
  nvidia-smi --query-compute-apps=gpu_bus_id,pid,used_memory --format=csv,noheader,nounits \
    >"$D/$1.smi-apps.csv" 2>&1
  echo "--- $1" >>"$D/compare.txt"
  $PY "$HERE/compare.py" "$D/$1.metrics" "$D/$1.smi-gpu.csv" "$D/$1.smi-apps.csv" >>"$D/compare.txt" 2>&1
  echo "(compare exit $?)" >>"$D/compare.txt"
}
: >"$D/compare.txt"
step "idle: serve vs nvidia-smi"
sleep 2
snap idle
curl -s -H 'Accept: application/openmetrics-text;version=1.0.0' "http://127.0.0.1:$PORT/metrics" >"$D/idle.openmetrics"

step "under load (validation/serve/load.py, 40 s)"
$PY "$HERE/load.py" 40 >"$D/load.txt" 2>&1 &
load_pid=$!
pids+=("$load_pid")
sleep 12
for i in 1 2 3 4; do snap "load-$i"; sleep 3; done

step "scrape latency: 200 scrapes"
ticks0=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat" 2>/dev/null || echo 0)
rss0=$(awk '/^VmRSS/ {print $2}' "/proc/$serve_pid/status" 2>/dev/null || echo 0)
t0=$(date +%s.%N)
for _ in $(seq 1 200); do
  curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/metrics"
done >"$D/scrape-times.txt"
t1=$(date +%s.%N)
ticks1=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat" 2>/dev/null || echo 0)
rss1=$(awk '/^VmRSS/ {print $2}' "/proc/$serve_pid/status" 2>/dev/null || echo 0)
$PY - "$D/scrape-times.txt" "$ticks0" "$ticks1" "$(getconf CLK_TCK)" "$rss0" "$rss1" "$t0" "$t1" >"$D/scrape-summary.txt" 2>&1 <<'PY'
import sys
t = sorted(float(x) for x in open(sys.argv[1]) if x.strip())
ticks0, ticks1, hz, rss0, rss1, t0, t1 = map(float, sys.argv[2:])
p = lambda q: t[min(len(t) - 1, int(q * len(t)))] * 1000
cpu = (ticks1 - ticks0) / hz
print(f"scrapes: {len(t)}; latency ms: p50 {p(0.5):.2f}, p99 {p(0.99):.2f}, max {t[-1]*1000:.2f}")
print(f"serve CPU over the scrapes and sampling: {cpu:.2f} s in {t1 - t0:.1f} s wall; per scrape <= {cpu / max(len(t), 1) * 1e6:.0f} us")
print(f"serve RSS: {rss0 / 1024:.1f} MiB before, {rss1 / 1024:.1f} MiB after")
PY
cat "$D/scrape-summary.txt" | tee -a "$LOG"

step "malformed requests"
$PY - "$PORT" >"$D/malformed.txt" 2>&1 <<'PY'
import socket, sys
port = int(sys.argv[1])
for name, raw in [
    ("POST", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"),
    ("garbage", bytes(range(256)) + b"\r\n\r\n"),
    ("no Host", b"GET /metrics HTTP/1.1\r\n\r\n"),
    ("64 KiB header", b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 65536 + b"\r\n\r\n"),
    ("unknown path", b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n"),
]:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(raw)
    except OSError:
        pass
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except OSError:
        pass
    first = data.split(b"\r\n", 1)[0].decode(errors="replace")
    print(f"{name}: {first}")
PY
cat "$D/malformed.txt" >>"$LOG"

PROM=validation/serve/bin/prometheus
if [ -x "$PROM" ]; then
  step "real Prometheus scraping serve for 20 s"
  pport=$((PORT + 1))
  cat >"$D/prometheus.yml" <<YAML
global: {scrape_interval: 2s, evaluation_interval: 2s}
rule_files: ["$PWD/deploy/prometheus/rules.yml"]
scrape_configs:
  - job_name: gpu-doctor
    static_configs: [{targets: ["127.0.0.1:$PORT"]}]
YAML
  "$PROM" --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/tsdb" \
    --web.listen-address="127.0.0.1:$pport" >"$D/prometheus.log" 2>&1 &
  pids+=("$!")
  sleep 20
  for q in up gpu_doctor_memory_used_bytes gpu_doctor_utilization_ratio gpu_doctor_temperature_celsius \
    gpu_doctor_power_draw_watts gpu_doctor_finding gpu_doctor_sample_age_seconds; do
    echo "# $q"; curl -s --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$q"; echo
  done >"$D/prometheus-query.txt" 2>&1
  nvidia-smi --query-gpu=index,memory.used,utilization.gpu,temperature.gpu,power.draw --format=csv >>"$D/prometheus-query.txt" 2>&1
  # What Prometheus stored against nvidia-smi now, per GPU (memory in MiB: the same unit).
  curl -s --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=gpu_doctor_memory_used_bytes" \
    >"$D/prometheus-memory.json" 2>&1
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits >"$D/prometheus-smi.csv" 2>&1
  $PY - "$D/prometheus-memory.json" "$D/prometheus-smi.csv" >"$D/prometheus-compare.txt" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
prom = {r["metric"].get("gpu"): float(r["value"][1]) / 2**20 for r in doc["data"]["result"]}
for line in open(sys.argv[2]):
    idx, used = [x.strip() for x in line.split(",")]
    got = prom.get(idx)
    verdict = "MISSING" if got is None else ("ok" if abs(got - float(used)) <= max(64, 0.02 * float(used)) else "DIFF")
    print(f"{verdict} gpu {idx}: prometheus {got if got is None else round(got)} MiB, nvidia-smi {used} MiB")
PY
  cat "$D/prometheus-compare.txt" | tee -a "$LOG"
  curl -s "http://127.0.0.1:$pport/api/v1/targets" >"$D/prometheus-targets.json" 2>&1
  curl -s "http://127.0.0.1:$pport/api/v1/rules" >"$D/prometheus-rules.json" 2>&1
else
  step "no validation/serve/bin/prometheus: real-Prometheus step skipped (see validation/serve/README.md)"
fi

wait "$load_pid" 2>/dev/null
cat "$D/load.txt" >>"$LOG"
step "summary"
grep -cE '^ok' "$D/compare.txt" | sed 's/^/compared values within tolerance: /' | tee -a "$LOG"
grep -E '^(DIFF|MISSING)' "$D/compare.txt" | tee -a "$LOG"
echo "done; see $D" | tee -a "$LOG"
