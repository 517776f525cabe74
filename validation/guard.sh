#!/usr/bin/env bash
# Validation of memory budgets on a real H200 (issue 11): `run --memory-limit`, `guard`, and
# MIG/MPS in `status`. Budget: 2 minutes, on the caller's CUDA_VISIBLE_DEVICES (default GPU 0) only.
#
#   OUT=/some/dir validation/guard.sh          (from the repo root, release binary built)
#
# Steps (each logged with its exit status and time in $OUT/guard/steps.log):
#   status     `status --json` and the text screen: MIG instances and an MPS line, if any
#   a          two PyTorch jobs share GPU 0, each under `run --memory-limit 20GiB --enforce`:
#              `steady` holds 10 GiB; `grower` grows 2 GiB/s. With the hook, PyTorch's own
#              allocator is capped at the budget (set_per_process_memory_fraction): the grower
#              fails with an out-of-memory error inside its budget.
#   b          the same grower with --no-hook (PyTorch not told): gpu-doctor sees it pass
#              20 GiB in NVML and stops it (SIGTERM, grace, SIGKILL) with finding GD591.
#              `steady` must still be alive after a and b (its heartbeat file), then is ended.
#   c          a JAX job under `run --memory-limit 8GiB`: memory_stats() shows bytes_limit at
#              the budget less the context allowance (about 7.2 GiB), and 12 GiB more is
#              refused (XLA_PYTHON_CLIENT_MEM_FRACTION).
#   d          `guard --dry-run --once` and then `guard --once` with a budget file while a job
#              of user `nobody` holds 6 GiB on GPU 0 (root's processes are never touched,
#              so the job runs as nobody); the real guard stops it.
# If `run` has no --memory-limit (an older binary), a and b fall back to `guard` for the
# enforcement and say so. Nothing changes GPU settings; a failing step is logged and the
# script goes on. Everything observed goes under $OUT/guard/.
set -u
: "${OUT:?set OUT to an output folder}"
D="$OUT/guard"
mkdir -p "$D"
D=$(cd "$D" && pwd)
ROOT=$(pwd)
GD=${GPU_DOCTOR:-$ROOT/target/release/gpu-doctor}
PY=${PYTHON:-python3}
V="$ROOT/validation/guard"
LOG="$D/steps.log"
: > "$LOG"
# The caller's GPU (validation/all.sh gives each stream its own), else GPU 0. NVML numbers
# GPUs as nvidia-smi does, which is CUDA's order here (one index, no reordering).
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
GPU=${CUDA_VISIBLE_DEVICES%%,*}
T0=$(date +%s)

note() { echo "$*" | tee -a "$LOG"; }

step() { # name, timeout seconds, command... (output in $D/<name>.out/.err)
  local name=$1 limit=$2; shift 2
  local t0 t1 rc
  t0=$(date +%s%3N)
  timeout "$limit" "$@" > "$D/$name.out" 2> "$D/$name.err"
  rc=$?
  t1=$(date +%s%3N)
  printf '%-18s rc=%-3s %7d ms  %s\n' "$name" "$rc" $((t1 - t0)) "$*" | tee -a "$LOG"
}

# Starts a command in the background (own output files); prints its pid.
start_bg() { # name, command...
  local name=$1; shift
  "$@" > "$D/$name.out" 2> "$D/$name.err" &
  echo $!
}

# GPU memory of every compute process, for the record.
smi_apps() { # label
  {
    echo "== $1 ($(date +%T.%3N))"
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv 2>&1
  } >> "$D/nvidia-smi-apps.txt"
}

alive_since() { # heartbeat file, seconds: whether it was touched within that many seconds
  local f=$1 s=$2 now then
  [ -f "$f" ] || return 1
  now=$(date +%s)
  then=$(cut -d. -f1 "$f" 2>/dev/null || echo 0)
  [ $((now - then)) -le "$s" ]
}

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "user: $(id)"
  echo "binary: $GD"
  "$GD" --version 2>&1
  nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,mig.mode.current,compute_mode --format=csv 2>&1
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  $PY -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1
  pgrep -a nvidia-cuda-mps 2>&1 || echo "no MPS daemon"
} > "$D/about.txt"

# --- status: MIG and MPS as gpu-doctor shows them -------------------------------------------
step status_json 20 "$GD" status --json
step status_text 20 "$GD" status

HAVE_LIMIT=1
"$GD" run --help 2>/dev/null | grep -q -- '--memory-limit' || HAVE_LIMIT=0
note "run --memory-limit available: $HAVE_LIMIT"

RUN=("$GD" run --max-attempts 1 --sample-interval 250ms --kill-timeout 5s)

# --- a: two budgeted PyTorch jobs share GPU 0 -----------------------------------------------
HB="$D/steady.heartbeat"
if [ "$HAVE_LIMIT" = 1 ]; then
  STEADY=$(start_bg a_steady "${RUN[@]}" --memory-limit 20GiB --enforce \
    --report "$D/a_steady.report.json" --run-dir "$D/runs/steady" \
    -- "$PY" "$V/hold.py" 10 75 "$HB")
else
  note "a/b: run has no --memory-limit in this binary: falling back to guard for enforcement"
  STEADY=$(start_bg a_steady "$PY" "$V/hold.py" 10 75 "$HB")
