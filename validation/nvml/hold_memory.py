"""Holds about GIB GiB of GPU memory until killed (validation/nvml.sh).

Prints `ready <pid> <bytes>` once the memory is allocated and touched, so the caller can
start comparing nvidia-smi with gpu-doctor.
"""

import os
import sys
import time

import torch

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
limit_s = float(sys.argv[2]) if len(sys.argv) > 2 else 45.0
n = int(gib * 2**30)
x = torch.empty(n, dtype=torch.uint8, device="cuda")
x.fill_(1)  # touch it, so it is resident and counted
torch.cuda.synchronize()
print(f"ready {os.getpid()} {torch.cuda.memory_reserved()}", flush=True)
# Busy-ish: a small kernel now and then keeps utilisation above 0 without hogging the GPU.
end = time.time() + limit_s
while time.time() < end:
    x[: 2**20].add_(1)
    time.sleep(0.05)
