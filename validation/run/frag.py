"""The fragmentation pattern of testdata/h200/err-frag-oom-real.txt: fill the GPU with 1 GiB
blocks, free them, put a 600 MiB tensor in each freed block, then ask for 12 GiB. Without
expandable segments every cached 1 GiB segment is split by a live 600 MiB tensor, so ~50 GiB
is reserved but unallocated and the 12 GiB request fails; with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True it succeeds (frag-expandable.txt)."""
import torch

blocks = []
try:
    while True:
        blocks.append(torch.empty(2**30, dtype=torch.uint8, device="cuda"))
except torch.OutOfMemoryError:
    pass
n = len(blocks)
del blocks
small = [torch.empty(600 * 2**20, dtype=torch.uint8, device="cuda") for _ in range(n)]
print("blocks", n, "reserved", torch.cuda.memory_reserved(), "allocated", torch.cuda.memory_allocated(), flush=True)
x = torch.empty(12 * 2**30, dtype=torch.uint8, device="cuda")
print("NO OOM: 12 GiB allocated", flush=True)
