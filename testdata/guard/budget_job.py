"""A job for `gpu-doctor run --memory-limit` tests: writes its pid where the stand-in driver
reads it (so it shows on the GPU with the scenario's memory), initialises "CUDA", prints the
budget it was given, and sleeps for argv[1] seconds."""

import os
import sys
import time

with open(os.environ["GUARD_TEST_PID_FILE"], "w") as f:
    f.write(str(os.getpid()))

import torch

torch.cuda.init()
print("torch fractions:", torch.fractions, flush=True)
for name in (
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
):
    print("%s=%s" % (name, os.environ.get(name)), flush=True)
time.sleep(float(sys.argv[1]))
print("job done", flush=True)
