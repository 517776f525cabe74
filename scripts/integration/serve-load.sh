#!/usr/bin/env bash
# `gpu-doctor serve` under sustained scraping on loopback, and under bad input:
#   - wrk for $LOAD_SECONDS (default 30) against /metrics with 4 connections: requests/s,
#     p99 latency, and the RSS of serve before and after (reported, and RSS growth beyond
#     16 MiB fails: it must stay flat);
#   - malformed requests sent as raw bytes get a 4xx/5xx status, and serve still answers;
#   - a replay (`--source replay:FILE`) serves metrics and stays healthy after it ends.
# Numbers go to $OUT/serve-load.txt when OUT is set (bench/serve/run.sh runs this for 10 min).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
need wrk curl python3
make_work serve-load
build_binaries
cd "$INTEGRATION_ROOT"
seconds=${LOAD_SECONDS:-30}
report="${OUT:-$WORK}/serve-load.txt"
mkdir -p "$(dirname "$report")"

port=$(free_port)
GPU_DOCTOR_NVML_LIB="$FAKE_NVML_LIB" FAKE_NVML_SCENARIO="$(scenario eight-gpus)" \
  start_bg serve "$GPU_DOCTOR_BIN" serve --listen "127.0.0.1:$port" --interval 1s >/dev/null
pid=${STARTED_PIDS[-1]}
wait_for 20 "serve /healthz" curl -sf "http://127.0.0.1:$port/healthz"
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
bytes=$(curl -sf "http://127.0.0.1:$port/metrics" | wc -c)
series=$(curl -sf "http://127.0.0.1:$port/metrics" | grep -vc '^#')

# Warm up, then measure.
wrk -t1 -c1 -d2s "http://127.0.0.1:$port/metrics" >/dev/null
rss_start=$(rss_kib)
ticks_start=$(cpu_ticks)
log "wrk: ${seconds}s, 4 connections, /metrics (8 GPUs, $series series, $bytes bytes)"
wrk -t2 -c4 -d"${seconds}s" --latency -H 'Accept: application/openmetrics-text;version=1.0.0' \
  "http://127.0.0.1:$port/metrics" >"$WORK/wrk.txt"
rss_end=$(rss_kib)
ticks_end=$(cpu_ticks)
rps=$(awk '/^Requests\/sec/ {print $2}' "$WORK/wrk.txt")
p99=$(awk '$1 == "99%" {print $2}' "$WORK/wrk.txt")
requests=$(awk '/requests in/ {print $1}' "$WORK/wrk.txt")
errors=$(grep -E 'Non-2xx|Socket errors' "$WORK/wrk.txt" || true)
hz=$(getconf CLK_TCK)
cpu_per_scrape_us=$(python3 -c "print(round(($ticks_end - $ticks_start) / $hz / max($requests, 1) * 1e6, 1))")
{
  echo "serve under wrk -t2 -c4 -d${seconds}s on /metrics (stand-in NVML, 8 GPUs, interval 1s)"
  echo "metrics body: $bytes bytes, $series series"
  echo "requests: $requests; requests/s: $rps; p99 latency: $p99"
  echo "CPU per scrape: ${cpu_per_scrape_us} us (serve's user+sys time / requests)"
  echo "RSS: start $((rss_start / 1024)) MiB ($rss_start KiB), end $((rss_end / 1024)) MiB ($rss_end KiB)"
  [ -n "$errors" ] && echo "wrk: $errors"
  cat "$WORK/wrk.txt"
} >"$report"
cat "$report" | head -6 >&2
[ -z "$errors" ] || die "errors under load: $errors"
[ $((rss_end - rss_start)) -lt 16384 ] || die "RSS grew by $(( (rss_end - rss_start) / 1024 )) MiB under load"

# Malformed requests: raw bytes over TCP, each must get the status named.
python3 - "$port" <<'PY'
import socket, sys
port = int(sys.argv[1])
cases = [
    ("POST with a body", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd", 405),
    ("TLS hello", bytes.fromhex("16030100a5010000a10303") + b"\r\n\r\n", 400),
    ("binary garbage", bytes(range(256)) + b"\r\n\r\n", 400),
    ("no Host", b"GET /metrics HTTP/1.1\r\n\r\n", 400),
    ("header without colon", b"GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", 400),
    ("absolute-form target", b"GET http://evil/metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("64 KiB header", b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 65536 + b"\r\n\r\n", 431),
    ("HTTP/3", b"GET / HTTP/3\r\nHost: x\r\n\r\n", 505),
    ("unknown path", b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n", 404),
]
for name, raw, want in cases:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(raw)
    except OSError:
        pass  # the server may close before reading a huge head; the status is what counts
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
    if status != want:
        sys.exit(f"FAIL: {name}: expected {want}, got {status}: {data[:80]!r}")
    print(f"ok: {name} -> {status}", file=sys.stderr)
PY
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || die "serve stopped answering after bad input"

# A replay serves and stays healthy after its last sample.
GPU_DOCTOR_NVML_LIB="$FAKE_NVML_LIB" FAKE_NVML_SCENARIO="$(scenario one-gpu-busy)" \
  "$GPU_DOCTOR_BIN" record --output "$WORK/rec.ndjson" --interval 100ms --count 5 >/dev/null 2>&1 \
  || die "could not record the replay fixture"
rport=$(free_port)
start_bg replay "$GPU_DOCTOR_BIN" --source "replay:$WORK/rec.ndjson" serve --listen "127.0.0.1:$rport" --interval 200ms >/dev/null
wait_for 20 "replay serve /healthz" curl -sf "http://127.0.0.1:$rport/healthz"
sleep 2  # past the recording's end (5 samples at 200 ms)
curl -sf "http://127.0.0.1:$rport/healthz" >/dev/null || die "replay serve unhealthy after the recording ended"
# The body is read whole first: with pipefail, `curl | grep -q` fails when grep stops reading
# early and curl gets SIGPIPE.
replay_metrics=$(curl -sf "http://127.0.0.1:$rport/metrics") || die "replay serve /metrics failed"
grep -q '^gpu_doctor_memory_total_bytes{gpu="0"' <<<"$replay_metrics" \
  || die "replay serve has no memory metric"
log "ok: replay served and healthy after its end"
log "serve load and bad-input test passed (report: $report)"
