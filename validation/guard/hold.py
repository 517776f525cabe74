"""Holds GIB GiB of GPU memory with PyTorch for up to SECONDS seconds, touching a heartbeat
file every second (so the validation can tell it is still alive), then exits 0.

usage: hold.py GIB SECONDS HEARTBEAT_FILE"""

import sys
import time

import torch

gib, seconds, heartbeat = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
x = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda")
x.fill_(1)
torch.cuda.synchronize()
print("holding %.1f GiB; allocator reserved %.1f GiB" % (gib, torch.cuda.memory_reserved() / 2**30), flush=True)
end = time.time() + seconds
while time.time() < end:
    with open(heartbeat, "w") as f:
        f.write("%.3f\n" % time.time())
    time.sleep(1)
print("done", flush=True)
