"""A small real PyTorch training job whose starting batch does not fit on an H200.

Each sample is a long sequence (--seq tokens of width 1024, bf16) through a 2-layer MLP, so
activations grow with the batch: at the default --seq, one sample holds about 1 GiB of live
activations and gradients, and a batch of 256 needs ~256 GiB. The first --short-steps steps
use sequences 8x shorter (a warm-up), so checkpoints exist before the first OOM and a retry
has something to resume from.

Checkpoints: ckpt/step-N.pt written as step-N.pt.tmp then renamed (the safe convention), with
the model, the optimizer and the step. --resume PATH continues after that step.
"""
import argparse
import os
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, required=True)
p.add_argument("--grad-accum", type=int, default=1)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--short-steps", type=int, default=2)
p.add_argument("--seq", type=int, default=65536)
p.add_argument("--ckpt-dir", default="ckpt")
p.add_argument("--resume", default=None)
a = p.parse_args()

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
).to(dev, torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
start = 0
if a.resume:
    state = torch.load(a.resume, map_location=dev)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    start = state["step"]
    print(f"resumed from {a.resume} at step {start}", flush=True)

os.makedirs(a.ckpt_dir, exist_ok=True)
t0 = time.time()
for step in range(start + 1, a.steps + 1):
    seq = a.seq // 8 if step <= a.short_steps else a.seq
    # The micro-batch is what must fit; accumulation keeps the effective batch.
    for _ in range(a.grad_accum):
        x = torch.randn(a.batch_size, seq, 1024, device=dev, dtype=torch.bfloat16)
        loss = model(x).float().pow(2).mean() / a.grad_accum
        loss.backward()
        del x
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print(
        f"step {step}/{a.steps} batch {a.batch_size} accum {a.grad_accum} seq {seq} "
        f"loss {loss.item():.4f} peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB",
        flush=True,
    )
    path = os.path.join(a.ckpt_dir, f"step-{step}.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, path + ".tmp")
    os.replace(path + ".tmp", path)
print(
    f"done: batch {a.batch_size} accum {a.grad_accum} effective {a.batch_size * a.grad_accum} "
    f"in {time.time() - t0:.1f} s",
    flush=True,
)
