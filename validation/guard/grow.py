"""Grows its GPU memory by STEP_GIB GiB every second, up to MAX_GIB, printing what it holds;
then holds it for 30 s. It is meant to be stopped (by its budget) before the end.

usage: grow.py STEP_GIB MAX_GIB"""

import sys
import time

import torch

step, most = float(sys.argv[1]), float(sys.argv[2])
chunks = []
held = 0.0
while held + step <= most:
    t = torch.empty(int(step * (1 << 30)), dtype=torch.uint8, device="cuda")
    t.fill_(1)
    chunks.append(t)
    held += step
    torch.cuda.synchronize()
    print("%.3f holding %.1f GiB (reserved %.1f GiB)" % (time.time(), held, torch.cuda.memory_reserved() / 2**30), flush=True)
    time.sleep(1)
time.sleep(30)
print("grew to the end without being stopped", flush=True)
