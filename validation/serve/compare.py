"""Compares one scrape of `gpu-doctor serve` with nvidia-smi taken at the same moment.

usage: compare.py METRICS_FILE SMI_GPU_CSV SMI_APPS_CSV
  SMI_GPU_CSV:  nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw --format=csv,noheader,nounits
  SMI_APPS_CSV: nvidia-smi --query-compute-apps=gpu_bus_id,pid,used_memory --format=csv,noheader,nounits
Prints one line per compared value: `ok|DIFF gpu metric serve smi tolerance`; exits 1 on a DIFF.
"""
import re
import sys

LINE = re.compile(r'^([a-z_]+)\{([^}]*)\} (\S+)$')


def metrics(path):
    out = {}
    for line in open(path):
        m = LINE.match(line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def one(ms, name, **want):
    for labels, v in ms.get(name, []):
        if all(labels.get(k) == str(x) for k, x in want.items()):
            return v
    return None


def main():
    ms = metrics(sys.argv[1])
    bad = 0

    def check(gpu, what, serve, smi, tol):
        nonlocal bad
        if serve is None or smi is None:
            print(f"MISSING gpu={gpu} {what} serve={serve} smi={smi}")
            bad += 1
            return
        ok = abs(serve - smi) <= tol
        bad += not ok
        print(f"{'ok  ' if ok else 'DIFF'} gpu={gpu} {what} serve={serve:.2f} smi={smi:.2f} tolerance={tol:g}")

    for row in open(sys.argv[2]):
        f = [x.strip() for x in row.split(",")]
        if len(f) < 6 or not f[0].isdigit():
            continue
        g = f[0]
        num = lambda s: float(s) if re.match(r'^-?[0-9.]+$', s) else None
        used, total, util, temp, power = (num(x) for x in f[1:6])
        mib = 1024 * 1024
        s_used = one(ms, "gpu_doctor_memory_used_bytes", gpu=g)
        s_total = one(ms, "gpu_doctor_memory_total_bytes", gpu=g)
        # nvidia-smi prints MiB; the two reads are up to a second apart under load.
        check(g, "memory.used MiB", s_used / mib if s_used is not None else None, used, max(64, 0.02 * (used or 0)))
        check(g, "memory.total MiB", s_total / mib if s_total is not None else None, total, 1)
        s_util = one(ms, "gpu_doctor_utilization_ratio", gpu=g)
        check(g, "utilization.gpu %", s_util * 100 if s_util is not None else None, util, 20)
        check(g, "temperature.gpu C", one(ms, "gpu_doctor_temperature_celsius", gpu=g), temp, 3)
        check(g, "power.draw W", one(ms, "gpu_doctor_power_draw_watts", gpu=g), power, max(25, 0.15 * (power or 0)))
    for row in open(sys.argv[3]):
        f = [x.strip() for x in row.split(",")]
        if len(f) < 3 or not f[1].isdigit():
            continue
        pid, used = f[1], float(f[2]) if f[2].isdigit() else None
        v = None
        for labels, x in ms.get("gpu_doctor_process_memory_used_bytes", []):
            if labels.get("pid") == pid:
                v = x / (1024 * 1024)
        check("-", f"process {pid} used_memory MiB", v, used, 64)
    sys.exit(1 if bad else 0)


main()
