#!/usr/bin/env python3
"""A large snapshot without a GPU, shaped like `validation/snapshot/produce.py large` makes on
one: for development only (the issue's benchmark uses a real snapshot from the GPU).

usage: synth.py OUT.pickle [PAIRS]      (default 2 500 000 pairs: about 800 MB, like the real one)

Each pair is an `alloc`, a `free_requested` and a `free_completed` entry whose frames are a
recursion 0-23 deep, as in produce.py; frame dicts are shared objects and the keys the same
strings, and each entry's `compile_context` a new "N/A" object, so the pickle's memo (MEMOIZE,
BINGET) looks like torch's own dump. Needs no torch.
"""
import pickle
import sys

out = sys.argv[1]
pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 2_500_000
FILE = "/opt/torch/.venv/lib/python3.12/site-packages/validation/snapshot/produce.py"
deep = [{"name": "deep", "filename": FILE, "line": 184 + (i % 2)} for i in range(24)]
bottom = [{"name": "<module>", "filename": FILE, "line": 198}]
stacks = [[deep[0]] + deep[1 : level + 1] + bottom for level in range(24)]
base = 140_089_455_804_416
trace = []
t = 1_795_989_349_765_170
meta = ""
for i in range(pairs):
    if i % 1000 == 0:
        meta = f"step={i // 1000} phase=bench"
    size = (4096 + (i % 64) * 512) * 4
    addr = base + (i % 4096) * 1_048_576
    frames = stacks[i % 24]
    for action in ("alloc", "free_requested", "free_completed"):
        t += 3
        trace.append(
            {
                "action": action,
                "addr": addr,
                "size": size,
                "stream": 0,
                "time_us": t,
                # torch makes a new str per entry here, so the pickle memoizes each one.
                "compile_context": "".join(("N/", "A")),
                "user_metadata": meta,
                "frames": list(frames),
            }
        )
segments = [
    {
        "device": 0,
        "address": base,
        "total_size": 4096 * 1_048_576,
        "allocated_size": 0,
        "active_size": 0,
        "requested_size": 0,
        "stream": 0,
        "segment_type": "large",
        "segment_pool_id": (0, 0),
        "is_expandable": False,
        "frames": [],
        "blocks": [{"address": base, "size": 4096 * 1_048_576, "requested_size": 0, "state": "inactive", "frames": []}],
    }
]
snapshot = {
    "segments": segments,
    "device_traces": [trace],
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": None, "max_split_size": -1},
    "external_annotations": [],
}
with open(out, "wb") as f:
    pickle.dump(snapshot, f, protocol=4)
