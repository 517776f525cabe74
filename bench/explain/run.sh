#!/usr/bin/env bash
# Throughput of `gpu-doctor explain` on a large synthetic training log, next to `grep -c`
# on the same file in the same run, plus peak memory at two file sizes (memory must stay
# flat as the file grows).
#
#   bench/explain/run.sh                 # 2 GB log in /tmp
#   SIZE_MB=512 bench/explain/run.sh     # smaller
#   BIN=target/release/gpu-doctor LOG=/tmp/x.log KEEP=1 bench/explain/run.sh
set -u
cd "$(dirname "$0")/../.."
size_mb="${SIZE_MB:-2048}"
bin="${BIN:-target/release/gpu-doctor}"
log="${LOG:-/tmp/gpu-doctor-bench-explain.log}"
small="${log%.log}-quarter.log"

if [ ! -x "$bin" ]; then
  echo "building $bin"
  cargo build --release -p gpu-doctor || exit 2
fi

# One ~4 MB block of an ordinary training log: tqdm bars with carriage returns, per-rank
# metric lines, warnings; every 16th block carries an error (OOM, NCCL, Xid, device assert).
make_blocks() {
  python3 - "$1" <<'PY'
import sys, random
out = sys.argv[1]
random.seed(7)
def block(errors):
    lines = []
    step = 0
    while sum(len(l) for l in lines) < 4 << 20:
        step += 1
        r = step % 8
        lines.append(f"[rank{r}]: {{'loss': {random.random():.4f}, 'grad_norm': {random.random()*3:.4f}, 'learning_rate': 2.0e-05, 'epoch': {step/1000:.2f}}}\n")
        bar = "".join(f"{p:3d}%|{'#'*(p//10):<10}| {p}/100 [00:{p:02d}<00:30, 3.2it/s]\r" for p in range(0, 100, 20))
        lines.append(bar + "\n")
        if step % 50 == 0:
            lines.append(f"2026-11-29 18:50:{step%60:02d} INFO trainer.py:311 saving checkpoint step={step} path=/ckpt/step{step}\n")
        if step % 97 == 0:
            lines.append("/usr/lib/python3.12/site-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader will create 16 worker processes\n")
    if errors:
        lines.append("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.19 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 78.07 GiB memory in use. Of the allocated memory 70.01 GiB is allocated by PyTorch, and 6.50 GiB is reserved by PyTorch but unallocated.\n")
        lines.append("[rank1]:[E1129 18:50:03.1 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")
        lines.append("[ 8812.120001] NVRM: Xid (PCI:0000:18:00): 31, pid=4242, name=python, Ch 00000008\n")
    return "".join(lines)
with open(out + ".plain", "w") as f:
    f.write(block(False))
with open(out + ".err", "w") as f:
    f.write(block(True))
PY
}

make_log() { # path size_mb
  local path="$1" mb="$2" blocks i=0
  : > "$path"
  blocks=$(( mb / 4 ))
  while [ $i -lt "$blocks" ]; do
    if [ $(( i % 16 )) -eq 15 ]; then cat "$log.block.err" >> "$path"; else cat "$log.block.plain" >> "$path"; fi
    i=$(( i + 1 ))
  done
}

measure() { # label command...
  local label="$1"; shift
  local tv=/tmp/gpu-doctor-bench-time.$$
  # Output to a file, not /dev/null: GNU grep notices /dev/null and stops at the first match.
  /usr/bin/time -v "$@" > "$tv.out" 2> "$tv"
  rm -f "$tv.out"
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tv" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tv")
  rm -f "$tv"
  echo "$label $wall $rss"
}

make_blocks "$log.block"
echo "generating ${size_mb} MB log at $log (and a quarter-size one)"
make_log "$log" "$size_mb"
make_log "$small" $(( size_mb / 4 ))
bytes=$(stat -c %s "$log")
small_bytes=$(stat -c %s "$small")

# Warm the page cache so both tools read from memory.
cat "$log" > /dev/null

read -r _ ex_wall ex_rss < <(measure explain "$bin" explain --json "$log")
read -r _ gr_wall gr_rss < <(measure grep grep -c CUDA "$log")
read -r _ ge_wall ge_rss < <(measure grep-E grep -c -E 'CUDA|memory|Xid|NCCL|CUBLAS|CUDNN|assert' "$log")
read -r _ sm_wall sm_rss < <(measure explain-quarter "$bin" explain --json "$small")

awk -v b="$bytes" -v sb="$small_bytes" -v ew="$ex_wall" -v gw="$gr_wall" -v er="$ex_rss" -v gr="$gr_rss" -v sw="$sm_wall" -v sr="$sm_rss" -v xw="$ge_wall" -v xr="$ge_rss" 'BEGIN {
  ex = b / ew / 1e6; gp = b / gw / 1e6;
  printf "file: %.0f MB (%.0f MB quarter)\n", b/1e6, sb/1e6;
  printf "gpu-doctor explain --json : %7.2f s  %8.0f MB/s  peak RSS %6.1f MB\n", ew, ex, er/1024;
  printf "grep -c CUDA              : %7.2f s  %8.0f MB/s  peak RSS %6.1f MB\n", gw, gp, gr/1024;
  printf "grep -c -E (7 words)      : %7.2f s  %8.0f MB/s  peak RSS %6.1f MB\n", xw, b/xw/1e6, xr/1024;
  printf "explain / grep throughput : %.2f (against grep -E: %.2f)\n", ex/gp, ex/(b/xw/1e6);
  printf "explain on the quarter    : %7.2f s  %8.0f MB/s  peak RSS %6.1f MB (flat memory: RSS ratio full/quarter = %.2f)\n", sw, sb/sw/1e6, sr/1024, er/sr;
}'
"$bin" explain "$log" | head -3
if [ -z "${KEEP:-}" ]; then rm -f "$log" "$small" "$log.block.plain" "$log.block.err"; fi
