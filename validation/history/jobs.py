"""Two training-like jobs for the leak validation.

`jobs.py leak SECONDS`: a loop that keeps 64 MiB of every step alive (a leak: `history.append(loss)`
with the graph attached, in effect), 2 steps a second.
`jobs.py plateau SECONDS`: warms up (8 GiB over 15 s: weights, optimizer state, caches), then holds
steady, with a 4 GiB evaluation spike for 3 s every 15 s that is given back to the driver.
Each prints its pid first so the validation can match it to gpu-doctor's findings."""
import os
import sys
import time

import torch

mode, seconds = sys.argv[1], float(sys.argv[2])
print(f"pid {os.getpid()} {mode}", flush=True)
t0 = time.time()
kept = []
if mode == "leak":
    while time.time() - t0 < seconds:
        kept.append(torch.ones(16 << 20, device="cuda"))  # 64 MiB kept every step
        torch.cuda.synchronize()
        time.sleep(0.5)
else:
    for _ in range(16):
        kept.append(torch.ones(128 << 20, device="cuda"))  # 512 MiB
        torch.cuda.synchronize()
        time.sleep(15 / 16)
    while time.time() - t0 < seconds:
        elapsed = time.time() - t0
        if int(elapsed) % 15 < 3:
            spike = torch.ones(1 << 30, device="cuda")  # 4 GiB evaluation buffers
            torch.cuda.synchronize()
            time.sleep(3)
            del spike
            torch.cuda.empty_cache()
        time.sleep(0.5)
print(f"done {mode}", flush=True)
