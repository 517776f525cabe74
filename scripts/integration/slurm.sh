#!/usr/bin/env bash
# A real one-node Slurm (Debian's slurmctld + slurmd + munge, on localhost, in a temporary
# directory) runs contrib/slurm/gpu-doctor-healthcheck.sh as its HealthCheckProgram and the
# prolog/epilog around a job, over the stand-in NVML driver and a stand-in machine tree:
#   1. healthy GPU: the node stays idle through several health checks, a job runs, and the
#      epilog records its peak GPU memory (peaks.log and the job's AdminComment);
#   2. the GPU takes an uncorrectable ECC error: the next health check drains the node with
#      the finding (GD100) as the reason.
# Needs root (slurmd). Bounded: about 60 s; every wait has a timeout.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/fake-root.sh"
need slurmctld slurmd scontrol sinfo sbatch munged python3
[ "$(id -u)" = 0 ] || die "slurmd needs root"
make_work slurm
build_binaries
cd "$INTEGRATION_ROOT"

node=$(hostname -s)
make_fake_root "$WORK/root"
# Scenarios: the shipped healthy one, and the shipped ECC one with its error from the first
# sample on (the shipped file reaches it at the third).
cp "$(scenario one-gpu-busy)" "$WORK/healthy.json"
python3 - "$(scenario ecc-uncorrectable)" "$WORK/ecc.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for g in s["gpus"]:
    merged = {}
    for p in g["phases"]:
        merged.update({k: v for k, v in p.items() if k != "from"})
    g["phases"] = [dict(merged, **{"from": 0})]
    g.pop("events", None)
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
echo "$WORK/healthy.json" >"$WORK/scenario"

# What slurmd runs: our scripts, with the stand-in driver and machine (slurmd passes little
# environment to them, so the wrapper sets it, as /etc/default/gpu-doctor would).
cat >"$WORK/defaults" <<ENV
GPU_DOCTOR=$GPU_DOCTOR_BIN
GPU_DOCTOR_CHECK_ARGS="--root $WORK/root --ldconfig-file $WORK/root.ld --timeout 20"
GPU_DOCTOR_CHECK_TIMEOUT=40
GPU_DOCTOR_STATE_DIR=$WORK/gpu-doctor
GPU_DOCTOR_RECORD_INTERVAL=200ms
GPU_DOCTOR_NODE=$node
export GPU_DOCTOR_NVML_LIB=$FAKE_NVML_LIB
export FAKE_NVML_SCENARIO=\$(cat $WORK/scenario)
export SLURM_CONF=$WORK/slurm.conf
ENV
for s in healthcheck prolog epilog; do
  cat >"$WORK/$s.sh" <<SH
#!/bin/bash
export GPU_DOCTOR_DEFAULTS=$WORK/defaults
export SLURM_CONF=$WORK/slurm.conf
export PATH=/usr/bin:/bin:/usr/sbin:/sbin
echo "\$(date +%s) \$(cat $WORK/scenario)" >>$WORK/$s.runs
exec $INTEGRATION_ROOT/contrib/slurm/gpu-doctor-$s.sh "\$@" 2>>$WORK/$s.log
SH
  chmod +x "$WORK/$s.sh"
done

# munge with its own key and socket.
mkdir -p "$WORK/munge" "$WORK/state" "$WORK/spool"
chmod 700 "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$WORK/munge/munge.key"
start_bg munged munged --foreground --force --socket="$WORK/munge/munge.sock" \
  --key-file="$WORK/munge/munge.key" --pid-file="$WORK/munge/munged.pid" \
  --seed-file="$WORK/munge/seed" --log-file="$WORK/munge/munged.log" >/dev/null
wait_for 10 "munged" test -S "$WORK/munge/munge.sock"

ctld_port=$(free_port)
d_port=$(free_port)
cat >"$WORK/slurm.conf" <<CONF
ClusterName=gpudoctor
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
SlurmdParameters=config_overrides
HealthCheckProgram=$WORK/healthcheck.sh
HealthCheckInterval=5
HealthCheckNodeState=ANY
Prolog=$WORK/prolog.sh
Epilog=$WORK/epilog.sh
PrologFlags=Alloc
NodeName=$node NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$WORK/slurm.conf"

log "slurmctld and slurmd on localhost (node $node)"
start_bg slurmctld-fg slurmctld -D -i -f "$WORK/slurm.conf" >/dev/null
wait_for 20 "slurmctld" scontrol ping
start_bg slurmd-fg slurmd -D -f "$WORK/slurm.conf" -N "$node" >/dev/null

node_state() { sinfo -h -N -n "$node" -o '%T|%E'; }
# The state is read whole first: with pipefail, `sinfo | grep -q` can fail on SIGPIPE.
is_state() { grep -qE "^($1)\|" <<<"$(node_state)"; }
wait_for 40 "the node to come up idle" is_state idle
log "node: $(node_state)"

# 1. Healthy: a few health checks later the node is still idle.
runs() { grep -c . "$WORK/healthcheck.runs" 2>/dev/null || echo 0; }
before=$(runs)
sleep 12
is_state idle || die "healthy node is not idle: $(node_state)"
ran=$(( $(runs) - before ))
[ "$ran" -ge 1 ] || die "slurmd ran no health check in 12 s"
log "ok: healthy node idle after $ran health checks in 12 s: $(node_state)"

# A job: the prolog records, the epilog writes the peak.
job=$(sbatch --parsable -o "$WORK/job-%j.out" --wrap 'sleep 3')
log "job $job submitted"
job_done() { [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && [ -s "$WORK/gpu-doctor/peaks.log" ]; }
wait_for 60 "job $job to finish and its peak to be recorded" job_done
peak_line=$(grep "job=$job " "$WORK/gpu-doctor/peaks.log") || die "no peak for job $job"
log "peaks.log: $peak_line"
want=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(sum(p["used_memory_bytes"] for p in s["processes"] if p["gpu"]==0))' "$WORK/healthy.json")
echo "$peak_line" | grep -qE "gpu=0 peak_bytes=[0-9]+ samples=[0-9]+" || die "malformed peak line: $peak_line"
got=$(echo "$peak_line" | sed -E 's/.*peak_bytes=([0-9]+).*/\1/')
[ "$got" -ge "$want" ] || die "peak $got is below the scenario's process memory $want"
comment=$(scontrol show job "$job" 2>/dev/null | grep -o 'AdminComment=[^ ]*' || true)
log "ok: job $job peak recorded ($got bytes; ${comment:-AdminComment not kept after the job ended})"

# 2. An uncorrectable ECC error: the next health check drains the node, with the reason.
echo "$WORK/ecc.json" >"$WORK/scenario"
log "the GPU now has an uncorrectable ECC error"
is_drained() { grep -qE '^(drained|draining|drain)[^|]*\|gpu-doctor: GD100' <<<"$(node_state)"; }
wait_for 40 "the node to be drained by the health check" is_drained
log "ok: $(sinfo -h -N -n "$node" -o '%N %T %E')"
log "slurm integration passed"
