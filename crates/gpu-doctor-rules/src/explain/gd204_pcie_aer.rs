//! GD204: `PCIe` Advanced Error Reporting (AER) errors.

use super::{Hit, Input, evidence, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD204",
    name: "pcie-aer",
    cause: Some(Cause::HwXid),
    summary: "PCIe AER errors in the kernel log (corrected or uncorrected)",
    body: r"## What it does
Finds PCIe Advanced Error Reporting lines in the kernel log: `AER: Corrected error received`,
`AER: Uncorrected (Fatal) error received`, `PCIe Bus Error: severity=Corrected, type=Physical
Layer`.

## Why is this bad?
Uncorrected errors break transfers to the GPU and often precede a GPU falling off the bus
(Xid 79). Streams of corrected errors mean a marginal link (riser, seating, signal integrity)
that slows transfers and may get worse.

## Example
```
pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0
```

## How to fix
1. Identify the device (`lspci -s <bus id>`) and check the link: `nvidia-smi -q -d PCIE`
   (current vs max generation and width).
2. Reseat the card or riser; check for a link running below its width.
3. Uncorrected errors that repeat: service the slot or the GPU.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = observations_where(input, |k| matches!(k, ObsKind::Aer { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let uncorrected: Vec<&&Observation> = hits
        .iter()
        .filter(|o| {
            matches!(
                o.kind,
                ObsKind::Aer {
                    corrected: false,
                    ..
                }
            )
        })
        .collect();
    let (severity, message, ev) = if let Some(u) = uncorrected.first() {
        (
            Severity::Error,
            format!(
                "The kernel logged {} uncorrected PCIe error(s): transfers to a device failed; this often comes before a GPU falls off the bus.",
                uncorrected.len()
            ),
            evidence(u),
        )
    } else {
        (
            Severity::Warn,
            format!(
                "The kernel logged {} corrected PCIe error(s): a marginal link (riser, seating, signal integrity).",
                hits.len()
            ),
            evidence(first),
        )
    };
    let f = Finding::new("GD204", Cause::HwXid, severity, message)
        .confidence(0.7)
        .with_evidence(ev)
        .with_remedy(
            "Check the GPU's PCIe link: current versus maximum generation and width",
            Some("nvidia-smi -q -d PCIE; sudo lspci -vv | grep -E 'LnkSta|LnkCap'".to_owned()),
            None,
        )
        .with_remedy(
            "Reseat the card or riser; service the slot or GPU if uncorrected errors repeat",
            None,
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
