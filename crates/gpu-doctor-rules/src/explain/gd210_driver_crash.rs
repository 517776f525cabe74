//! GD210: the kernel crashed or locked up inside an NVIDIA kernel module.

use super::{Hit, Input, finding_from, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::ObsKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD210",
    name: "driver-crash",
    cause: Some(Cause::Other),
    summary: "The kernel crashed or locked up inside NVIDIA's driver module (an oops whose RIP is in nvidia*)",
    body: r"## What it does
Finds a kernel oops, BUG or soft lockup whose faulting instruction is in one of NVIDIA's
modules: the register dump's `RIP: 0010:_raw_q_schedule+0x2f/0xb0 [nvidia_uvm]`. Frames of a
call trace alone do not count: they only say the module was on the stack.

## Why is this bad?
The driver itself failed: a bug in the module (often around suspend and resume, or a driver
and kernel combination that does not work together), not the job's code or the GPU's
hardware. The module is now in an undefined state; every GPU process on the machine can hang
or fail until the machine is rebooted.

## Example
```
BUG: kernel NULL pointer dereference, address: 0000000000000000
RIP: 0010:_raw_q_schedule+0x2f/0xb0 [nvidia_uvm]
```

## How to fix
1. Reboot the machine; the module cannot be trusted after an oops.
2. Update the driver (or move to a branch known to work with this kernel); search NVIDIA's
   forums and the driver's release notes for the function in the RIP line.
3. If it follows suspend or resume, check the driver's power-management services
   (`nvidia-suspend`, `nvidia-resume`, `nvidia-hibernate`) and its `NVreg_PreserveVideoMemoryAllocations`
   setting, or keep GPU machines from suspending.
4. Report it with `sudo nvidia-bug-report.sh`.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = observations_where(input, |k| matches!(k, ObsKind::DriverCrash { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let ObsKind::DriverCrash { module } = &first.kind else {
        return Vec::new();
    };
    let message = format!(
        "The kernel crashed inside NVIDIA's driver module {module}: a driver bug, not the job's code or the GPU's hardware; the module is in an undefined state until the machine reboots."
    );
    let f = finding_from("GD210", Cause::Other, Severity::Error, message, 0.8, &hits)
        .with_remedy(
            "Reboot the machine: the module cannot be trusted after an oops",
            Some("sudo reboot".to_owned()),
            None,
        )
        .with_remedy(
            "Update the driver, or move to a branch known to work with this kernel",
            Some("nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r".to_owned()),
            Some("search the driver's release notes for the function named in the RIP line".to_owned()),
        )
        .with_remedy(
            "If it came with suspend or resume, check the driver's power-management services",
            Some("systemctl status nvidia-suspend nvidia-resume nvidia-hibernate; cat /proc/driver/nvidia/params | grep PreserveVideoMemory".to_owned()),
            None,
        )
        .with_remedy(
            "Report it to NVIDIA with the driver's bug report",
            Some("sudo nvidia-bug-report.sh".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
