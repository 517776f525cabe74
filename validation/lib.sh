# Shared by validation/all.sh and validation/second-pass.sh (sourced, not run): running area
# scripts as timed streams, waiting for them under a budget, and packing $RESULTS into an
# archive the device tool can return. Expects RESULTS (the folder being filled) and DEST
# (where the archive goes).

# step STREAM SECONDS GPU COMMAND...: runs COMMAND on GPU under a time limit, logging its start,
# end, exit status and duration to $RESULTS/STREAM.streamlog (its output too).
step() {
  local name=$1 limit=$2 gpu=$3; shift 3
  local t0; t0=$(date +%s)
  echo "[$(date -u +%T)] start $*" >>"$RESULTS/$name.streamlog"
  CUDA_VISIBLE_DEVICES=$gpu timeout -k 10 "$limit" "$@" >>"$RESULTS/$name.streamlog" 2>&1
  echo "[$(date -u +%T)] end $* rc=$? after $(( $(date +%s) - t0 )) s" >>"$RESULTS/$name.streamlog"
}

# wait_streams BUDGET PID...: waits for the streams, at most BUDGET seconds; past it, notes
# that the archive holds what was there.
wait_streams() {
  local budget=$1; shift
  any_alive() { for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
  local end=$((SECONDS + budget))
  while [ $SECONDS -lt $end ] && any_alive "$@"; do sleep 2; done
  any_alive "$@" && echo "budget of $budget s reached; packing what is there" >>"$RESULTS/streams.txt"
  return 0
}

# pack_results: the device tool returns at most 8 files of 16 MiB: drops database side files
# and files over 3 MB (checkpoints, large snapshots; listed in big-files.txt), then splits the
# archive.
pack_results() {
  nvidia-smi >"$RESULTS/smi-end.txt" 2>&1
  find "$RESULTS" \( -name '*-wal' -o -name '*-shm' \) -delete
  find "$RESULTS" -type f -size +3M -printf "%s %p\n" >"$DEST/big-files.txt"
  find "$RESULTS" -type f -size +3M -delete
  tar -C "$DEST" -czf - "$(basename "$RESULTS")" | split -b 15M - "$DEST/results.tgz."
  rm -rf "$RESULTS"
  ls -la "$DEST"
}
