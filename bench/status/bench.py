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


# The six fields the `--query-gpu` comparison asks nvidia-smi for.
QUERY = "index,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw"


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
        "nvidia-smi --query-gpu": ["nvidia-smi", "--query-gpu=" + QUERY, "--format=csv,noheader"],
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


def smaps(pid):
    """Rss/Pss split from smaps_rollup, and the mappings holding the most RSS."""
    rollup = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                rollup[parts[0].rstrip(":")] = int(parts[1])
    by_map = {}
    name = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if not head[0].endswith(":") and "-" in head[0]:
                name = head[5] if len(head) > 5 else "[anon]"
            elif head[0] == "Rss:":
                by_map[name] = by_map.get(name, 0) + int(head[1])
    top = sorted(by_map.items(), key=lambda kv: -kv[1])[:8]
    return rollup, top


def bench_loop(name, cmd, seconds, gpus, out=None):
    """Runs a 10 Hz sampling loop for `seconds`: CPU share, peak and steady RSS, and where the
    resident memory is (smaps), measured the same way for gpu-doctor and its peer."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # past start-up (driver load), then measure the steady state
    cpu0, t0 = proc_cpu_seconds(proc.pid), time.perf_counter()
    time.sleep(seconds - 2.0)
    cpu1, t1 = proc_cpu_seconds(proc.pid), time.perf_counter()
    hwm = proc_hwm_kib(proc.pid)
    rollup, top = smaps(proc.pid)
    if out is None:
        proc.terminate()
    proc.wait()
    share = (cpu1 - cpu0) / (t1 - t0) * 100
    print(f"{name} at 10 Hz over {seconds}s: {share:.3f} % of one core in total, "
          f"{share/max(gpus,1):.3f} % per GPU ({gpus} GPU), peak RSS {hwm/1024:.1f} MiB, "
          f"RSS now {rollup.get('Rss', 0)/1024:.1f} MiB (PSS {rollup.get('Pss', 0)/1024:.1f}, "
          f"anonymous {rollup.get('Anonymous', 0)/1024:.1f}, file-backed "
          f"{(rollup.get('Rss', 0) - rollup.get('Anonymous', 0))/1024:.1f}, "
          f"private dirty {rollup.get('Private_Dirty', 0)/1024:.1f})")
    print("  largest mappings (RSS KiB): " + ", ".join(f"{os.path.basename(n)} {kb}" for n, kb in top))
    if out is not None:
        with open(out) as f:
            lines = sum(1 for _ in f)
        size = os.path.getsize(out)
        os.remove(out)
        print(f"  {lines} lines, {size/max(lines,1):.0f} bytes/line")
        per_sample_ms = (cpu1 - cpu0) / ((t1 - t0) * 10) * 1e3
        print(f"  CPU per full sample: {per_sample_ms:.3f} ms ({per_sample_ms/max(gpus,1):.3f} ms per GPU)")


def bench_recorder(binary, seconds, gpus):
    out = "/tmp/gpu-doctor-bench-record.ndjson"
    bench_loop("gpu-doctor record", [binary, "record", "-o", out, "--interval", "100ms",
                                     "--duration", f"{seconds}s"], seconds, gpus, out)
    # The peer: nvidia-smi's own 10 Hz loop over the same NVML library.
    bench_loop("nvidia-smi -lms 100", ["nvidia-smi", "--query-gpu=" + QUERY, "--format=csv",
                                       "-lms", "100"], seconds, gpus)


def bench_phases(probe, runs):
    """Where a one-shot command's time goes: nvml-probe's phase timings, medians over runs."""
    import json

    keys = ("init_us", "open_us", "sample_us", "drain_us", "close_us")
    got = {k: [] for k in keys}
    for _ in range(runs):
        doc = json.loads(subprocess.run([probe, "--timing"], capture_output=True, text=True).stdout)
        step = doc["steps"][0]
        for k in keys:
            got[k].append(doc.get(k, step.get(k, 0)))
    print("NVML phases (median us): " + ", ".join(f"{k[:-3]} {statistics.median(v):.0f}" for k, v in got.items()))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/gpu-doctor")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--record-seconds", type=int, default=30)
    p.add_argument("--probe", help="nvml-probe binary: also print where the time goes")
    a = p.parse_args()
    gpus = int(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU "))
    bench_commands(a.bin, a.runs)
    if a.probe:
        bench_phases(a.probe, a.runs)
    print()
    bench_recorder(a.bin, a.record_seconds, gpus)


if __name__ == "__main__":
    main()
