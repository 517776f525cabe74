"""Puts torch's own numbers next to gpu-doctor's for each validation snapshot.

python3 validation/snapshot/compare.py DIR  ->  prints a table (DIR/compare.txt)
Reads DIR/<mode>.stats.json (memory_stats at dump time, _memory_viz figures) and
DIR/<mode>.gpu-doctor.json (`gpu-doctor snapshot --json`).
"""
import json
import os
import sys

D = sys.argv[1]
rows = []


def row(mode, what, torch_value, ours):
    ok = "ok" if torch_value == ours else ("n/a" if torch_value is None or ours is None else "DIFF")
    rows.append(f"{mode:<11} {what:<34} {str(torch_value):>16} {str(ours):>16}  {ok}")


for mode in ("train", "leak", "frag-oom", "stacks-all"):
    try:
        with open(os.path.join(D, f"{mode}.stats.json")) as f:
            st = json.load(f)
        with open(os.path.join(D, f"{mode}.gpu-doctor.json")) as f:
            gd = json.load(f)
    except (OSError, ValueError) as e:
        rows.append(f"{mode:<11} missing: {e}")
        continue
    ms = st.get("memory_stats", {})
    viz = st.get("memory_viz", {})
    row(mode, "allocated (memory_stats current)", ms.get("allocated_bytes.all.current"), gd.get("allocated_bytes"))
    row(mode, "reserved (memory_stats current)", ms.get("reserved_bytes.all.current"), gd.get("reserved_bytes"))
    row(mode, "active (memory_stats current)", ms.get("active_bytes.all.current"), gd.get("active_bytes"))
    row(mode, "requested (memory_stats current)", ms.get("requested_bytes.all.current"), gd.get("requested_bytes"))
    row(mode, "inactive_split (memory_stats)", ms.get("inactive_split_bytes.all.current"), gd.get("fragmentation", {}).get("stranded_free_bytes"))
    peak = (gd.get("peak") or {}).get("allocated_bytes")
    row(mode, "allocated peak (memory_stats)", ms.get("allocated_bytes.all.peak"), peak)
    row(mode, "reserved peak (memory_stats)", ms.get("reserved_bytes.all.peak"), (gd.get("peak") or {}).get("max_reserved_bytes"))
    row(mode, "allocated (_memory_viz)", viz.get("total_allocated"), gd.get("allocated_bytes"))
    row(mode, "reserved (_memory_viz)", viz.get("total_reserved"), gd.get("reserved_bytes"))
    row(mode, "largest free block (viz data)", viz.get("largest_free_block"), gd.get("largest_free_block_bytes"))
    mem = viz.get("viz_memory_bytes_by_state", {})
    row(mode, "viz `memory` active_allocated", mem.get("active_allocated"), gd.get("allocated_bytes"))
    row(mode, "trace entries (viz data)", sum(viz.get("trace_entries", [])) or None, gd.get("trace", {}).get("entries"))
    if viz.get("oom") or gd.get("oom"):
        o = gd.get("oom") or {}
        row(mode, "oom requested", (viz.get("oom") or {}).get("size"), o.get("requested_bytes"))
        row(mode, "oom device free", (viz.get("oom") or {}).get("device_free"), o.get("device_free_bytes"))
    causes = [f.get("cause") for f in gd.get("findings", [])]
    rows.append(f"{mode:<11} findings: {causes}")

text = "\n".join(
    [f"{'mode':<11} {'figure':<34} {'torch':>16} {'gpu-doctor':>16}", *rows]
)
print(text)
