#!/bin/bash
# Slurm node health check on `gpu-doctor check --fail-on error`: drains the node, with the
# finding as the reason, when its GPUs or GPU stack fail. Install as slurm.conf's
#   HealthCheckProgram=/usr/local/libexec/gpu-doctor/gpu-doctor-healthcheck.sh
#   HealthCheckInterval=300
# (slurmd runs it as root, also at startup). gpu-doctor-prolog.sh runs it before each job.
#
# Exit status: 0 healthy; 1 drained (a check failed, the check timed out, or gpu-doctor
# could not run). It never resumes a node: an operator does, after the fix
# (`scontrol update NodeName=<node> State=RESUME`).
#
# Settings, from the environment or /etc/default/gpu-doctor (sourced when readable):
#   GPU_DOCTOR                 the binary (default: gpu-doctor on PATH, else /usr/local/bin)
#   GPU_DOCTOR_CHECK_TIMEOUT   seconds before a hung check counts as a failure (default 60)
#   GPU_DOCTOR_CHECK_ARGS      extra arguments for `check` (word-split)
#   GPU_DOCTOR_NODE            the node name to drain (default: $SLURMD_NODENAME, hostname -s)
#   GPU_DOCTOR_DRY_RUN=1       print the scontrol command instead of running it
set -u
if [ -r "${GPU_DOCTOR_DEFAULTS:-/etc/default/gpu-doctor}" ]; then
  # shellcheck disable=SC1090
  . "${GPU_DOCTOR_DEFAULTS:-/etc/default/gpu-doctor}"
fi
GPU_DOCTOR=${GPU_DOCTOR:-$(command -v gpu-doctor || echo /usr/local/bin/gpu-doctor)}
TIMEOUT=${GPU_DOCTOR_CHECK_TIMEOUT:-60}
NODE=${GPU_DOCTOR_NODE:-${SLURMD_NODENAME:-$(hostname -s)}}

# shellcheck disable=SC2086
out=$(NO_COLOR=1 timeout -k 5 "$TIMEOUT" "$GPU_DOCTOR" check --fail-on error --color never \
  ${GPU_DOCTOR_CHECK_ARGS:-} 2>&1)
rc=$?

case $rc in
  0) exit 0 ;;
  1)
    # The first error finding, as printed: `error[GD100] hw_xid [GPU 0]: message`.
    reason=$(printf '%s\n' "$out" | grep -m1 -E '^error\[GD[0-9]+\]' | sed -E 's/^error\[(GD[0-9]+)\] /\1 /')
    [ -n "$reason" ] || reason=$(printf '%s\n' "$out" | grep -m1 -E '^ *fail ' | sed -E 's/^ *fail +//')
    [ -n "$reason" ] || reason="check failed (exit 1)"
    ;;
  124 | 137) reason="check timed out after ${TIMEOUT}s: the driver may hang" ;;
  *)
    reason=$(printf '%s\n' "$out" | grep -m1 '^error: ' | sed 's/^error: //')
    reason="could not check the GPUs (exit $rc): ${reason:-no message}"
    ;;
esac
# Slurm keeps the reason as one line; quotes would break the scontrol argument.
reason="gpu-doctor: $(printf '%s' "$reason" | tr -d '"\r' | tr '\n' ' ' | cut -c1-200)"

logger -t gpu-doctor -p daemon.err "draining $NODE: $reason" 2>/dev/null || true
echo "gpu-doctor-healthcheck: draining $NODE: $reason" >&2
if [ "${GPU_DOCTOR_DRY_RUN:-0}" = 1 ]; then
  echo "scontrol update NodeName=$NODE State=DRAIN Reason=\"$reason\""
else
  scontrol update NodeName="$NODE" State=DRAIN Reason="$reason" \
    || echo "gpu-doctor-healthcheck: scontrol could not drain $NODE" >&2
fi
exit 1
