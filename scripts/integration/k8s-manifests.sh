#!/usr/bin/env bash
# The Kubernetes side of gpu-doctor, checked without a cluster:
#   - deploy/kubernetes/*.yaml and the Helm chart rendered with default and with all-enabled
#     values validate strictly (no unknown fields) against the Kubernetes JSON schemas of
#     1.29 and 1.37 (kubernetes-validate from PyPI ships them);
#   - the prometheus-operator objects (PrometheusRule, ServiceMonitor), which have no schema
#     there, validate against the CRD subset below, and every copy of the alert rules equals
#     deploy/prometheus/rules.yml (and passes `promtool check rules` when promtool is here);
#   - the Grafana dashboard is well-formed and every gpu_doctor_* name it or the rules use is
#     a metric `serve` documents (docs/serve.md).
# `helm` is in no registry CI reaches, so the chart is rendered by lib/helm_render.py, which
# implements the template subset the chart uses and rejects anything else.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
need python3 kubernetes-validate
python3 -c 'import yaml, jsonschema' 2>/dev/null || die "python3 needs pyyaml and jsonschema; run scripts/install-test-deps.sh"
make_work k8s
cd "$INTEGRATION_ROOT"

chart=deploy/helm/gpu-doctor
log "rendering the Helm chart (defaults, and every option on)"
python3 scripts/integration/lib/helm_render.py "$chart" >"$WORK/chart-default.yaml"
python3 scripts/integration/lib/helm_render.py "$chart" \
  --set hostNvml.enabled=true --set runtimeClassName= --set hostPID=false \
  --set serviceMonitor.enabled=true --set prometheusRule.enabled=true \
  --set grafanaDashboard.enabled=true --set prometheusRule.labels.release=prometheus \
  >"$WORK/chart-all.yaml"

for version in 1.29.0 1.37.0; do
  for f in deploy/kubernetes/daemonset.yaml "$WORK/chart-default.yaml" "$WORK/chart-all.yaml"; do
    kubernetes-validate --strict --quiet -k "$version" "$f" >"$WORK/validate.log" 2>&1 \
      || die "$f does not validate against Kubernetes $version: $(cat "$WORK/validate.log")"
  done
  log "ok: manifests and chart validate against Kubernetes $version (strict)"
done

python3 - "$WORK" <<'PY'
import glob, json, re, sys, yaml, jsonschema

work = sys.argv[1]
fail = lambda msg: sys.exit(f"FAIL: {msg}")

# The parts of the prometheus-operator CRDs (monitoring.coreos.com/v1) these objects use.
meta = {"type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                       "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}
rule = {"type": "object", "required": ["expr"], "additionalProperties": False,
        "properties": {"alert": {"type": "string"}, "record": {"type": "string"},
                       "expr": {"type": "string"}, "for": {"type": "string", "pattern": r"^(\d+(ms|s|m|h|d|w|y))+$"},
                       "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                       "annotations": {"type": "object", "additionalProperties": {"type": "string"}}},
        "oneOf": [{"required": ["alert"]}, {"required": ["record"]}]}
schemas = {
    "PrometheusRule": {"type": "object", "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {"apiVersion": {"const": "monitoring.coreos.com/v1"}, "metadata": meta,
            "spec": {"type": "object", "required": ["groups"], "additionalProperties": False,
                "properties": {"groups": {"type": "array", "items": {"type": "object",
                    "required": ["name", "rules"], "additionalProperties": False,
                    "properties": {"name": {"type": "string"}, "interval": {"type": "string"},
                                   "rules": {"type": "array", "items": rule}}}}}}}},
    "ServiceMonitor": {"type": "object", "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {"apiVersion": {"const": "monitoring.coreos.com/v1"}, "metadata": meta,
            "spec": {"type": "object", "required": ["selector", "endpoints"], "additionalProperties": False,
                "properties": {"selector": {"type": "object", "properties": {"matchLabels": {"type": "object"}}},
                    "endpoints": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                        "properties": {"port": {"type": "string"}, "path": {"type": "string"},
                            "interval": {"type": "string"}, "relabelings": {"type": "array", "items": {
                                "type": "object", "additionalProperties": False,
                                "properties": {"sourceLabels": {"type": "array", "items": {"type": "string"}},
                                               "targetLabel": {"type": "string"}, "action": {"type": "string"},
                                               "regex": {"type": "string"}, "replacement": {"type": "string"}}}}}}}}}}},
}

source_rules = yaml.safe_load(open("deploy/prometheus/rules.yml"))
docs = []
for path in sorted(glob.glob("deploy/kubernetes/*.yaml")) + [f"{work}/chart-all.yaml", f"{work}/chart-default.yaml"]:
    docs += [(path, d) for d in yaml.safe_load_all(open(path)) if d]
kinds = {}
for path, d in docs:
    kinds.setdefault(d["kind"], []).append(path)
    if d["kind"] in schemas:
        try:
            jsonschema.validate(d, schemas[d["kind"]])
        except jsonschema.ValidationError as e:
            fail(f"{path}: {d['kind']}: {e.message} at {list(e.absolute_path)}")
    if d["kind"] == "PrometheusRule":
        if d["spec"] != source_rules:
            fail(f"{path}: the PrometheusRule's groups differ from deploy/prometheus/rules.yml")
        yaml.safe_dump(d["spec"], open(f"{work}/rules-from-{len(kinds['PrometheusRule'])}.yml", "w"))
for want in ["DaemonSet", "Service", "PrometheusRule", "ServiceMonitor", "ConfigMap"]:
    if want not in kinds:
        fail(f"no {want} among the manifests and the rendered chart")
print("ok: PrometheusRule and ServiceMonitor match the CRD subset; rules equal deploy/prometheus/rules.yml")

# The chart carries copies of the rules and the dashboard: they must be the same bytes.
for copy, src in [("deploy/helm/gpu-doctor/files/rules.yml", "deploy/prometheus/rules.yml"),
                  ("deploy/helm/gpu-doctor/files/gpu-doctor.json", "deploy/grafana/gpu-doctor.json")]:
    if open(copy).read() != open(src).read():
        fail(f"{copy} is not a copy of {src}: cp {src} {copy}")

# The dashboard.
dash = json.load(open("deploy/grafana/gpu-doctor.json"))
ids = [p["id"] for p in dash["panels"]]
if len(ids) != len(set(ids)):
    fail("dashboard panel ids repeat")
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
if not exprs or any(not e.strip() for e in exprs):
    fail("a dashboard panel has no query")

# Every metric name used is one serve documents.
documented = set(re.findall(r"`(gpu_doctor_[a-z_]+)", open("docs/serve.md").read()))
used = set()
for text in exprs + [r["expr"] for g in source_rules["groups"] for r in g["rules"]]:
    used |= set(re.findall(r"gpu_doctor_[a-z_]+", text))
missing = sorted(used - documented)
if missing:
    fail(f"dashboard or rules use metrics docs/serve.md does not list: {missing}")
print(f"ok: dashboard ({len(dash['panels'])} panels, {len(exprs)} queries) and rules use {len(used)} documented metrics")
PY
if command -v promtool >/dev/null 2>&1; then
  for f in "$WORK"/rules-from-*.yml; do
    promtool check rules "$f" >"$WORK/promtool.log" 2>&1 || die "promtool rejects the rules in $f: $(cat "$WORK/promtool.log")"
  done
  log "ok: promtool accepts every PrometheusRule's groups"
fi
log "kubernetes manifests passed"
