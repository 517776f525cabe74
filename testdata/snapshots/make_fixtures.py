"""Writes the crafted and re-encoded snapshot fixtures in this folder.

Run from the repo root: python3 testdata/snapshots/make_fixtures.py
Needs only the standard library (no torch): the real snapshots in testdata/h200 are
re-encoded with other pickle protocols and reshaped into older/newer schema variants; the
hostile files are written byte by byte.
"""
import copy
import os
import pickle
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
H200 = os.path.join(HERE, "..", "h200")


def load(name):
    with open(os.path.join(H200, name), "rb") as f:
        return pickle.load(f)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# --- the same real snapshot in every protocol the reader accepts --------------------------
real = load("frag-oom-real.pickle")
for proto in (2, 3, 5):
    write(f"frag-oom-real.p{proto}.pickle", pickle.dumps(real, protocol=proto))

# --- torch.cuda.memory_snapshot(): the bare segment list ----------------------------------
write("bare-segments.pickle", pickle.dumps(real["segments"][:8], protocol=4))

# --- torch 2.0 layout: per-block `history`, no block address/frames, no time_us -----------
leak = load("leak.pickle")
legacy = {"segments": [], "device_traces": []}
for seg in leak["segments"]:
    s = {k: v for k, v in seg.items() if k not in ("frames", "is_expandable", "segment_pool_id")}
    blocks = []
    for b in seg["blocks"]:
        nb = {"size": b["size"], "state": b["state"]}
        if b["state"] != "inactive":
            nb["history"] = [{"addr": b["address"], "real_size": b["requested_size"], "frames": b["frames"]}]
        blocks.append(nb)
    s["blocks"] = blocks
    legacy["segments"].append(s)
for trace in leak["device_traces"]:
    legacy["device_traces"].append(
        [{k: v for k, v in e.items() if k not in ("time_us", "compile_context", "user_metadata")} for e in trace]
    )
write("legacy-2.0.pickle", pickle.dumps(legacy, protocol=2))

# --- newer pieces: expandable segments, segment_map/unmap, both pending-free spellings ----
frames = [{"filename": "/home/user/model.py", "line": 12, "name": "forward"}]
MiB = 1 << 20
base = 0x7F0000000000
expandable = {
    "segments": [
        {
            "device": 0, "address": base, "total_size": 60 * MiB, "allocated_size": 30 * MiB,
            "active_size": 40 * MiB, "requested_size": 30 * MiB, "stream": 0,
            "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": True,
            "frames": [],
            "blocks": [
                {"address": base, "size": 20 * MiB, "requested_size": 20 * MiB, "state": "active_allocated", "frames": frames},
                {"address": base + 20 * MiB, "size": 10 * MiB, "requested_size": 10 * MiB, "state": "active_pending_free", "frames": frames},
                {"address": base + 30 * MiB, "size": 10 * MiB, "requested_size": 10 * MiB, "state": "active_allocated", "frames": frames},
                {"address": base + 40 * MiB, "size": 20 * MiB, "requested_size": 20 * MiB, "state": "inactive", "frames": []},
            ],
        },
        {
            "device": 0, "address": base + 2**30, "total_size": 2 * MiB, "allocated_size": 0,
            "active_size": 512, "requested_size": 0, "stream": 140000000000,
            "segment_type": "small", "segment_pool_id": (0, 1), "is_expandable": True, "frames": [],
            "blocks": [
                {"address": base + 2**30, "size": 512, "requested_size": 100, "state": "active_awaiting_free", "frames": frames},
                {"address": base + 2**30 + 512, "size": 2 * MiB - 512, "requested_size": 0, "state": "inactive", "frames": []},
            ],
        },
    ],
    "device_traces": [[
        {"action": "segment_map", "addr": base, "size": 80 * MiB, "stream": 0, "time_us": 1000, "frames": frames},
        {"action": "alloc", "addr": base, "size": 20 * MiB, "stream": 0, "time_us": 1001, "frames": frames},
        {"action": "alloc", "addr": base + 20 * MiB, "size": 10 * MiB, "stream": 0, "time_us": 1002, "frames": frames},
        {"action": "alloc", "addr": base + 30 * MiB, "size": 10 * MiB, "stream": 0, "time_us": 1003, "frames": frames},
        {"action": "free_requested", "addr": base + 20 * MiB, "size": 10 * MiB, "stream": 0, "time_us": 1004, "frames": frames},
        {"action": "segment_unmap", "addr": base + 60 * MiB, "size": 20 * MiB, "stream": 0, "time_us": 1005, "frames": []},
        {"action": "segment_map", "addr": base + 2**30, "size": 2 * MiB, "stream": 140000000000, "time_us": 1006, "frames": []},
        {"action": "snapshot", "addr": 0, "size": 40 * MiB, "stream": 0, "time_us": 1007, "frames": []},
        {"action": "annotate", "addr": 0, "size": 0, "stream": 0, "time_us": 1008, "frames": []},
    ]],
    "allocator_settings": {
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "max_split_size": -1,
        "garbage_collection_threshold": 0.0, "expandable_segments": True,
        "roundup_power2_divisions": {"1": 0, "2": 0},
    },
    "external_annotations": [{"stage": "START", "name": "step", "device": 0, "time_us": 1001}],
}
write("expandable.pickle", pickle.dumps(expandable, protocol=5))

# --- hostile files: each must be refused with a clear error (exit 2) ----------------------
# GLOBAL os.system + REDUCE, the classic pickle exploit (protocol 2 text GLOBAL).
write("evil-global-os-system.pickle", b"\x80\x02cos\nsystem\nX\x0a\x00\x00\x00echo pwned\x85R.")


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


# What pickle.dumps writes for it today: STACK_GLOBAL + REDUCE.
write("evil-stack-global.pickle", pickle.dumps(Evil(), protocol=4))
# Nesting far beyond any snapshot: 100 000 lists, each appended into the one below.
n = 100_000
write("evil-deep-nesting.pickle", b"\x80\x04" + b"]" * n + b"a" * (n - 1) + b".")
# A BINUNICODE8 string and a BINBYTES8 value claiming a terabyte each.
write("evil-huge-unicode8.pickle", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 40) + b"abc.")
write("evil-huge-bytes8.pickle", b"\x80\x04\x8e" + struct.pack("<Q", 1 << 40) + b"abc.")
# A real snapshot cut short.
with open(os.path.join(H200, "frag.pickle"), "rb") as f:
    write("evil-truncated.pickle", f.read()[:5000])
# Protocol 0 (text): not what torch writes.
write("protocol0.pickle", pickle.dumps({"segments": []}, protocol=0))
