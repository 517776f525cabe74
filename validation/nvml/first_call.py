"""The cost of each NVML call the first time a process makes it, per GPU, next to the second
time (through nvidia-ml-py, in the order `NvmlSource` opens a GPU and reads its first sample).
A one-shot `gpu-doctor status` pays the first-call costs; the recorder pays the second.
Prints `gpu name first_us second_us` lines and the totals.
"""

import time

import pynvml as n


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
    calls = [
        ("GetUUID", lambda: n.nvmlDeviceGetUUID(h)),
        ("GetName", lambda: n.nvmlDeviceGetName(h)),
        ("GetPciInfo", lambda: n.nvmlDeviceGetPciInfo(h)),
        ("GetCudaComputeCapability", lambda: n.nvmlDeviceGetCudaComputeCapability(h)),
        ("GetTemperatureThreshold_slowdown", lambda: n.nvmlDeviceGetTemperatureThreshold(h, 1)),
        ("GetTemperatureThreshold_shutdown", lambda: n.nvmlDeviceGetTemperatureThreshold(h, 0)),
        ("GetMaxPcieLinkGeneration", lambda: n.nvmlDeviceGetMaxPcieLinkGeneration(h)),
        ("GetMaxPcieLinkWidth", lambda: n.nvmlDeviceGetMaxPcieLinkWidth(h)),
        ("GetSerial", lambda: n.nvmlDeviceGetSerial(h)),
        ("GetMemoryInfo_v2", lambda: n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2)),
        ("GetUtilizationRates", lambda: n.nvmlDeviceGetUtilizationRates(h)),
        ("GetTemperature", lambda: n.nvmlDeviceGetTemperature(h, 0)),
        ("GetPowerUsage", lambda: n.nvmlDeviceGetPowerUsage(h)),
        ("GetEnforcedPowerLimit", lambda: n.nvmlDeviceGetEnforcedPowerLimit(h)),
        ("GetClockInfo_SM", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
        ("GetClockInfo_MEM", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
        ("GetCurrentClocksEventReasons", lambda: n.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
        ("GetEccMode", lambda: n.nvmlDeviceGetEccMode(h)),
        ("GetTotalEccErrors_vol_corr", lambda: n.nvmlDeviceGetTotalEccErrors(h, 0, 0)),
        ("GetTotalEccErrors_vol_unc", lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 0)),
        ("GetTotalEccErrors_agg_corr", lambda: n.nvmlDeviceGetTotalEccErrors(h, 0, 1)),
        ("GetTotalEccErrors_agg_unc", lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 1)),
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
