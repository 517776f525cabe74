# Helpers shared by the integration scripts (sourced, not run). Each script is
# self-contained otherwise: it starts what it needs in a temporary directory, waits with a
# timeout on everything, and kills only the processes it started (by pid) on exit.

INTEGRATION_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
STARTED_PIDS=()
WORK=""

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

need() {
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || die "'$c' is not installed; run scripts/install-test-deps.sh"
  done
}

# Starts a command in the background, logging to $WORK/<name>.log, remembering its pid.
start_bg() {
  local name="$1"; shift
  "$@" >"$WORK/$name.log" 2>&1 &
  STARTED_PIDS+=("$!")
  echo "$!"
}

cleanup() {
  local rc=$?
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] && [ -n "$WORK" ]; then
    log "logs kept in $WORK"
    for f in "$WORK"/*.log; do
      [ -f "$f" ] || continue
      echo "----- $f (last 30 lines)" >&2
      tail -n 30 "$f" >&2
    done
  elif [ -n "$WORK" ] && [ -z "${KEEP_WORK:-}" ]; then
    rm -rf "$WORK"
  fi
  exit "$rc"
}

make_work() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/gpu-doctor-$1.XXXXXX")"
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}

# A free TCP port on loopback.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_for SECONDS DESCRIPTION COMMAND...: retries COMMAND every 0.5 s until it succeeds.
wait_for() {
  local seconds="$1" what="$2"; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -ge "$deadline" ] && die "timed out after ${seconds}s waiting for $what"
    sleep 0.5
  done
}

# Builds (once) and prints the path of the gpu-doctor binary and the stand-in NVML library.
build_binaries() {
  cd "$INTEGRATION_ROOT"
  if [ -z "${GPU_DOCTOR_BIN:-}" ]; then
    log "building gpu-doctor and the stand-in NVML driver (debug)"
    cargo build --quiet -p gpu-doctor -p fake-nvml >&2 || die "cargo build failed"
    GPU_DOCTOR_BIN="${CARGO_TARGET_DIR:-$INTEGRATION_ROOT/target}/debug/gpu-doctor"
  fi
  FAKE_NVML_LIB="${FAKE_NVML_LIB:-${CARGO_TARGET_DIR:-$INTEGRATION_ROOT/target}/debug/libfake_nvml.so}"
  [ -x "$GPU_DOCTOR_BIN" ] || die "no gpu-doctor binary at $GPU_DOCTOR_BIN"
  # Absolute: the scripts under test run from other directories (slurmd's, a service's).
  GPU_DOCTOR_BIN="$(realpath "$GPU_DOCTOR_BIN")"
  FAKE_NVML_LIB="$(realpath "$FAKE_NVML_LIB")"
  [ -f "$FAKE_NVML_LIB" ] || die "no stand-in NVML library at $FAKE_NVML_LIB"
  export GPU_DOCTOR_BIN FAKE_NVML_LIB
}

scenario() { echo "$INTEGRATION_ROOT/crates/fake-nvml/scenarios/$1.json"; }
