#!/usr/bin/env python3
"""Side-by-side: `gpu-doctor status` vs `nvidia-smi`, and the recorder's footprint.

Usage: bench.py [--bin target/release/gpu-doctor] [--runs 20] [--record-seconds 30]

Prints a table of wall time (median, mean) and peak RSS per command with ratios against
`nvidia-smi --query-gpu`, then the recorder's CPU share of one core per GPU and its peak RSS
at 10 Hz. Every command runs in the same process tree, one after the other, on the same GPU.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def run_once(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} exited {proc.returncode}: {proc.stderr.decode()[-400:]}")
    return wall


def peak_rss_kib(cmd):
    # ru_maxrss of RUSAGE_CHILDREN is the max over all children so far: run each measured
    # command in a fresh python child so the maximum is its own.
    code = (
        "import resource,subprocess,sys;"
        "subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def bench_commands(binary, runs):
    commands = {
        "nvidia-smi --query-gpu": ["nvidia-smi", "--query-gpu=index,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw", "--format=csv,noheader"],
        "nvidia-smi": ["nvidia-smi"],
        "gpu-doctor status": [binary, "status", "--color", "never"],
        "gpu-doctor status --json": [binary, "status", "--json"],
    }
    rows = []
    for name, cmd in commands.items():
        run_once(cmd)  # warm the page cache and the driver
        walls = [run_once(cmd) for _ in range(runs)]
        rows.append((name, statistics.median(walls), statistics.mean(walls), peak_rss_kib(cmd)))
    base = rows[0][1]
    print(f"{'command':<28} {'median ms':>10} {'mean ms':>9} {'peak RSS MiB':>13} {'vs query-gpu':>13}")
    for name, med, mean, rss in rows:
        print(f"{name:<28} {med*1e3:>10.1f} {mean*1e3:>9.1f} {rss/1024:>13.1f} {med/base:>12.2f}x")
    return rows


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def proc_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def bench_recorder(binary, seconds, gpus):
    out = "/tmp/gpu-doctor-bench-record.ndjson"
    proc = subprocess.Popen([binary, "record", "-o", out, "--interval", "100ms", "--duration", f"{seconds}s"],
                            stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # past start-up (driver load), then measure the steady state
    cpu0, t0 = proc_cpu_seconds(proc.pid), time.perf_counter()
    time.sleep(seconds - 2.0)
    cpu1, t1 = proc_cpu_seconds(proc.pid), time.perf_counter()
    hwm = proc_hwm_kib(proc.pid)
    proc.wait()
    share = (cpu1 - cpu0) / (t1 - t0) * 100
    with open(out) as f:
        lines = sum(1 for _ in f)
    size = os.path.getsize(out)
    os.remove(out)
    print(f"recorder at 10 Hz over {seconds}s: {share:.3f} % of one core in total, "
          f"{share/max(gpus,1):.3f} % per GPU ({gpus} GPU), peak RSS {hwm/1024:.1f} MiB, "
          f"{lines} lines, {size/lines:.0f} bytes/line")
    per_sample_ms = (cpu1 - cpu0) / ((t1 - t0) * 10) * 1e3
    print(f"CPU per full sample: {per_sample_ms:.3f} ms ({per_sample_ms/max(gpus,1):.3f} ms per GPU)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/gpu-doctor")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--record-seconds", type=int, default=30)
    a = p.parse_args()
    gpus = int(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU "))
    bench_commands(a.bin, a.runs)
    print()
    bench_recorder(a.bin, a.record_seconds, gpus)


if __name__ == "__main__":
    main()
