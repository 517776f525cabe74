//! GD202: the GPU fell off the bus (Xid 79), is lost, or needs a reset before any more work.

use super::xid::XidClass;
use super::{
    Hit, Input, at_pci, evidence, finding_from, observations_where, xid_observations, xid_phrase,
};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::ObsKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD202",
    name: "gpu-fell-off-bus",
    cause: Some(Cause::HwXid),
    summary: "The GPU fell off the PCIe bus (Xid 79), is lost, or needs a reset",
    body: r"## What it does
Finds Xid 79 (`GPU has fallen off the bus`), the single-line `NVRM: GPU 0000:18:00.0: GPU has
fallen off the bus.`, `GPU is lost` from nvidia-smi/NVML, Xid 167 (PCIe fatal timeout), and the
driver's `Reset required [NV_ERR_RESET_REQUIRED]` for a GPU that takes no more work until it
is reset.

## Why is this bad?
The GPU stopped answering on PCIe. Every process on it has failed and none can use it until
the node is rebooted. Causes are physical: power delivery, overheating, a loose card or riser,
a failing GPU.

## Example
```
NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
```

## How to fix
1. Drain the node and reboot it.
2. If it happens again: check power cables and PSU headroom, temperatures, reseat the card or
   riser, update the VBIOS/driver; a repeat on the same GPU means hardware service.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = xid_observations(input, |class, _| class == Some(XidClass::Bus));
    let Some(&(first, n)) = hits.first() else {
        return reset_required(input);
    };
    let message = format!(
        "The GPU stopped answering on the PCIe bus ({}): every process on it failed, and it needs a node reboot.",
        xid_phrase(first, n)
    );
    let f = Finding::new("GD202", Cause::HwXid, Severity::Error, message)
        .confidence(0.95)
        .with_evidence(evidence(first))
        .with_remedy("Drain the node and reboot it", Some("sudo reboot".to_owned()), None)
        .with_remedy(
            "If it recurs: check power cables and PSU headroom, temperatures, and reseat the card or riser",
            Some("nvidia-smi -q -d TEMPERATURE,POWER".to_owned()),
            None,
        )
        .with_remedy(
            "A repeat on the same GPU needs hardware service: collect a bug report",
            Some("sudo nvidia-bug-report.sh".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// The driver's `NV_ERR_RESET_REQUIRED`: the GPU is up but refuses work until it is reset.
fn reset_required(input: &Input<'_>) -> Vec<Hit> {
    let hits = observations_where(input, |k| matches!(k, ObsKind::GpuResetRequired { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let at = at_pci(&hits[..1]);
    let f = finding_from(
        "GD202",
        Cause::HwXid,
        Severity::Error,
        format!(
            "The driver reports that the GPU{at} needs a reset (NV_ERR_RESET_REQUIRED): after an uncontained error it takes no work until it is reset, so every CUDA call on it fails (\"busy or unavailable\")."
        ),
        0.85,
        &hits,
    )
    .with_remedy(
        "Drain the GPU and, with no processes on it, reset it (administrator), or reboot the node",
        Some("sudo nvidia-smi -r -i <gpu>".to_owned()),
        None,
    )
    .with_remedy(
        "Find the error that came before it in the kernel log; if it recurs on the same GPU, it needs hardware service",
        Some("sudo dmesg -T | grep -E 'NVRM|Xid'; sudo nvidia-bug-report.sh".to_owned()),
        None,
    );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
