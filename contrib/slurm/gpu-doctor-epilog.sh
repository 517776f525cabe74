#!/bin/bash
# Slurm Epilog: stops the recording gpu-doctor-prolog.sh started and records the job's
# peak GPU memory per GPU:
#   - one line in $GPU_DOCTOR_STATE_DIR/peaks.log:
#       <time> job=<id> user=<user> node=<node> gpu=<index> peak_bytes=<n> samples=<n>
#   - the job's AdminComment (`sacct -o AdminComment`, `scontrol show job`):
#       gpu_peak_bytes=0:<n>,1:<n>
#   - syslog (tag gpu-doctor).
# Only the job's GPUs count when Slurm names them ($SLURM_JOB_GPUS); on a shared GPU the
# peak includes the other jobs' memory. The recording is removed unless
# GPU_DOCTOR_KEEP_RECORDINGS=1. Always exits 0: an epilog failure would drain the node.
set -u
if [ -r "${GPU_DOCTOR_DEFAULTS:-/etc/default/gpu-doctor}" ]; then
  # shellcheck disable=SC1090
  . "${GPU_DOCTOR_DEFAULTS:-/etc/default/gpu-doctor}"
fi
STATE=${GPU_DOCTOR_STATE_DIR:-/var/lib/gpu-doctor/slurm}
JOB=${SLURM_JOB_ID:-unknown}
NODE=${GPU_DOCTOR_NODE:-${SLURMD_NODENAME:-$(hostname -s)}}
rec="$STATE/job-$JOB.ndjson"
pidfile="$STATE/job-$JOB.pid"

if [ -r "$pidfile" ]; then
  pid=$(cat "$pidfile")
  # Only our recorder: the pid must still be a `gpu-doctor record` writing this job's file.
  if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "record --output $rec"; then
    kill "$pid" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  rm -f "$pidfile"
fi
[ -r "$rec" ] || exit 0

# The recording is NDJSON (docs/recording.md): one {"type":"sample",...,"devices":[...]} per
# line, each device with "index" and then "memory_used_bytes" (a number, or an object when
# the reading was absent). Peak per GPU index:
peaks=$(awk -v gpus=",${SLURM_JOB_GPUS:-}," '
  /"type":"sample"/ {
    k = split($0, part, /"index":/)
    for (j = 2; j <= k; j++) {
      if (!match(part[j], /^[0-9]+/)) continue
      idx = substr(part[j], 1, RLENGTH)
      if (gpus != ",," && !index(gpus, "," idx ",")) continue
      # 20 = length of "memory_used_bytes":
      if (match(part[j], /"memory_used_bytes":[0-9]+/)) {
        v = substr(part[j], RSTART + 20, RLENGTH - 20) + 0
        if (!(idx in peak) || v > peak[idx]) peak[idx] = v
        n[idx]++
      }
    }
  }
  END { for (i in peak) printf "%s %.0f %d\n", i, peak[i], n[i] }' "$rec" | sort -n)

if [ -n "$peaks" ]; then
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  comment=""
  while read -r gpu bytes samples; do
    echo "$now job=$JOB user=${SLURM_JOB_USER:-unknown} node=$NODE gpu=$gpu peak_bytes=$bytes samples=$samples" >>"$STATE/peaks.log"
    comment="${comment:+$comment,}$gpu:$bytes"
  done <<<"$peaks"
  logger -t gpu-doctor "job $JOB peak GPU memory (gpu:bytes): $comment" 2>/dev/null || true
  if [ "${GPU_DOCTOR_DRY_RUN:-0}" != 1 ] && [ "$JOB" != unknown ]; then
    scontrol update JobId="$JOB" AdminComment="gpu_peak_bytes=$comment" 2>/dev/null || true
  fi
fi
[ "${GPU_DOCTOR_KEEP_RECORDINGS:-0}" = 1 ] || rm -f "$rec" "$STATE/job-$JOB.log"
exit 0
