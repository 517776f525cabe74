//! GD202: the GPU fell off the bus (Xid 79) or is lost.

use super::xid::XidClass;
use super::{Hit, Input, evidence, xid_observations, xid_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD202",
    name: "gpu-fell-off-bus",
    cause: Some(Cause::HwXid),
    summary: "The GPU fell off the PCIe bus (Xid 79) or is lost",
    body: r"## What it does
Finds Xid 79 (`GPU has fallen off the bus`), the single-line `NVRM: GPU 0000:18:00.0: GPU has
fallen off the bus.`, `GPU is lost` from nvidia-smi/NVML, and Xid 167 (PCIe fatal timeout).

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
        return Vec::new();
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
