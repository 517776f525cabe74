#!/usr/bin/env bash
# CPU share of full-screen monitors on the same GPU, one after the other in one run:
# gpu-doctor watch at 10 Hz and at 4 Hz, nvitop (if importable) at 4 Hz (its fastest: it refuses
# intervals under 0.25 s), nvtop (if installed). Each runs S seconds in a pseudo-terminal
# (util-linux `script`, its screen kept in $OUT_DIR/<name>.typescript when OUT_DIR is set);
# CPU time comes from /proc of the process tree. A monitor that exits early is reported as such.
#   bench/watch/run.sh [SECONDS]     (from the repo root, after cargo build --release)
set -u
S=${1:-20}
B=$PWD/target/release/gpu-doctor
cpu_of_tree() { # pid -> utime+stime of it and its children, in clock ticks
  python3 - "$1" <<'PY'
import os, sys
root = int(sys.argv[1]); total = 0
def kids(p):
    try:
        return [int(c) for t in os.listdir(f"/proc/{p}/task") for c in open(f"/proc/{p}/task/{t}/children").read().split()]
    except OSError:
        return []
todo = [root]
while todo:
    p = todo.pop()
    try:
        f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        total += int(f[11]) + int(f[12])
    except OSError:
        pass
    todo += kids(p)
print(total)
PY
}
measure() { # name, rate, command
  local name=$1 rate=$2; shift 2
  local screen=/dev/null
  [ -n "${OUT_DIR:-}" ] && screen="$OUT_DIR/$(echo "$name" | tr ' ' '_').typescript"
  script -qfec "stty cols 160 rows 50; $*" "$screen" >/dev/null 2>&1 &
  local pid=$!
  sleep 2
  local c0; c0=$(cpu_of_tree $pid); local t0; t0=$(date +%s.%N)
  sleep "$S"
  local alive=yes
  kill -0 $pid 2>/dev/null || alive=no
  local c1; c1=$(cpu_of_tree $pid); local t1; t1=$(date +%s.%N)
  kill $pid 2>/dev/null; pkill -P $pid 2>/dev/null; wait $pid 2>/dev/null
  if [ $alive = no ]; then
    echo "$name: exited before the measurement ended (see its typescript)"
    return
  fi
  python3 -c "import os;tk=os.sysconf('SC_CLK_TCK');print(f'{\"$name\":<28} {($c1-$c0)/tk/($t1-$t0)*100:6.2f} % of one core at $rate')"
}
measure "gpu-doctor watch" "10 Hz" "$B watch --interval 100ms"
measure "gpu-doctor watch 4Hz" "4 Hz" "$B watch --interval 250ms"
if python3 -c "import nvitop" 2>/dev/null; then
  measure "nvitop" "4 Hz" "python3 -m nvitop --interval 0.25"
else
  echo "nvitop: not installed"
fi
if command -v nvtop >/dev/null; then
  measure "nvtop" "10 Hz" "nvtop -d 1"
else
  echo "nvtop: not installed (not in this image; nothing can be installed there)"
fi
