//! GD209: the host's RAM, not the GPU's, reported ECC errors.

use super::{Hit, Input, finding_from, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::ObsKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD209",
    name: "host-memory-ecc",
    cause: Some(Cause::Other),
    summary: "The host's RAM (a DIMM), not the GPU's memory, reported ECC errors",
    body: r"## What it does
Finds ECC errors that name a memory module of the host: a BMC's event log (`Uncorrectable
ECC / other uncorrectable memory error @P2-DIMMF1 - Assertion`, from `ipmitool sel list`)
and the kernel's EDAC driver (`EDAC MC0: 1 UE memory read error on ... DIMM#0`).

## Why is this bad?
An uncorrectable error in the host's RAM crashes or freezes the machine, or kills the process
whose page was hit: on a GPU node it looks like a GPU job dying or the node hanging, yet the
GPU is fine. Corrected errors are a warning that the module is failing. Reading it as a GPU
ECC error sends the GPU back for nothing.

## Example
```
Uncorrectable ECC / other uncorrectable memory error @P2-DIMMF1 - Assertion
```

## How to fix
1. Find the module and how often it errs: `ipmitool sel elist`, `ras-mc-ctl --errors` or
   `edac-util -v`.
2. Drain the node and replace (or reseat, then watch) the module it names.
3. Check the GPUs separately: `nvidia-smi -q -d ECC` shows the GPU's own ECC counters.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = observations_where(input, |k| matches!(k, ObsKind::HostEcc { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let uncorrected = hits.iter().any(|o| {
        matches!(
            o.kind,
            ObsKind::HostEcc {
                corrected: false,
                ..
            }
        )
    });
    let module = hits.iter().find_map(|o| match &o.kind {
        ObsKind::HostEcc {
            module: Some(m), ..
        } => Some(format!(" ({m})")),
        _ => None,
    });
    let module = module.unwrap_or_default();
    let (severity, message) = if uncorrected {
        (
            Severity::Error,
            format!(
                "The host's RAM{module} reported an uncorrectable ECC error: a failing memory module of the machine, not the GPU, crashed or froze the job or the node."
            ),
        )
    } else {
        (
            Severity::Warn,
            format!(
                "The host's RAM{module} corrected ECC errors: a memory module of the machine (not the GPU) is failing and may soon crash jobs."
            ),
        )
    };
    let f = finding_from("GD209", Cause::Other, severity, message, 0.7, &hits)
        .with_remedy(
            "See which module errs, and how often",
            Some("sudo ipmitool sel elist | grep -i ecc; sudo ras-mc-ctl --errors".to_owned()),
            None,
        )
        .with_remedy(
            "Drain the node and replace (or reseat) that module",
            Some(
                "scontrol update nodename=$(hostname -s) state=drain reason='host DIMM ECC'"
                    .to_owned(),
            ),
            None,
        )
        .with_remedy(
            "The GPU's own ECC counters, to rule it out",
            Some("nvidia-smi -q -d ECC".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
