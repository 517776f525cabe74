"""Produces real memory snapshots on a GPU, and what torch itself says about them.

python3 validation/snapshot/produce.py MODE OUTDIR
MODE: train | leak | frag-oom | stacks-all | large

For each mode it writes OUTDIR/<mode>.pickle (torch.cuda.memory._dump_snapshot) and
OUTDIR/<mode>.stats.json: torch.cuda.memory_stats() taken right before the dump, the OOM
message when there was one, timings, and the figures torch.cuda._memory_viz computes from the
same file (see viz_figures).
"""
import json
import os
import sys
import time

import torch

MODE, OUT = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
DEV = "cuda"
info = {"mode": MODE, "torch": torch.__version__}
t0 = time.time()


def record(stacks="python", max_entries=200_000):
    torch.cuda.memory._record_memory_history(max_entries=max_entries, stacks=stacks)


def tiny_gpt(layers=4, width=512):
    """A small GPT-2 with random weights (no download), or a plain transformer without transformers."""
    try:
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(n_layer=layers, n_embd=width, n_head=8, n_positions=256, vocab_size=8192)
        return GPT2LMHeadModel(cfg).to(DEV), "gpt2"
    except Exception as e:  # noqa: BLE001 - any import problem: fall back
        info["transformers_error"] = repr(e)
        layer = torch.nn.TransformerEncoderLayer(width, 8, 4 * width, batch_first=True)
        return torch.nn.TransformerEncoder(layer, layers).to(DEV), "encoder"


def train_steps(model, kind, steps, keep=None):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        if kind == "gpt2":
            ids = torch.randint(0, 8192, (8, 256), device=DEV)
            loss = model(ids, labels=ids).loss
        else:
            x = torch.randn(8, 256, 512, device=DEV)
            loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if keep is not None:
            keep.append(loss)  # the leak: every step's graph stays alive
    torch.cuda.synchronize()


