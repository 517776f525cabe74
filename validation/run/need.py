"""A job that needs NEED GiB on its GPU and runs a few matmuls there.

    python need.py NEED_GIB"""
import os
import sys

import torch

need = float(sys.argv[1])
print("CUDA_VISIBLE_DEVICES=%s" % os.environ.get("CUDA_VISIBLE_DEVICES"), flush=True)
buf = torch.empty(int(need * 2**30), dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda")
for _ in range(10):
    a = a @ a
    a = a / a.norm()
torch.cuda.synchronize()
print(f"ran on {torch.cuda.get_device_name()} with {need} GiB", flush=True)
