//! GD200: a driver, firmware, `NVLink` or hardware Xid in the kernel log.

use super::xid::{XidClass, lookup};
use super::{Hit, Input, evidence, xid_observations, xid_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD200",
    name: "xid-hardware",
    cause: Some(Cause::HwXid),
    summary: "The driver logged an Xid that points at the GPU, its firmware, NVLink or the driver",
    body: r"## What it does
Reads Xid lines from the kernel log in all their forms (`NVRM: Xid (PCI:0000:05:00): 119,
pid=..., ...`, the old `NVRM: Xid (0000:03:00): 14, ...`, journal and `/dev/kmsg` prefixes)
and maps each to NVIDIA's Xid catalog (meaning and first action). This rule reports the Xids
that point at the GPU, its firmware (GSP), NVLink or the driver. Application Xids (13, 31,
43, 45, 68) are GD201; bus loss GD202; memory errors GD203; power GD205.

## Why is this bad?
These Xids mean the GPU or the driver failed, not the job's code. Jobs on that GPU will keep
failing (often as `unknown error`, `unspecified launch failure` or a hang) until the GPU is
reset or the node rebooted; a repeat means hardware service.

## Example
```
NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting
for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).
```

## How to fix
Follow the catalog's first action, shown in the finding: usually drain the GPU, reset it
(`nvidia-smi -r -i N`, as an administrator, with no processes on it) or reboot the node. If
the Xid comes back, collect `nvidia-bug-report.sh` and contact the vendor.
",
};

fn hardware(class: Option<XidClass>) -> bool {
    matches!(
        class,
        None | Some(XidClass::Driver | XidClass::Hw | XidClass::NvLink)
    )
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = xid_observations(input, |class, _| hardware(class));
    let Some(&(first, n)) = hits.first() else {
        return Vec::new();
    };
    let mut xids: Vec<u32> = hits.iter().map(|h| h.1).collect();
    xids.sort_unstable();
    xids.dedup();
    let entry = lookup(n);
    let serious = entry.is_none_or(|e| e.action != "IGNORE");
    let severity = if serious {
        Severity::Error
    } else {
        Severity::Warn
    };
    let others = if xids.len() > 1 {
        format!(
            " (Xids seen: {})",
            xids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        String::new()
    };
    let message = format!(
        "The driver logged {}{others}: a GPU, firmware or driver fault, not the job's code.",
        xid_phrase(first, n)
    );
    let mut f = Finding::new("GD200", Cause::HwXid, severity, message)
        .confidence(0.8)
        .with_evidence(evidence(first));
    if let Some(&(last, _)) = hits.last()
        && last.seq != first.seq
    {
        f = f.with_evidence(evidence(last));
    }
    let action = entry.map_or("follow NVIDIA's workflow for this Xid", |e| e.action_text());
    f = f
        .with_remedy(
            format!("First action from NVIDIA's catalog: {action}"),
            entry.map(|e| format!("# {} ({})", e.mnemonic, e.action)),
            None,
        )
        .with_remedy(
            "Drain the GPU and, with no processes on it, reset it (administrator) or reboot the node",
            Some("sudo nvidia-smi -r -i <gpu>".to_owned()),
            None,
        )
        .with_remedy(
            "If it recurs, collect a bug report for the vendor",
            Some("sudo nvidia-bug-report.sh".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
