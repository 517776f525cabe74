#!/usr/bin/env bash
# Validation of `gpu-doctor check` on a real GPU machine (budget: 60 s).
# Run from the repo root with the release binary built:  OUT=/some/dir validation/check.sh
# Writes everything under $OUT/check/. Reads only; changes no GPU setting. A failing step is
# logged and the script goes on.
set -u
: "${OUT:?set OUT to an output folder}"
D="$OUT/check"
mkdir -p "$D"
GD=${GPU_DOCTOR:-target/release/gpu-doctor}
LOG="$D/steps.log"
: > "$LOG"

step() { # name, timeout seconds, command...
  local name=$1 limit=$2; shift 2
  local t0 t1 rc
  t0=$(date +%s%3N)
  timeout "$limit" "$@" > "$D/$name.out" 2> "$D/$name.err"
  rc=$?
  t1=$(date +%s%3N)
  printf '%-24s rc=%-3s %6d ms  %s\n' "$name" "$rc" $((t1 - t0)) "$*" | tee -a "$LOG"
}

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "binary: $GD"
  "$GD" --version 2>&1
} > "$D/about.txt"

# The command itself, three ways, and the export.
step check              20 "$GD" check --color never
step check_json         20 "$GD" check --json
step check_export       20 "$GD" check --color never --export "$D/env.json"
step check_fail_on_warn 20 "$GD" check --color never --fail-on warn
# The peers whose values the check must match.
step nvidia_smi         10 nvidia-smi
step nvidia_smi_q       10 nvidia-smi -q
step nvidia_smi_query   10 nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,compute_cap,persistence_mode,mig.mode.current,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,retired_pages.pending,remapped_rows.pending,remapped_rows.failure,temperature.gpu,temperature.gpu.tlimit,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks_event_reasons.active --format=csv
step nvcc               10 nvcc --version
step collect_env        30 python3 -m torch.utils.collect_env
step proc_version        5 cat /proc/driver/nvidia/version
step dev_nodes           5 ls -l /dev/
step ldconfig            5 sh -c 'ldconfig -p | grep -E "nvidia-ml|libcuda\.|cudart|cudnn|nccl|cublas"'
step pip_nvidia         15 python3 -m pip list --format=freeze
step framework_versions 60 python3 validation/check/frameworks.py
# A diff of the machine against itself must be empty (exit 0).
step env_diff_self      10 "$GD" env diff "$D/env.json" "$D/env.json"
# Timing: check next to collect_env, 5 runs each.
step bench              60 bench/check/run.sh 5 "$D/bench"

echo "done; see $LOG" | tee -a "$LOG"
