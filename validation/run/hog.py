"""Another process holding most of a GPU's memory for a while, then leaving.

    python hog.py GIB SECONDS     (on the GPU CUDA_VISIBLE_DEVICES names)"""
import sys
import time

import torch

gib, seconds = float(sys.argv[1]), float(sys.argv[2])
x = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print(f"hog: holding {gib} GiB on {torch.cuda.get_device_name()} for {seconds} s", flush=True)
time.sleep(seconds)
print("hog: leaving", flush=True)
