#!/usr/bin/env bash
# Wall time and peak RSS of `gpu-doctor snapshot --json FILE` next to Python's
# `pickle.load(FILE)` (only loading, no analysis), in the same run, with ratios.
# Usage: bench/snapshot/run.sh FILE [BIN]   (RUNS=3 by default; BIN target/release/gpu-doctor)
set -u
F=$1
B=${2:-target/release/gpu-doctor}
RUNS=${RUNS:-3}
T=$(mktemp -d)
size=$(stat -c %s "$F")
cat "$F" >/dev/null  # both read from the page cache

measure() {  # name, command...: prints "wall_s rss_kb" of the best (fastest) run
  local name=$1; shift
  local best=""
  for i in $(seq "$RUNS"); do
    if [ -x /usr/bin/time ]; then
      /usr/bin/time -v "$@" >/dev/null 2>"$T/$name.$i.time"
      local wall rss
      wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(j=1;j<=n;j++) s=s*60+p[j]; print s}' "$T/$name.$i.time")
      rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$T/$name.$i.time")
    else
      read -r wall rss < <(python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(round(time.time() - t, 3), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
    fi
    echo "$name run $i: wall ${wall}s max_rss ${rss} KiB" >&2
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < ${best%% *})}"; then best="$wall $rss"; fi
  done
  echo "$best"
}

echo "file: $F ($size bytes, $(awk "BEGIN{printf \"%.1f\", $size/1048576}") MiB), best of $RUNS runs"
read -r py_wall py_rss < <(measure python python3 -c "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))" "$F")
read -r gd_wall gd_rss < <(measure gpu-doctor "$B" snapshot --json "$F")
printf '%-36s %10s %14s\n' "" "wall (s)" "peak RSS (MiB)"
printf '%-36s %10s %14.1f\n' "python3 pickle.load (load only)" "$py_wall" "$(awk "BEGIN{print $py_rss/1024}")"
printf '%-36s %10s %14.1f\n' "gpu-doctor snapshot --json (all)" "$gd_wall" "$(awk "BEGIN{print $gd_rss/1024}")"
awk "BEGIN{printf \"speed: gpu-doctor is %.2fx faster than pickle.load\n\", $py_wall/($gd_wall>0?$gd_wall:0.001)}"
awk "BEGIN{printf \"memory: gpu-doctor peak RSS is %.2fx of pickle.load's and %.2fx of the file size\n\", $gd_rss/$py_rss, $gd_rss*1024/$size}"
for f in "$T"/*.1.time; do [ -f "$f" ] && { echo "--- $(basename "$f")"; cat "$f"; }; done
rm -rf "$T"
