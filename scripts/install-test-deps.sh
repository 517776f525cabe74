#!/usr/bin/env bash
# Installs what the tests need beyond Rust, once; re-running is cheap.
set -euo pipefail
need_apt=()
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-venv)
# Integration tests of `serve` (scripts/integration/): a real Prometheus (ships promtool),
# a one-node Slurm with munge, wrk for load, and the Kubernetes schemas (PyPI).
command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
command -v slurmctld >/dev/null 2>&1 || need_apt+=(slurmctld slurmd slurm-client munge)
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
# The check tests make throwaway venvs (`python3 -m venv --without-pip`).
python3 -c 'import venv' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi
if ! command -v cargo-deny >/dev/null 2>&1; then
  cargo install --locked cargo-deny --quiet || echo "warning: cargo-deny could not be installed; the dependency policy is not checked" >&2
fi
# cargo-fuzz drives libFuzzer; fuzz/run.sh uses a nightly toolchain when there is one, else
# this stable one with RUSTC_BOOTSTRAP=1 (libFuzzer's sanitizer flags are nightly-only flags).
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz --quiet || echo "warning: cargo-fuzz could not be installed; fuzzing falls back to the randomized stable tests" >&2
fi
if ! command -v kubernetes-validate >/dev/null 2>&1 || ! python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  python3 -m pip install --quiet kubernetes-validate pyyaml jsonschema \
    || echo "warning: kubernetes-validate could not be installed; scripts/integration/k8s-manifests.sh will fail" >&2
fi
