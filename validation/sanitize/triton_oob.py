"""Planted bug 5: an out-of-range index in a Triton gather kernel.

`idx` holds one index (1_000_000) far past the end of the 4096-element table, and the kernel
loads `table[idx]` without checking it. PyTorch's caching allocator would hide the overrun
inside a larger segment, so run with PYTORCH_NO_CUDA_MEMORY_CACHING=1. Expected: one memcheck
finding (Invalid __global__ read of size 4) in `gather_kernel`.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(table_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    val = tl.load(table_ptr + idx, mask=mask)  # bug: idx is never checked against the table
    tl.store(out_ptr + offs, val, mask=mask)


def main() -> int:
    table = torch.arange(4096, dtype=torch.float32, device="cuda")
    idx = torch.arange(256, dtype=torch.int64, device="cuda")
    idx[77] = 1_000_000
    out = torch.empty(256, dtype=torch.float32, device="cuda")
    gather_kernel[(1,)](table, idx, out, 256, BLOCK=256)
    torch.cuda.synchronize()
    print("triton_oob: done", float(out[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
