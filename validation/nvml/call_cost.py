"""Per-call wall time of every NVML function NvmlSource calls in one sample, through
nvidia-ml-py (validation/nvml.sh). Prints `name mean_us result` lines, so the recorder's
per-sample cost can be attributed to calls.
"""

import time

import pynvml as n
from calls import sample_calls

N = 200


def timed(name, fn):
    try:
        fn()
        t = time.perf_counter()
        for _ in range(N):
            r = fn()
        us = (time.perf_counter() - t) / N * 1e6
        print(f"{name} {us:.1f} {str(r)[:80]}")
    except n.NVMLError as e:
        print(f"{name} ERR {e}")


n.nvmlInit()
print("driver", n.nvmlSystemGetDriverVersion())
h = n.nvmlDeviceGetHandleByIndex(0)
calls = sample_calls(h)
for name, fn in calls:
    timed(name, fn)
n.nvmlShutdown()
