"""The NVML calls `NvmlSource` makes, as (name, function) pairs over nvidia-ml-py, shared by
call_cost.py (steady-state cost) and first_call.py (first-time cost)."""

import pynvml as n


def static_calls(h):
    """What `NvmlSource::open` reads once per GPU (the inventory)."""
    return [
        ("GetUUID", lambda: n.nvmlDeviceGetUUID(h)),
        ("GetName", lambda: n.nvmlDeviceGetName(h)),
        ("GetPciInfo", lambda: n.nvmlDeviceGetPciInfo(h)),
        ("GetCudaComputeCapability", lambda: n.nvmlDeviceGetCudaComputeCapability(h)),
        ("GetTemperatureThreshold_slowdown", lambda: n.nvmlDeviceGetTemperatureThreshold(h, 1)),
        ("GetTemperatureThreshold_shutdown", lambda: n.nvmlDeviceGetTemperatureThreshold(h, 0)),
        ("GetMaxPcieLinkGeneration", lambda: n.nvmlDeviceGetMaxPcieLinkGeneration(h)),
        ("GetMaxPcieLinkWidth", lambda: n.nvmlDeviceGetMaxPcieLinkWidth(h)),
        ("GetSerial", lambda: n.nvmlDeviceGetSerial(h)),
    ]


def sample_calls(h):
    """What one sample reads per GPU."""
    return [
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
