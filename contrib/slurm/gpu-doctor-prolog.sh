#!/bin/bash
# Slurm Prolog: refuse a job on a node whose GPUs fail (drain it, with the finding as the
# reason), then record the job's GPUs in the background so the epilog can report the
# job's peak GPU memory. Install as slurm.conf's
#   Prolog=/usr/local/libexec/gpu-doctor/gpu-doctor-prolog.sh
#   Epilog=/usr/local/libexec/gpu-doctor/gpu-doctor-epilog.sh
#   PrologFlags=Alloc      (run at allocation, so a bad node is drained before the job starts)
# A non-zero exit makes Slurm requeue the job and drain the node.
#
# Settings as in gpu-doctor-healthcheck.sh, plus:
#   GPU_DOCTOR_STATE_DIR       where per-job recordings go (default /var/lib/gpu-doctor/slurm)
#   GPU_DOCTOR_RECORD_INTERVAL sampling interval of the job recording (default 2s)
#   GPU_DOCTOR_PROLOG_CHECK=0  skip the health check (e.g. when HealthCheckProgram runs it)
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -r "${GPU_DOCTOR_DEFAULTS:-/etc/default/gpu-doctor}" ]; then
  # shellcheck disable=SC1090
  . "${GPU_DOCTOR_DEFAULTS:-/etc/default/gpu-doctor}"
fi
GPU_DOCTOR=${GPU_DOCTOR:-$(command -v gpu-doctor || echo /usr/local/bin/gpu-doctor)}
STATE=${GPU_DOCTOR_STATE_DIR:-/var/lib/gpu-doctor/slurm}
JOB=${SLURM_JOB_ID:-unknown}

if [ "${GPU_DOCTOR_PROLOG_CHECK:-1}" != 0 ]; then
  "$here/gpu-doctor-healthcheck.sh" || exit 1
fi

mkdir -p "$STATE" || exit 0
rec="$STATE/job-$JOB.ndjson"
# Detached from the prolog (which Slurm waits for), bounded by the job: the epilog stops it.
setsid "$GPU_DOCTOR" record --output "$rec" --interval "${GPU_DOCTOR_RECORD_INTERVAL:-2s}" \
  </dev/null >/dev/null 2>"$STATE/job-$JOB.log" &
pid=$!
echo "$pid" >"$STATE/job-$JOB.pid"
# Wait (bounded) for the recorder's header: slurmd kills the prolog's process group when the
# prolog exits, and a recorder that has not yet left it (setsid) would die with it.
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$rec" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$pid" 2>/dev/null || echo "gpu-doctor-prolog: the recorder exited at once: $(tail -n 3 "$STATE/job-$JOB.log" 2>/dev/null)" >&2
exit 0