fi
note "steady job: pid $STEADY"
for _ in $(seq 1 30); do alive_since "$HB" 3 && break; sleep 0.5; done
smi_apps "steady up"

if [ "$HAVE_LIMIT" = 1 ]; then
  step a_grower 40 "${RUN[@]}" --memory-limit 20GiB --enforce \
    --report "$D/a_grower.report.json" --run-dir "$D/runs/grower" \
    -- "$PY" "$V/grow.py" 2 40
  smi_apps "after a_grower"
  # --- b: PyTorch not told (no hook): gpu-doctor's own watch stops it ------------------------
  step b_grower_nohook 40 "${RUN[@]}" --memory-limit 20GiB --enforce --no-hook \
    --report "$D/b_grower.report.json" --run-dir "$D/runs/grower-nohook" \
    -- "$PY" "$V/grow.py" 2 40
else
  cat > "$D/fallback-budget.toml" <<EOF
interval = "250ms"
[[budget]]
user = "$(id -un)"
limit = "20GiB"
action = "stop"
grace = "5s"
EOF
  GROWER=$(start_bg b_grower_nohook "$PY" "$V/grow.py" 2 40)
  for _ in $(seq 1 60); do
    step b_guard_round 10 "$GD" guard --config "$D/fallback-budget.toml" --once --json
    cat "$D/b_guard_round.out" >> "$D/b_guard_rounds.json"
    kill -0 "$GROWER" 2>/dev/null || break
    sleep 0.5
  done
  note "fallback: root's processes are never touched by guard; as root this shows only warnings"
fi
smi_apps "after b"
if kill -0 "$STEADY" 2>/dev/null && alive_since "$HB" 3; then
  note "steady job still running after the growers: YES"
else
  note "steady job still running after the growers: NO"
fi
kill -TERM "$STEADY" 2>/dev/null
for _ in $(seq 1 75); do kill -0 "$STEADY" 2>/dev/null || break; sleep 0.2; done
note "steady job ended by the validation: $(kill -0 "$STEADY" 2>/dev/null && echo 'still running' || echo gone)"

# --- c: a JAX job keeps to its budget -------------------------------------------------------
if [ "$HAVE_LIMIT" = 1 ]; then
  step c_jax 60 "${RUN[@]}" --memory-limit 8GiB --report "$D/c_jax.report.json" \
    --run-dir "$D/runs/jax" -- "$PY" "$V/jax_job.py" 2 12
else
  step c_jax 60 env XLA_PYTHON_CLIENT_MEM_FRACTION=0.051 XLA_PYTHON_CLIENT_PREALLOCATE=false \
    "$PY" "$V/jax_job.py" 2 12
fi

# --- d: guard with a budget file while nobody's job runs -----------------------------------
cat > "$D/budget.toml" <<'EOF'
interval = "1s"

[[budget]]
user = "nobody"
gpu = [GPU_INDEX]
limit = "4GiB"
action = "stop"
grace = "5s"
EOF
sed -i "s/GPU_INDEX/$GPU/" "$D/budget.toml"
# nobody cannot read a repo or output folder under /root: its script and heartbeat live in a
# world-readable temporary folder.
TMPD=$(mktemp -d /tmp/gd-guard.XXXXXX)
chmod 1777 "$TMPD"
cp "$V/hold.py" "$TMPD/hold.py" && chmod 0644 "$TMPD/hold.py"
HB2="$TMPD/nobody.heartbeat"
if command -v runuser > /dev/null && [ "$(id -u)" = 0 ]; then
  NOBODY=$(cd "$TMPD" && start_bg d_nobody_job runuser -u nobody -- "$PY" "$TMPD/hold.py" 6 40 "$HB2")
else
  note "d: not root (or no runuser): the job runs as $(id -un); guard then stops only its own user's processes"
  sed -i "s/user = \"nobody\"/user = \"$(id -un)\"/" "$D/budget.toml"
  NOBODY=$(start_bg d_nobody_job "$PY" "$TMPD/hold.py" 6 40 "$HB2")
fi
for _ in $(seq 1 40); do alive_since "$HB2" 3 && break; sleep 0.5; done
smi_apps "nobody's job up"
step d_guard_dry_run 20 "$GD" guard --config "$D/budget.toml" --dry-run --once
step d_guard_dry_run_json 20 "$GD" guard --config "$D/budget.toml" --dry-run --once --json
if alive_since "$HB2" 3; then note "after the dry run, nobody's job is alive: YES"; else note "after the dry run, nobody's job is alive: NO"; fi
BEFORE=no
alive_since "$HB2" 3 && BEFORE=yes
step d_guard_once 30 "$GD" guard --config "$D/budget.toml" --once --json
# Whether the job's process is still there (its heartbeat file can be a second old after the
# stop, so it is no proof of life here).
AFTER=no
for _ in $(seq 1 15); do kill -0 "$NOBODY" 2>/dev/null || break; sleep 0.2; done
kill -0 "$NOBODY" 2>/dev/null && AFTER=yes
note "nobody's job alive before guard --once: $BEFORE; after: $AFTER (expected: yes, then no)"
kill -TERM "$NOBODY" 2>/dev/null
smi_apps "end"
rm -rf "$TMPD"

note "total: $(( $(date +%s) - T0 )) s"
