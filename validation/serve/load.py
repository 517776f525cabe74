"""GPU load for validation/serve.sh: holds ~20 GiB and keeps the GPU busy with matmuls for
SECONDS, so the exporter and nvidia-smi have non-idle numbers to agree on."""
import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 40.0
dev = torch.device("cuda:0")
hold = torch.empty(20 * 1024**3, dtype=torch.uint8, device=dev)  # 20 GiB held
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
print(f"load: holding {hold.numel() / 2**30:.1f} GiB, matmuls for {seconds:.0f} s", flush=True)
end = time.time() + seconds
n = 0
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    n += 20
print(f"load: {n} matmuls", flush=True)
