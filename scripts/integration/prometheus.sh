#!/usr/bin/env bash
# A real Prometheus (Debian's package) scrapes `gpu-doctor serve` running over the stand-in
# NVML driver (scenario: an H200 that takes an uncorrectable ECC error and Xid 48/63), with
# the shipped alert rules loaded. Checks:
#   - promtool accepts the rules and their unit tests pass;
#   - the target is up (Prometheus parsed our OpenMetrics), and the numbers it stored are the
#     scenario's (memory total/used, temperature, power);
#   - the finding gauge, the Xid counters and the ECC counters arrived, and the ECC and
#     finding alerts are pending or firing inside Prometheus;
#   - every PromQL expression in the Grafana dashboard evaluates without error.
# Bounded: about 30 s; every wait has a timeout.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
need prometheus promtool curl python3
make_work prometheus
build_binaries
cd "$INTEGRATION_ROOT"

log "promtool check rules / test rules"
promtool check rules deploy/prometheus/rules.yml >"$WORK/promtool-check.log" 2>&1 \
  || die "promtool check rules failed: $(cat "$WORK/promtool-check.log")"
(cd deploy/prometheus && promtool test rules rules.test.yml) >"$WORK/promtool-test.log" 2>&1 \
  || die "promtool test rules failed: $(cat "$WORK/promtool-test.log")"

serve_port=$(free_port)
prom_port=$(free_port)
log "gpu-doctor serve on 127.0.0.1:$serve_port (stand-in NVML, ecc-uncorrectable)"
GPU_DOCTOR_NVML_LIB="$FAKE_NVML_LIB" FAKE_NVML_SCENARIO="$(scenario ecc-uncorrectable)" \
  start_bg serve "$GPU_DOCTOR_BIN" serve --listen "127.0.0.1:$serve_port" --interval 1s >/dev/null
wait_for 20 "serve /healthz" curl -sf "http://127.0.0.1:$serve_port/healthz"

cat >"$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $INTEGRATION_ROOT/deploy/prometheus/rules.yml
scrape_configs:
  - job_name: gpu-doctor
    static_configs:
      - targets: ["127.0.0.1:$serve_port"]
YAML
promtool check config "$WORK/prometheus.yml" >"$WORK/promtool-config.log" 2>&1 \
  || die "promtool check config: $(cat "$WORK/promtool-config.log")"
log "prometheus on 127.0.0.1:$prom_port"
start_bg prometheus prometheus --config.file="$WORK/prometheus.yml" \
  --storage.tsdb.path="$WORK/tsdb" --web.listen-address="127.0.0.1:$prom_port" >/dev/null

api="http://127.0.0.1:$prom_port/api/v1"
target_up() {
  curl -sf "$api/targets" | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
sys.exit(0 if t and all(x["health"] == "up" for x in t) else 1)'
}
wait_for 40 "Prometheus to scrape serve successfully" target_up

# query EXPR: prints the instant-vector result as JSON lines "labels value".
query() {
  curl -sf --get "$api/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
for r in d["data"]["result"]:
    print(json.dumps(r["metric"], sort_keys=True), r["value"][1])'
}
# expect_value EXPR VALUE: the (single) result equals VALUE.
expect_value() {
  local got
  got=$(query "$1" | awk '{print $NF}')
  [ "$got" = "$2" ] || die "$1: expected $2, Prometheus has '${got}'"
  log "ok: $1 = $2"
}

# Wait until the ECC error (tick 2) and the row remap (tick 3) have been sampled.
has_finding() { [ -n "$(query 'gpu_doctor_finding{code="GD100"}')" ]; }
wait_for 30 "the GD100 finding to reach Prometheus" has_finding

# The scenario's numbers (crates/fake-nvml/scenarios/ecc-uncorrectable.json).
expect_value 'gpu_doctor_memory_total_bytes{gpu="0"}' 150754820096
expect_value 'gpu_doctor_memory_reserved_bytes{gpu="0"}' 644939776
expect_value 'gpu_doctor_temperature_celsius{gpu="0"}' 61
expect_value 'gpu_doctor_power_draw_watts{gpu="0"}' 512.34
expect_value 'gpu_doctor_utilization_ratio{gpu="0"}' 0.97
expect_value 'gpu_doctor_clock_sm_hertz{gpu="0"}' 1980000000
expect_value 'gpu_doctor_process_memory_used_bytes{gpu="0",pid="6100"}' 64424509440
expect_value 'gpu_doctor_ecc_errors_total{gpu="0",type="uncorrected",scope="volatile"}' 2
expect_value 'gpu_doctor_xid_total{gpu="0",xid="48"}' 1
expect_value 'gpu_doctor_remapped_rows_pending{gpu="0"}' 1
expect_value 'gpu_doctor_finding{code="GD100",cause="hw_xid",severity="error",gpu="0"}' 1
expect_value 'count(gpu_doctor_build_info)' 1
expect_value 'gpu_doctor_source_up' 1
age=$(query 'gpu_doctor_sample_age_seconds' | awk '{print $NF}')
python3 -c "import sys; sys.exit(0 if 0 <= float('$age') < 5 else 1)" || die "sample age $age s is not fresh"
log "ok: gpu_doctor_sample_age_seconds = $age"

# Alerts: the uncorrectable-ECC alert has no `for`, so it fires at the first evaluation; the
# error finding waits a minute, so it is at least pending.
alert_state() {
  curl -sf "$api/rules" | python3 -c '
import json, sys
name, want = sys.argv[1], sys.argv[2].split(",")
for g in json.load(sys.stdin)["data"]["groups"]:
    for r in g["rules"]:
        if r.get("name") == name and any(a["state"] in want for a in r.get("alerts", [])):
            sys.exit(0)
sys.exit(1)' "$1" "$2"
}
wait_for 20 "GpuDoctorUncorrectableEcc to fire" alert_state GpuDoctorUncorrectableEcc firing
log "ok: GpuDoctorUncorrectableEcc firing"
wait_for 20 "GpuDoctorFindingError to be pending" alert_state GpuDoctorFindingError pending,firing
log "ok: GpuDoctorFindingError pending"
if alert_state GpuDoctorGpuLost pending,firing; then die "GpuDoctorGpuLost fired on a healthy GPU"; fi
if alert_state GpuDoctorSampleStale pending,firing; then die "GpuDoctorSampleStale fired on a fresh exporter"; fi

# Every dashboard panel query evaluates (Grafana variables replaced by match-all regexes).
dashboard=deploy/grafana/gpu-doctor.json
if [ -f "$dashboard" ]; then
  n=0
  while IFS= read -r expr; do
    curl -sf --get "$api/query" --data-urlencode "query=$expr" >/dev/null \
      || die "dashboard query does not evaluate: $expr"
    n=$((n + 1))
  done < <(python3 - "$dashboard" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
for p in panels(d["panels"]):
    for t in p.get("targets", []):
        e = t.get("expr")
        if e:
            e = re.sub(r'\$__rate_interval|\$__interval', '1m', e)
            e = re.sub(r'"\$[a-z_]+"', '".*"', e)
            print(e.replace("\n", " "))
PY
)
  [ "$n" -gt 0 ] || die "the dashboard has no queries"
  log "ok: $n dashboard queries evaluate"
fi
log "prometheus integration passed"
