"""The cost of each NVML call the first time a process makes it, per GPU, next to the second
time (through nvidia-ml-py, in the order `NvmlSource` opens a GPU and reads its first sample).
A one-shot `gpu-doctor status` pays the first-call costs; the recorder pays the second.
Prints `gpu name first_us second_us` lines and the totals.
"""

import time

import pynvml as n
from calls import sample_calls, static_calls


def timed(fn):
    t = time.perf_counter()
    try:
        fn()
    except n.NVMLError:
        pass
    return (time.perf_counter() - t) * 1e6


t = time.perf_counter()
n.nvmlInit()
print(f"- nvmlInit {(time.perf_counter() - t) * 1e6:.0f}")
count = n.nvmlDeviceGetCount()
for i in range(count):
    t = time.perf_counter()
    h = n.nvmlDeviceGetHandleByIndex(i)
    print(f"{i} GetHandleByIndex {(time.perf_counter() - t) * 1e6:.0f}")
    calls = static_calls(h) + sample_calls(h)
    total1 = total2 = 0.0
    for name, fn in calls:
        a = timed(fn)
        b = timed(fn)
        total1 += a
        total2 += b
        print(f"{i} {name} {a:.0f} {b:.0f}")
    print(f"{i} TOTAL {total1:.0f} {total2:.0f}")
t = time.perf_counter()
n.nvmlShutdown()
print(f"- nvmlShutdown {(time.perf_counter() - t) * 1e6:.0f}")
