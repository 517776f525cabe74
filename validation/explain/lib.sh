# Shared by the explain validations (sourced, not run, from the repo root). `begin NAME` sets
# DIR (the output folder) and LOG (its step log) for `record_env`, `step` and `explain`; BIN
# (gpu-doctor) and PY (python) default here unless the caller or the environment set them.
BIN="${BIN:-target/release/gpu-doctor}"
PY="${PYTHON:-python3}"

# begin NAME: $OUT/NAME as the output folder, with an empty step log and summary, and the
# environment recorded.
begin() {
  DIR="${OUT:?set OUT to an output folder}/$1"
  mkdir -p "$DIR"
  LOG="$DIR/steps.log"
  : > "$LOG"
  : > "$DIR/summary.txt"
  record_env
}

# record_env: the date, the GPUs, PyTorch's CUDA and gpu-doctor's version, to $DIR/env.txt.
record_env() {
  {
    echo "date: $(date -Is)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
    "$PY" -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1
    "$BIN" --version
  } > "$DIR/env.txt" 2>&1
}

# step NAME SECONDS COMMAND...: runs COMMAND under a time limit, its output to $DIR/NAME.out,
# and logs its exit status and duration.
step() {
  local name="$1" limit="$2"; shift 2
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$DIR/$name.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  printf '%s rc=%s %.2fs: %s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$*" | tee -a "$LOG"
}

# explain NAME [ARGS...]: `gpu-doctor explain` (text and --json, with ARGS) on what NAME printed;
# the primary finding goes to $DIR/summary.txt. Runs with ARGS are named NAME followed by ARGS,
# so a --live run does not overwrite the plain one.
explain() {
  local name="$1"; shift
  local tag="$name${1:+$1}"
  step "$tag.explain" 60 "$BIN" explain --color never "$@" "$DIR/$name.out"
  step "$tag.explain-json" 60 "$BIN" explain --json "$@" "$DIR/$name.out"
  local cause
  # The .out file holds stderr too (a --live warning before the JSON on a machine without GPUs).
  cause=$("$PY" -c 'import json,sys; t=open(sys.argv[1]).read(); d=json.loads(t[t.index("{"):]); f=d.get("findings") or [{}]; print(f[0].get("code","-"), f[0].get("cause","none"))' "$DIR/$tag.explain-json.out" 2>/dev/null)
  echo "$tag => ${cause:-unparsable}" | tee -a "$DIR/summary.txt"
}

# repeated_log PATH: writes 402 MB of one error line (the case the scanner's line memo is for)
# to PATH, synced and read once so that every timed run finds it in the page cache.
repeated_log() {
  "${PY:-python3}" -c '
import sys
line = b"RuntimeError: CUDA error: an illegal memory access was encountered\n"
with open(sys.argv[1], "wb") as f:
    block = line * 100000
    for _ in range(60):
        f.write(block)
' "$1"
  sync
  cat "$1" > /dev/null
}
