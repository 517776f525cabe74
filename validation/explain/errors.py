"""Makes one real GPU failure, named on the command line, and lets it print what it prints.

Run by validation/explain.sh on an H200; every case fails on purpose (or, for `hold`,
holds memory until killed). Output goes to stdout/stderr unchanged: it is what
`gpu-doctor explain` is meant to read.
"""
import os
import sys
import time

case = sys.argv[1]
GIB = 2**30


def torch_cuda():
    import torch
    torch.cuda.init()
    return torch


if case == "torch_oom":
    torch = torch_cuda()
    x = torch.empty(100 * GIB, dtype=torch.uint8, device="cuda")
    y = torch.empty(200 * GIB, dtype=torch.uint8, device="cuda")

elif case == "torch_frag":
    torch = torch_cuda()
    free, total = torch.cuda.mem_get_info()
    n = int(free * 0.97) // GIB
    blocks = [torch.empty(GIB, dtype=torch.uint8, device="cuda") for _ in range(n)]
    keep = []
    for i in range(n):
        blocks[i] = None
        keep.append(torch.empty(600 * 2**20, dtype=torch.uint8, device="cuda"))
    print("reserved", torch.cuda.memory_reserved(), "allocated", torch.cuda.memory_allocated(), flush=True)
    x = torch.empty(12 * GIB, dtype=torch.uint8, device="cuda")

elif case == "torch_fraction":
    torch = torch_cuda()
    torch.cuda.set_per_process_memory_fraction(0.25)
    x = torch.empty(50 * GIB, dtype=torch.uint8, device="cuda")

elif case == "torch_malloc_async":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
    torch = torch_cuda()
    x = torch.empty(100 * GIB, dtype=torch.uint8, device="cuda")
    y = torch.empty(100 * GIB, dtype=torch.uint8, device="cuda")