def finish(name):
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    info["memory_stats"] = {k: v for k, v in stats.items() if isinstance(v, (int, float))}
    info["memory_allocated"] = torch.cuda.memory_allocated()
    info["memory_reserved"] = torch.cuda.memory_reserved()
    info["device_total_bytes"] = torch.cuda.get_device_properties(0).total_memory
    info["mem_get_info"] = list(torch.cuda.mem_get_info())
    path = os.path.join(OUT, f"{name}.pickle")
    t = time.time()
    torch.cuda.memory._dump_snapshot(path)
    info["dump_seconds"] = round(time.time() - t, 3)
    info["file_bytes"] = os.path.getsize(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    info["produce_seconds"] = round(time.time() - t0, 3)
    if MODE != "large":
        info["memory_viz"] = viz_figures(path)
    with open(os.path.join(OUT, f"{name}.stats.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
    print(json.dumps({k: info[k] for k in ("file_bytes", "memory_allocated", "memory_reserved")}))


def viz_figures(path):
    """What torch.cuda._memory_viz computes on the file: its segsum totals, and the totals of
    the flamegraph inputs (`segments`/`memory` views) summed per state."""
    import pickle

    from torch.cuda import _memory_viz as viz

    with open(path, "rb") as f:
        snap = pickle.load(f)
    out = {}
    try:
        text = viz.segsum(snap)
        out["segsum_tail"] = text.splitlines()[-8:]
    except Exception as e:  # noqa: BLE001
        out["segsum_error"] = repr(e)
    segs = snap["segments"] if isinstance(snap, dict) else snap
    out["total_reserved"] = sum(s["total_size"] for s in segs)
    out["total_allocated"] = sum(s["allocated_size"] for s in segs)
    out["total_active"] = sum(s["active_size"] for s in segs)
    out["total_requested"] = sum(s["requested_size"] for s in segs)
    free = [b["size"] for s in segs for b in s["blocks"] if b["state"] == "inactive"]
    out["largest_free_block"] = max(free, default=0)
    out["free_blocks"] = len(free)
    traces = snap.get("device_traces", []) if isinstance(snap, dict) else []
    out["trace_entries"] = [len(t) for t in traces]
    ooms = [e for t in traces for e in t if e["action"] == "oom"]
    if ooms:
        out["oom"] = {"size": ooms[-1]["size"], "device_free": ooms[-1].get("device_free")}
    for fn in ("segments", "memory"):
        # The flamegraph input (`stream;seg;state;frames bytes`) that `python -m
        # torch.cuda._memory_viz segments|memory` would hand to flamegraph.pl (which it
        # downloads; no network here), summed per state.
        try:
            text = getattr(viz, fn)(snap, format_flamegraph=lambda s: s)
            per_state = {}
            for line in text.splitlines():
                head, _, size = line.rpartition(" ")
                parts = head.split(";")
                state = next((p for p in parts if p in ("active_allocated", "active_pending_free", "inactive")), parts[-1][:40])
                per_state[state] = per_state.get(state, 0) + int(size)
            out[f"viz_{fn}_bytes_by_state"] = per_state
        except Exception as e:  # noqa: BLE001
            out[f"viz_{fn}_error"] = repr(e)
    return out


if MODE == "train":
    record()
    model, kind = tiny_gpt()
    info["model"] = kind
    train_steps(model, kind, 5)
    finish("train")

elif MODE == "stacks-all":
    record(stacks="all")
    model, kind = tiny_gpt(layers=2, width=256)
    train_steps(model, kind, 3)
    finish("stacks-all")

elif MODE == "leak":
    record()
    model, kind = tiny_gpt(layers=2, width=256)
    kept = []
    train_steps(model, kind, 20, keep=kept)
    # A first snapshot half-way, for `gpu-doctor snapshot diff leak-early leak`.
    torch.cuda.memory._dump_snapshot(os.path.join(OUT, "leak-early.pickle"))
    info["early_memory_allocated"] = torch.cuda.memory_allocated()
    train_steps(model, kind, 20, keep=kept)
    info["kept_losses"] = len(kept)
    finish("leak")

elif MODE == "frag-oom":
    # Fill the GPU with 1 GiB blocks, free them, put a 600 MiB tensor in each hole (the
    # rest of each 1 GiB segment stays free but unusable for big requests), then ask 12 GiB.
    record()
    big = []
    try:
        while True:
            big.append(torch.empty(2**30, dtype=torch.uint8, device=DEV))
    except torch.OutOfMemoryError:
        pass
    info["filled_gib"] = len(big)
    n = len(big)
    del big
    small = [torch.empty(600 * 2**20, dtype=torch.uint8, device=DEV) for _ in range(n)]
    try:
        x = torch.empty(12 * 2**30, dtype=torch.uint8, device=DEV)
        info["oom"] = None
    except torch.OutOfMemoryError as e:
        info["oom"] = str(e)
    finish("frag-oom")
    del small

elif MODE == "large":
    # Many real allocations from a few Python stacks with per-step metadata, so the trace
    # holds millions of entries: a snapshot of several hundred MB, for the benchmark.
    # Up to LARGE_PAIRS allocations, or LARGE_SECONDS of allocating, whichever comes first.
    pairs = int(os.environ.get("LARGE_PAIRS", "2500000"))
    seconds = float(os.environ.get("LARGE_SECONDS", "50"))
    record(max_entries=4 * pairs)

    def deep(level, step):
        if level:
            return deep(level - 1, step)
        t = torch.empty(4096 + (step % 64) * 512, device=DEV)
        return t

    set_meta = getattr(torch.cuda.memory, "_set_memory_metadata", None)
    keep = []
    start = time.time()
    done = 0
    for i in range(pairs):
        if i % 10000 == 0 and time.time() - start > seconds:
            break
        done = i + 1
        if set_meta and i % 1000 == 0:
            set_meta(f"step={i // 1000} phase=bench")
        t = deep(i % 24, i)
        if i % 97 == 0:
            keep.append(t)
        del t
    info["pairs"] = done
    info["alloc_loop_seconds"] = round(time.time() - start, 3)
    finish("large")

else:
    sys.exit(f"unknown mode {MODE}")
