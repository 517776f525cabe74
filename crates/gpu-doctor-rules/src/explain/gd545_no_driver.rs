//! GD545: no NVIDIA driver, or it is not loaded.

use super::{Hit, Input, env_detail, env_observations, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::{EnvKind, detail};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD545",
    name: "no-driver",
    cause: Some(Cause::EnvNoDriver),
    summary: "No usable NVIDIA driver: not installed, not loaded, or not visible in the container",
    body: r"## What it does
Finds `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`, `Found
no NVIDIA driver on your system`, `no CUDA-capable device is detected` (CUDA 100),
`CUDA driver is a stub library` and the container toolkit's `nvml error: driver not loaded`.
(A `libcuda.so.1` or `libnvidia-ml.so` that cannot be loaded is GD543's: the driver is often
installed and only its libraries are not where the loader looks.)

## Why is this bad?
Without the kernel driver (or, in a container, without the driver mounted in), no GPU work
can run. Common causes: a kernel update without a rebuilt DKMS module, Secure Boot rejecting
the unsigned module, nouveau holding the GPU, a container started without `--gpus`.

## Example
```
NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that
the latest NVIDIA driver is installed and running.
```

## How to fix
1. Check the module: `lsmod | grep nvidia`, `dkms status`, `sudo dmesg | grep -i nvidia`.
2. Rebuild or reinstall the driver for the running kernel; with Secure Boot, sign the module
   (MOK) or disable Secure Boot; blacklist nouveau.
3. In a container: run it with the NVIDIA container toolkit (`docker run --gpus all ...`).
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = env_observations(input, EnvKind::NoDriver);
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let uvm = env_detail(&hits).as_deref() == Some(detail::NVIDIA_UVM);
    let message = if uvm {
        "CUDA could not start (error 999) although the driver is present: most often its unified-memory module (nvidia_uvm) is in a bad state after a suspend, or not loaded."
    } else {
        "No usable NVIDIA driver: it is not installed, not loaded for the running kernel, or not visible inside the container."
    };
    let mut f = finding_from(
        "GD545",
        Cause::EnvNoDriver,
        Severity::Error,
        message,
        if uvm { 0.6 } else { 0.85 },
        &hits,
    );
    if uvm {
        f = f.with_remedy(
            "Reload the unified-memory module (or reboot)",
            Some("sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm".to_owned()),
            Some("also check that CUDA_VISIBLE_DEVICES is set before the program starts, not changed inside it".to_owned()),
        );
    }
    f = f
        .with_remedy(
            "Check whether the kernel module is loaded and built for this kernel",
            Some("lsmod | grep nvidia; dkms status; sudo dmesg | grep -i -E 'nvidia|nouveau' | tail".to_owned()),
            None,
        )
        .with_remedy(
            "Reinstall or rebuild the driver for the running kernel, then reboot (sign it if Secure Boot is on)",
            Some("sudo apt install --reinstall nvidia-dkms-580 && sudo reboot".to_owned()),
            Some("`mokutil --sb-state` shows whether Secure Boot is on".to_owned()),
        )
        .with_remedy(
            "In a container, give it the GPUs",
            Some("docker run --gpus all ...".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
