//! GD203: uncorrectable memory (ECC) errors.

use super::xid::{XidClass, lookup};
use super::{Hit, Input, evidence, xid_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD203",
    name: "ecc-uncorrectable",
    cause: Some(Cause::HwXid),
    summary: "Uncorrectable GPU memory (ECC) errors: Xid 48/94/95/63/64, CUDA error 214",
    body: r"## What it does
Finds memory-error Xids (48 double-bit ECC, 94 contained, 95 uncontained, 63/64 page
retirement or row remapping, 140, 171/172), kernel lines reporting uncorrectable or
double-bit ECC errors, and CUDA error 214 (`uncorrectable ECC error encountered`).

## Why is this bad?
GPU memory returned corrupted data. The affected process (94) or every process on the GPU
(48, 95) must restart; results computed before the error may be wrong. Pending row remaps take
effect only after a GPU reset. Repeated errors or a remapping failure (64) mean the GPU needs
service.

## Example
```
NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, An uncorrectable double bit error (DBE)
has been detected on GPU in the framebuffer at partition 1, subpartition 0.
```

## How to fix
1. Restart the job (for 95/48: after resetting the GPU or rebooting).
2. Check the counters and pending remaps: `nvidia-smi -q -d ECC,ROW_REMAPPER`.
3. Reset the GPU to apply pending remaps; if remapping failed or errors recur, take the GPU out
   of service.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(|o| match &o.kind {
            ObsKind::Xid { xid, .. } => {
                lookup(*xid).is_some_and(|e| e.class == XidClass::Ecc && e.xid != 92)
            }
            ObsKind::Ecc { corrected } => !corrected,
            ObsKind::CudaError(e) => e.code == Some(214),
            _ => false,
        })
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let what = match &first.kind {
        ObsKind::Xid { xid, .. } => xid_phrase(first, *xid),
        ObsKind::CudaError(_) => "CUDA error 214 (uncorrectable ECC error encountered)".to_owned(),
        _ => "an uncorrectable ECC error".to_owned(),
    };
    let only_retirement = hits
        .iter()
        .all(|o| matches!(&o.kind, ObsKind::Xid { xid: 63, .. }));
    let severity = if only_retirement {
        Severity::Warn
    } else {
        Severity::Error
    };
    let message = if only_retirement {
        format!("The GPU retired or remapped memory ({what}); it takes effect after a GPU reset.")
    } else {
        format!(
            "GPU memory returned corrupted data: {what}; the affected processes must restart and recent results may be wrong."
        )
    };
    let mut f = Finding::new("GD203", Cause::HwXid, severity, message)
        .confidence(0.9)
        .with_evidence(evidence(first));
    if let Some(last) = hits.last()
        && last.seq != first.seq
    {
        f = f.with_evidence(evidence(last));
    }
    f = f
        .with_remedy(
            "Check the ECC counters and pending row remaps",
            Some("nvidia-smi -q -d ECC,ROW_REMAPPER".to_owned()),
            None,
        )
        .with_remedy(
            "With no processes on the GPU, reset it (administrator) or reboot, so pending remaps take effect",
            Some("sudo nvidia-smi -r -i <gpu>".to_owned()),
            None,
        )
        .with_remedy(
            "If remapping failed or errors recur, take the GPU out of service",
            None,
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
