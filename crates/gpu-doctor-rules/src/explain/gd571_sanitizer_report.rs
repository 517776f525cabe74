//! GD571: compute-sanitizer found memory errors.

use super::{Hit, Input, finding_from, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::ObsKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD571",
    name: "sanitizer-report",
    cause: Some(Cause::IllegalAccess),
    summary: "compute-sanitizer reported invalid memory accesses or races in the output",
    body: r"## What it does
Finds compute-sanitizer report headers in the output (`========= Invalid __global__ read of
size 4 bytes`, `Race reported`, `Uninitialized __global__ memory read`, leaks).

## Why is this bad?
Each report is a real bug in a kernel: an out-of-bounds or misaligned access, a race, or a
read of memory never written. Such bugs cause illegal-address crashes or silently wrong
results.

## Example
```
========= Invalid __global__ write of size 4 bytes
=========     at 0x70 in kernel(float*)
=========     by thread (10,0,0) in block (0,0,0)
```

## How to fix
Read the first report: it names the kernel, the thread and the address. Fix the index or
bounds check in that kernel, then rerun under the sanitizer until it is clean
(`gpu-doctor sanitize -- python train.py` condenses the reports).
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = observations_where(input, |k| matches!(k, ObsKind::SanitizerReport { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let ObsKind::SanitizerReport { what } = &first.kind else {
        return Vec::new();
    };
    let leak_only = hits.iter().all(
        |o| matches!(&o.kind, ObsKind::SanitizerReport { what } if what.starts_with("Leaked")),
    );
    let message = format!(
        "compute-sanitizer reported {} problem(s); the first: \"{what}\".",
        hits.len()
    );
    let (cause, severity) = if leak_only {
        (Cause::Other, Severity::Warn)
    } else {
        (Cause::IllegalAccess, Severity::Error)
    };
    let mut f = finding_from("GD571", cause, severity, message, 0.9, &hits);
    f = f.with_remedy(
        "Read the first report's kernel, thread and address, fix that access, and rerun under the sanitizer",
        Some("gpu-doctor sanitize -- python train.py".to_owned()),
        None,
    );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