elif case == "torch_leak":
    torch = torch_cuda()
    kept = []
    for step in range(100000):
        kept.append(torch.ones(GIB // 4, dtype=torch.float32, device="cuda"))
        if step % 10 == 0:
            print(f"step {step} memory_allocated={torch.cuda.memory_allocated()}", flush=True)

elif case == "torch_eval_autograd":
    # An evaluation loop left with autograd on that keeps every batch's output (and with it
    # the batch's graph) on the GPU: memory grows batch by batch until the OOM, which the
    # traceback shows inside `validate`.
    torch = torch_cuda()
    model = torch.nn.Sequential(
        torch.nn.Linear(8192, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 8192)
    ).cuda()

    def validate(batches):
        outputs = []
        for _ in range(batches):
            x = torch.randn(2048, 8192, device="cuda")
            outputs.append(model(x))
        return outputs

    validate(100000)

elif case == "torch_assert":
    torch = torch_cuda()
    e = torch.nn.Embedding(10, 4).cuda()
    i = torch.tensor([3, 12], device="cuda")
    print(e(i).sum().item())

elif case == "torch_nll_assert":
    torch = torch_cuda()
    logits = torch.randn(4, 5, device="cuda")
    labels = torch.tensor([0, 1, 7, 2], device="cuda")
    print(torch.nn.functional.cross_entropy(logits, labels).item())

elif case == "torch_badordinal":
    torch = torch_cuda()
    torch.zeros(1, device="cuda:3")

elif case == "cupy_illegal":
    import cupy as cp
    k = cp.RawKernel(r'extern "C" __global__ void k(float* a) { a[threadIdx.x * 100000000] = 1.0f; }', "k")
    a = cp.zeros(10, dtype=cp.float32)
    k((1,), (32,), (a,))
    cp.cuda.runtime.deviceSynchronize()

elif case == "cupy_misaligned":
    import cupy as cp
    k = cp.RawKernel(r'extern "C" __global__ void k(char* a) { *(float4*)(a + 3) = make_float4(1,1,1,1); }', "k")
    a = cp.zeros(64, dtype=cp.uint8)
    k((1,), (1,), (a,))
    cp.cuda.runtime.deviceSynchronize()

elif case == "cupy_oom":
    import cupy as cp
    a = cp.zeros(300 * GIB, dtype=cp.uint8)

elif case == "jax_oom":
    import jax.numpy as jnp
    a = jnp.zeros((300 * GIB,), dtype=jnp.uint8)
    a.block_until_ready()

elif case == "nccl_duplicate_gpu":
    # Two ranks on the one GPU: NCCL refuses ("Duplicate GPU detected").
    import torch
    import torch.distributed as dist
    dist.init_process_group("nccl")
    torch.cuda.set_device(0)
    t = torch.ones(1, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    print("all_reduce returned", t.item())

elif case == "hold":
    # Holds 60 GiB until killed: the "other process" for the --live and other-process cases.
    torch = torch_cuda()
    x = torch.empty(60 * GIB, dtype=torch.uint8, device="cuda")
    print("holding", os.getpid(), flush=True)
    time.sleep(600)

elif case == "torch_oom_beside_holder":
    torch = torch_cuda()
    free, total = torch.cuda.mem_get_info()
    x = torch.empty(int(free * 0.8), dtype=torch.uint8, device="cuda")
    y = torch.empty(40 * GIB, dtype=torch.uint8, device="cuda")

elif case == "cupy_oom_beside_holder":
    # 100 GiB would fit the GPU, not what the holder leaves free; CuPy's message names no
    # other process.
    import cupy as cp
    a = cp.zeros(100 * GIB, dtype=cp.uint8)

elif case == "jax_oom_beside_holder":
    # JAX with its defaults (it preallocates 75 % of the GPU) beside the holder, then an array
    # larger than what is left.
    import jax.numpy as jnp
    a = jnp.zeros((100 * GIB,), dtype=jnp.uint8)
    a.block_until_ready()

elif case == "hold_all":
    # Holds all but 32 MiB of the GPU until killed: a fresh process then cannot even create
    # its CUDA context.
    torch = torch_cuda()
    free, total = torch.cuda.mem_get_info()
    x = torch.empty(free - 32 * 2**20, dtype=torch.uint8, device="cuda")
    print("holding", os.getpid(), free - 32 * 2**20, flush=True)
    time.sleep(600)

elif case == "torch_init_beside_full":
    import torch
    x = torch.zeros(1, device="cuda")

elif case == "cupy_init_beside_full":
    import cupy
    x = cupy.zeros(1)

elif case == "jax_init_beside_full":
    import jax.numpy as jnp
    x = jnp.zeros(1)
    x.block_until_ready()

elif case == "torch_host_alloc":
    # A CPU allocation the machine cannot give: what a job that runs out of host RAM prints
    # when the allocation fails before the kernel's OOM killer acts.
    import torch
    x = torch.empty(2**50, dtype=torch.uint8)

# Failures that are not the GPU's, in jobs that use the GPU: what GD579 must call a failure of
# no known GPU cause (not "no problem"), and the messages with no trigger word on their line.
elif case == "torch_shape_mismatch":
    # A model bug on the GPU: the matmul's shapes do not agree.
    torch = torch_cuda()
    a = torch.ones(4, 3, device="cuda")
    b = torch.ones(4, 5, device="cuda")
    print(a @ b)

elif case == "torch_cpu_index":
    # An embedding indexed past its end on the CPU (BERT's 512 positions).
    import torch
    emb = torch.nn.Embedding(512, 8)
    emb(torch.arange(600))

elif case == "jax_shape_mismatch":
    import jax.numpy as jnp
    jnp.dot(jnp.ones((4, 3)), jnp.ones((4, 5))).block_until_ready()

elif case == "missing_shared_lib":
    # A package's own shared library that is not installed.
    import ctypes
    ctypes.CDLL("libgpu_doctor_absent.so.1")

elif case == "python_segfault":
    # A crash in native code, with Python's fault handler on.
    import ctypes
    import faulthandler
    faulthandler.enable()
    torch = torch_cuda()
    ctypes.string_at(0)

elif case == "torch_graph_capture":
    # A call that CUDA-graph capture forbids (a device-wide sync) while a graph is captured.
    torch = torch_cuda()
    x = torch.ones(1024, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        torch.cuda.synchronize()

else:
    sys.exit(f"unknown case {case}")
