"""Build the predicted-vs-measured table from validation/fit.sh's logs.

    python3 validation/fit/report.py DIR     # DIR = $OUT/fit

Reads DIR/logs/<case>.json (measure.py) and DIR/logs/<case>.fit.json (gpu-doctor fit
--json) and writes DIR/table.csv and DIR/table.md with the error of gpu-doctor and of
accelerate's estimate against the measured torch.cuda.max_memory_allocated().
"""

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import HELD_OUT  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if l.strip().startswith("{")]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


def gib(n):
    return f"{n / 2**30:.2f}" if isinstance(n, (int, float)) else "-"


def err(pred, meas):
    if not isinstance(pred, (int, float)) or not meas:
        return None
    return (pred - meas) / meas * 100.0


def main():
    d = sys.argv[1]
    logs = os.path.join(d, "logs")
    rows = []
    for name in sorted(os.listdir(logs)):
        if not name.endswith(".json") or name.endswith(".fit.json"):
            continue
        case = name[: -len(".json")]
        m = load(os.path.join(logs, name))
        if not m:
            continue
        f = load(os.path.join(logs, case + ".fit.json")) or {}
        meas = m.get("max_memory_allocated")
        pred = f.get("peak_allocated_bytes")
        acc = m.get("accelerate_estimate_bytes")
        rows.append(
            {
                "case": case + (" (held out)" if case in HELD_OUT else ""),
                "measured": meas,
                "measured_reserved": m.get("max_memory_reserved"),
                "gpu_doctor": pred,
                "gpu_doctor_reserved": f.get("peak_reserved_bytes"),
                "gpu_doctor_err_pct": err(pred, meas),
                "accelerate": acc,
                "accelerate_err_pct": err(acc, meas),
            }
        )
    with open(os.path.join(d, "table.csv"), "w") as out:
        cols = list(rows[0].keys()) if rows else ["case"]
        out.write(",".join(cols) + "\n")
        for r in rows:
            out.write(",".join("" if r[c] is None else (f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c])) for c in cols) + "\n")
    md = ["| case | measured GiB | gpu-doctor GiB | error | accelerate GiB | error |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        e1 = r["gpu_doctor_err_pct"]
        e2 = r["accelerate_err_pct"]
        md.append(
            f"| {r['case']} | {gib(r['measured'])} | {gib(r['gpu_doctor'])} | "
            f"{'-' if e1 is None else f'{e1:+.1f} %'} | {gib(r['accelerate'])} | {'-' if e2 is None else f'{e2:+.1f} %'} |"
        )
    for label, key in (("gpu-doctor", "gpu_doctor_err_pct"), ("accelerate", "accelerate_err_pct")):
        errs = [abs(r[key]) for r in rows if r[key] is not None]
        if errs:
            md.append("")
            md.append(f"{label}: {len(errs)} cases, median |error| {statistics.median(errs):.1f} %, worst {max(errs):.1f} %")
    with open(os.path.join(d, "table.md"), "w") as out:
        out.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
