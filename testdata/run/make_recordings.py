#!/usr/bin/env python3
"""Writes the GPU recordings the `run` tests replay (`--source replay:FILE`).

Run from the repository root: `python3 testdata/run/make_recordings.py`. The output is
committed; this script says how it was made. Two H200s (141 GB), as on the validation host.

- two-gpus-other-process.ndjson: GPU 0 has 130 GiB held by another process, GPU 1 is empty.
- one-gpu-busy-then-free.ndjson: one GPU, 130 GiB held for the first 300 samples (6 s at 20 ms), then freed.
- two-gpus-xid79.ndjson: two empty GPUs; an Xid 79 (fallen off the bus) on GPU 0.
"""

import json
import os

GIB = 1 << 30
TOTAL = 150_754_820_096  # an H200's memory.total as NVML reports it
UNSUP = {"absent": "unsupported"}


def info(i):
    return {
        "index": i,
        "uuid": "GPU-0000000%d-6aa9-50d2-ec35-e6628d3ffd99" % i,
        "name": "NVIDIA H200",
        "pci_bus_id": "00000000:%02X:00.0" % (6 + i),
        "compute_capability": {"major": 9, "minor": 0},
        "memory_total_bytes": TOTAL,
        "temperature_slowdown_celsius": 87,
        "temperature_shutdown_celsius": 92,
        "pcie_max_link": {"generation": 5, "width": 16},
        "serial": UNSUP,
    }


def device(i, used):
    return {
        "index": i,
        "state": "ok",
        "memory_total_bytes": TOTAL,
        "memory_used_bytes": used,
        "memory_free_bytes": TOTAL - used,
        "memory_reserved_bytes": UNSUP,
        "utilization_gpu_percent": 0,
        "utilization_memory_percent": 0,
        "temperature_celsius": 30,
        "power_draw_milliwatts": 75000,
        "power_limit_milliwatts": 700000,
        "clock_sm_mhz": 345,
        "clock_memory_mhz": 3201,
        "throttle_reasons": [],
        "ecc_enabled": True,
        "ecc_errors": {
            "volatile_corrected": 0,
            "volatile_uncorrected": 0,
            "aggregate_corrected": 0,
            "aggregate_uncorrected": 0,
        },
        "retired_pages": UNSUP,
        "remapped_rows": {
            "correctable": 0,
            "uncorrectable": 0,
            "pending": False,
            "failure": False,
        },
        "pcie_link": {"generation": 5, "width": 16},
        "persistence_mode": True,
        "compute_mode": "default",
        "mig_enabled": False,
    }


def process(gpu, pid, used):
    return {
        "gpu": gpu,
        "pid": pid,
        "used_memory_bytes": used,
        "type": "compute",
        "user": "someone",
        "command": "python other_job.py",
        "container": None,
    }


def header(n):
    return {
        "type": "header",
        "schema_version": 1,
        "tool": "gpu-doctor (testdata/run/make_recordings.py)",
        "hostname": "h200-test",
        "started_ms": 1_795_982_400_000,
        "interval_ms": 20,
        "inventory": {
            "driver_version": "580.159.04",
            "nvml_version": "13.580.159.04",
            "cuda_driver_version": "13.0",
            "devices": [info(i) for i in range(n)],
        },
    }


def sample(t, used_by_gpu, processes=()):
    return {
        "type": "sample",
        "timestamp_ms": 1_795_982_400_000 + t * 20,
        "devices": [device(i, u) for i, u in enumerate(used_by_gpu)],
        "processes": list(processes),
    }


def write(name, lines):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


busy = 130 * GIB
idle = 600 << 20  # the driver's own share on an idle H200

write(
    "two-gpus-other-process.ndjson",
    [header(2)]
    + [sample(t, [busy, idle], [process(0, 4242, busy - idle)]) for t in range(2)],
)
write(
    "one-gpu-busy-then-free.ndjson",
    [header(1)]
    + [sample(t, [busy], [process(0, 4242, busy - idle)]) for t in range(300)]
    + [sample(300 + t, [idle]) for t in range(3)],
)
write(
    "two-gpus-xid79.ndjson",
    [header(2), sample(0, [idle, idle])]
    + [
        {
            "type": "event",
            "timestamp_ms": 1_795_982_400_010,
            "gpu": 0,
            "event": "xid",
            "xid": 79,
            "detail": "GPU has fallen off the bus.",
        }
    ]
    + [sample(1, [idle, idle])],
)
