//! GD206: corrected (single-bit) memory errors.

use super::xid::lookup;
use super::{Hit, Input, evidence};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD206",
    name: "ecc-corrected",
    cause: Some(Cause::HwXid),
    summary: "Corrected (single-bit) ECC errors, or Xid 92 (a high single-bit error rate)",
    body: r"## What it does
Finds kernel lines about corrected (single-bit) ECC errors and Xid 92 (an excessive rate of
them).

## Why is this bad?
Corrected errors did no harm by themselves, but a rising rate often precedes uncorrectable
errors and row remapping on the same memory.

## Example
```
NVRM: Xid (PCI:0000:3b:00): 92, High single-bit ECC error rate
```

## How to fix
Watch the counters (`nvidia-smi -q -d ECC`, `gpu-doctor status`); if they keep rising or
uncorrectable errors appear, plan to take the GPU out of service.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(|o| match &o.kind {
            ObsKind::Ecc { corrected } => *corrected,
            ObsKind::Xid { xid, .. } => *xid == 92 && lookup(92).is_some(),
            _ => false,
        })
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let f = Finding::new(
        "GD206",
        Cause::HwXid,
        Severity::Info,
        format!(
            "The GPU corrected {} memory error report(s); harmless alone, but watch the rate.",
            hits.len()
        ),
    )
    .confidence(0.6)
    .with_evidence(evidence(first))
    .with_remedy(
        "Watch the ECC counters",
        Some("nvidia-smi -q -d ECC".to_owned()),
        None,
    );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
