//! GD201: an application Xid (13, 31, 43, 45, 68): the job's kernel faulted.

use super::xid::XidClass;
use super::{Hit, Input, evidence, xid_observations, xid_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD201",
    name: "xid-application",
    cause: Some(Cause::IllegalAccess),
    summary: "The driver logged an application Xid (13, 31, 43, 45, 68): the job's kernel faulted",
    body: r"## What it does
Finds the Xids NVIDIA counts as application errors: 13 (graphics engine exception), 31 (GPU
memory page fault), 43 (channel reset), 45 (preemptive cleanup) and 68 (video decoder).

## Why is this bad?
The GPU is healthy; a kernel of some process faulted. Xid 13 and 31 are the kernel-log side
of an illegal memory access (CUDA error 700): the job crashed and must be restarted, and the
bug is in its code or a library. Xid 43 and 45 follow a process being stopped and are usually
harmless on their own.

## Example
```
NVRM: Xid (PCI:0000:3b:00): 31, pid=12345, name=python, Ch 00000008, intr 10000000.
MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34560000. Fault is of type
FAULT_PDE ACCESS_TYPE_VIRT_READ
```

## How to fix
Treat it like an illegal memory access: rerun with `CUDA_LAUNCH_BLOCKING=1` and under
`compute-sanitizer` (`gpu-doctor sanitize -- ...`). If the same Xid appears with different
programs on one GPU only, suspect the GPU.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = xid_observations(input, |class, _| class == Some(XidClass::App));
    let Some(&(first, n)) = hits.first() else {
        return Vec::new();
    };
    let fault = matches!(n, 13 | 31);
    let (cause, severity) = if fault {
        (Cause::IllegalAccess, Severity::Error)
    } else {
        (Cause::Other, Severity::Warn)
    };
    let message = if fault {
        format!(
            "The driver logged {}: a kernel of the job touched memory it does not own (the kernel-log side of CUDA error 700); the GPU itself is fine.",
            xid_phrase(first, n)
        )
    } else {
        format!(
            "The driver logged {}: an application's GPU work was stopped; usually a consequence of the process ending, not a GPU fault.",
            xid_phrase(first, n)
        )
    };
    let mut f = Finding::new("GD201", cause, severity, message)
        .confidence(0.7)
        .with_evidence(evidence(first));
    if fault {
        f = f
            .with_remedy(
                "Rerun with synchronous launches to find the faulting kernel",
                Some("CUDA_LAUNCH_BLOCKING=1 python train.py".to_owned()),
                None,
            )
            .with_remedy(
                "Run it under compute-sanitizer",
                Some("compute-sanitizer --tool memcheck python train.py".to_owned()),
                None,
            );
    } else {
        f = f.with_remedy(
            "Look for the error that stopped the process (in its output); this Xid follows it",
            None,
            None,
        );
    }
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
