"""Writes testdata/fit/eight-gpus.ndjson, the recording `pick`'s tests replay.

Eight H200s in every state pick must judge: free and idle (0, 6), busy (1), lost (2),
uncorrectable ECC errors (3), a pending row remap (4), lightly used (5, 7).
Run: python3 testdata/fit/make_recordings.py
"""

import json
import os

GIB = 1 << 30
TOTAL = 150754820096
T0 = 1795982400000
# index: (free GiB, util %, state)
GPUS = {
    0: (139, 0, "ok"),
    1: (20, 97, "ok"),
    2: (None, None, "lost"),
    3: (139, 0, "ecc"),
    4: (139, 0, "remap"),
    5: (100, 5, "ok"),
    6: (138, 0, "ok"),
    7: (60, 3, "ok"),
}
UNSUP = {"absent": "unsupported"}


def uuid(i):
    return f"GPU-{i:08x}-7f00-4c1a-9e21-0a1b2c3d4e5f"


def device(i):
    free, util, state = GPUS[i]
    if state == "lost":
        failed = {"absent": "failed", "error": "GPU is lost"}
        d = {"index": i, "state": "lost", "reason": "GPU has fallen off the bus"}
        for k in ["memory_total_bytes", "memory_used_bytes", "memory_free_bytes", "memory_reserved_bytes",
                  "utilization_gpu_percent", "utilization_memory_percent", "temperature_celsius",
                  "power_draw_milliwatts", "power_limit_milliwatts", "clock_sm_mhz", "clock_memory_mhz",
                  "throttle_reasons", "ecc_enabled", "ecc_errors", "retired_pages", "remapped_rows",
                  "pcie_link", "persistence_mode", "compute_mode", "mig_enabled"]:
            d[k] = failed
        return d
    return {
        "index": i, "state": "ok", "memory_total_bytes": TOTAL,
        "memory_used_bytes": TOTAL - free * GIB, "memory_free_bytes": free * GIB,
        "memory_reserved_bytes": UNSUP, "utilization_gpu_percent": util,
        "utilization_memory_percent": util // 2, "temperature_celsius": 35 + util // 3,
        "power_draw_milliwatts": 90000 + util * 5000, "power_limit_milliwatts": 700000,
        "clock_sm_mhz": 1980, "clock_memory_mhz": 3201, "throttle_reasons": [],
        "ecc_enabled": True,
        "ecc_errors": {"volatile_corrected": 0, "volatile_uncorrected": 2 if state == "ecc" else 0,
                       "aggregate_corrected": 0, "aggregate_uncorrected": 2 if state == "ecc" else 0},
        "retired_pages": UNSUP,
        "remapped_rows": {"correctable": 0, "uncorrectable": 1 if state == "remap" else 0,
                          "pending": state == "remap", "failure": False},
        "pcie_link": {"generation": 5, "width": 16}, "persistence_mode": True,
        "compute_mode": "default", "mig_enabled": False,
    }


def main():
    inv = {
        "driver_version": "580.159.04", "nvml_version": "13.580.159.04", "cuda_driver_version": "13.0",
        "devices": [
            {"index": i, "uuid": uuid(i), "name": "NVIDIA H200", "pci_bus_id": f"00000000:{0x18 + i:02X}:00.0",
             "compute_capability": {"major": 9, "minor": 0}, "memory_total_bytes": TOTAL,
             "temperature_slowdown_celsius": 87, "temperature_shutdown_celsius": 92,
             "pcie_max_link": {"generation": 5, "width": 16}, "serial": UNSUP}
            for i in GPUS
        ],
    }
    lines = [{"type": "header", "schema_version": 1, "tool": "gpu-doctor (testdata/fit/make_recordings.py)",
              "hostname": "h200x8-test", "started_ms": T0, "interval_ms": 1000, "inventory": inv}]
    for t in range(3):
        lines.append({"type": "sample", "timestamp_ms": T0 + t * 1000,
                      "devices": [device(i) for i in GPUS], "processes": []})
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "eight-gpus.ndjson"), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
