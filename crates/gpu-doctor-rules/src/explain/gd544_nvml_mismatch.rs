//! GD544: the loaded kernel module and the user-space driver libraries differ.

use super::{Hit, Input, env_observations, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::EnvKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD544",
    name: "driver-library-mismatch",
    cause: Some(Cause::EnvNvmlMismatch),
    summary: "Driver/library version mismatch: the kernel module and the driver libraries differ",
    body: r"## What it does
Finds `Failed to initialize NVML: Driver/library version mismatch` (nvidia-smi, NVML, the
container toolkit's `nvml error: driver/library version mismatch`) and the kernel log's
`NVRM: API mismatch: the client has the version X, but this kernel module has the version Y`.

## Why is this bad?
The driver's user-space libraries were upgraded (often by unattended-upgrades) while the old
kernel module is still loaded. Until they match, nvidia-smi, NVML and CUDA fail on the node.

## Example
```
$ nvidia-smi
Failed to initialize NVML: Driver/library version mismatch
```

## How to fix
1. Reboot the node (the usual fix), or, with no GPU processes running, reload the modules:
   `sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`.
2. Compare `cat /proc/driver/nvidia/version` with the installed packages to confirm.
3. Keep it from recurring: hold the driver packages (`sudo apt-mark hold 'nvidia-*'`) or
   exclude them from unattended upgrades.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = env_observations(input, EnvKind::NvmlMismatch);
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let mut f = finding_from(
        "GD544",
        Cause::EnvNvmlMismatch,
        Severity::Error,
        "The loaded NVIDIA kernel module and the user-space driver libraries are different versions (usually an upgrade without a reboot): NVML and CUDA fail until they match.",
        0.95,
        &hits,
    );
    f = f
        .with_remedy("Reboot the node", Some("sudo reboot".to_owned()), None)
        .with_remedy(
            "Or, with no GPU processes running, reload the kernel modules",
            Some(
                "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"
                    .to_owned(),
            ),
            None,
        )
        .with_remedy(
            "Confirm, and keep unattended upgrades from doing it again",
            Some(
                "cat /proc/driver/nvidia/version; sudo apt-mark hold 'nvidia-*' 'libnvidia-*'"
                    .to_owned(),
            ),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
