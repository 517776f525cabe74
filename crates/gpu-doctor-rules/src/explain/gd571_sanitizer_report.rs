//! GD571: compute-sanitizer found memory errors.

use super::{Hit, Input, finding_from, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

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
results. Invalid, misaligned and out-of-range accesses are reported with cause
`illegal_access`; races, barrier errors and uninitialized reads alone with cause `other` (a
logic bug in the kernel, no bad address); leaks alone are a warning.

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
    let what_of = |o: &&Observation| match &o.kind {
        ObsKind::SanitizerReport { what } => what.clone(),
        _ => String::new(),
    };
    let leak_only = hits.iter().map(what_of).all(|w| w.starts_with("Leaked"));
    // Races, barrier misuse and reads of unwritten memory are bugs in the kernel's logic; only
    // the other reports are memory accesses the GPU may fault on.
    let no_bad_access = hits.iter().map(what_of).all(|w| {
        [
            "Leaked",
            "Race reported",
            "Potential",
            "Barrier error",
            "Uninitialized",
        ]
        .iter()
        .any(|p| w.starts_with(p))
    });
    let message = format!(
        "compute-sanitizer reported {} problem(s); the first: \"{what}\".",
        hits.len()
    );
    let (cause, severity) = if leak_only {
        (Cause::Other, Severity::Warn)
    } else if no_bad_access {
        (Cause::Other, Severity::Error)
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
