"""Per-call wall time of every NVML function NvmlSource calls in one sample, through
nvidia-ml-py (validation/nvml.sh). Prints `name mean_us result` lines, so the recorder's
per-sample cost can be attributed to calls.
"""

import time

import pynvml as n

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
calls = [
    ("GetMemoryInfo_v2", lambda: n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2)),
    ("GetMemoryInfo", lambda: n.nvmlDeviceGetMemoryInfo(h)),
    ("GetUtilizationRates", lambda: n.nvmlDeviceGetUtilizationRates(h)),
    ("GetTemperature", lambda: n.nvmlDeviceGetTemperature(h, 0)),
    ("GetPowerUsage", lambda: n.nvmlDeviceGetPowerUsage(h)),
    ("GetEnforcedPowerLimit", lambda: n.nvmlDeviceGetEnforcedPowerLimit(h)),
    ("GetClockInfo_SM", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
    ("GetClockInfo_MEM", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
    ("GetCurrentClocksThrottleReasons", lambda: n.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
    ("GetEccMode", lambda: n.nvmlDeviceGetEccMode(h)),
    ("GetTotalEccErrors_vol_corr", lambda: n.nvmlDeviceGetTotalEccErrors(h, 0, 0)),
    ("GetTotalEccErrors_vol_unc", lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 0)),
    ("GetTotalEccErrors_agg_corr", lambda: n.nvmlDeviceGetTotalEccErrors(h, 0, 1)),
    ("GetRetiredPages_sbe", lambda: n.nvmlDeviceGetRetiredPages(h, 0)),
    ("GetRetiredPagesPendingStatus", lambda: n.nvmlDeviceGetRetiredPagesPendingStatus(h)),
    ("GetRemappedRows", lambda: n.nvmlDeviceGetRemappedRows(h)),
    ("GetCurrPcieLinkGeneration", lambda: n.nvmlDeviceGetCurrPcieLinkGeneration(h)),
    ("GetCurrPcieLinkWidth", lambda: n.nvmlDeviceGetCurrPcieLinkWidth(h)),
    ("GetPersistenceMode", lambda: n.nvmlDeviceGetPersistenceMode(h)),
    ("GetComputeMode", lambda: n.nvmlDeviceGetComputeMode(h)),
    ("GetMigMode", lambda: n.nvmlDeviceGetMigMode(h)),
    ("GetComputeRunningProcesses", lambda: n.nvmlDeviceGetComputeRunningProcesses(h)),
    ("GetGraphicsRunningProcesses", lambda: n.nvmlDeviceGetGraphicsRunningProcesses(h)),
    ("GetSupportedEventTypes", lambda: n.nvmlDeviceGetSupportedEventTypes(h)),
]
for name, fn in calls:
    timed(name, fn)
n.nvmlShutdown()
