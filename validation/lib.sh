# Shared by validation/all.sh and validation/second-pass.sh (sourced, not run): setting up the
# results folder, running area scripts as timed streams, waiting for them under a budget, and
# packing the results into an archive the device tool can return.

# begin_results: from the caller's OUT, sets DEST (where the archive goes), RESULTS (the folder
# the area scripts fill; exported as their OUT) and G1 (the second GPU, or 0 on one GPU), and
# installs the carried wheels (.whl) for the area scripts.
begin_results() {
  : "${OUT:?set OUT}"
  DEST=$OUT
  RESULTS="$DEST/results"; mkdir -p "$RESULTS"
  export OUT="$RESULTS"
  local gpus; gpus=$(nvidia-smi -L | grep -c '^GPU ')
  G1=$(( gpus > 1 ? 1 : 0 ))
  if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
      && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  fi
}

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
