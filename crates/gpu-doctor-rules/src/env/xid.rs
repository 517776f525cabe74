//! `kernel.xid`: recent Xid errors in the kernel log (GD253), one finding per Xid number,
//! on the GPU whose PCI address the line names.

use super::checks::Checklist;
use crate::explain::xid::XidClass;
use gpu_doctor_env::{EnvFacts, ProbeStatus, XidLine};
use gpu_doctor_model::{Cause, Evidence, Finding, GpuIndex, Severity};
use std::collections::BTreeMap;

/// Matches an Xid's `0000:05:00` with NVML's `00000000:05:00.0`: by bus and device.
fn same_pci(xid_pci: &str, nvml_bus_id: &str) -> bool {
    let tail = |s: &str| -> String {
        let s = s.split('.').next().unwrap_or(s).to_ascii_lowercase();
        let parts: Vec<&str> = s.rsplit(':').take(2).collect();
        parts.into_iter().rev().collect::<Vec<_>>().join(":")
    };
    tail(xid_pci) == tail(nvml_bus_id)
}

pub fn check(facts: &EnvFacts, list: &mut Checklist) {
    const ID: &str = "kernel.xid";
    let log = &facts.kernel_log;
    if let ProbeStatus::Unavailable { reason } = &log.status {
        list.skip(ID, format!("kernel log not readable: {reason}"));
        return;
    }
    let source = log.source.clone().unwrap_or_else(|| "kernel log".into());
    if log.xids.is_empty() {
        list.pass(ID, format!("no Xid in the kernel log ({source})"));
        return;
    }
    let mut by_xid: BTreeMap<u32, Vec<&XidLine>> = BTreeMap::new();
    for x in &log.xids {
        by_xid.entry(x.xid).or_default().push(x);
    }
    let devices = facts
        .gpus
        .inventory
        .as_ref()
        .map(|i| i.devices.as_slice())
        .unwrap_or_default();
    let mut findings: Vec<Finding> = Vec::new();
    for (xid, lines) in &by_xid {
        // NVIDIA's catalog, as the explain rules read it: one source of Xid meanings.
        let entry = crate::explain::xid::lookup(*xid);
        let app = entry.is_some_and(|e| e.class == XidClass::App);
        let newest = lines[lines.len() - 1];
        let what = entry.map_or_else(String::new, |e| format!(" ({})", e.description));
        let mut f = Finding::new(
            "GD253",
            Cause::HwXid,
            if app { Severity::Warn } else { Severity::Error },
            format!(
                "Xid {xid}{what} on PCI {} — {} time(s) in the kernel log",
                newest.pci,
                lines.len()
            ),
        );
        if let Some(d) = devices.iter().find(|d| {
            d.pci_bus_id
                .value()
                .is_some_and(|b| same_pci(&newest.pci, b))
        }) {
            f = f.on_gpu(GpuIndex(d.index.0));
        }
        for l in lines.iter().rev().take(3).rev() {
            f = f.with_evidence(Evidence {
                source: source.clone(),
                line: Some(l.line),
                text: l.text.clone(),
                ..Evidence::default()
            });
        }
        f = if app {
            f.with_remedy(
                "An application error: the GPU is fine. Find the failing job's bug",
                Some("gpu-doctor explain job.log".into()),
                Some(format!(
                    "`gpu-doctor rule GD253`; Xid {xid} in NVIDIA's catalog"
                )),
            )
        } else {
            f.with_remedy(
                "Drain the node, stop GPU processes and reset the GPU (reboot if the reset fails); if it recurs, file an nvidia-bug-report for RMA",
                Some("sudo nvidia-smi -r -i <gpu>".into()),
                Some(entry.map_or_else(
                    || format!("Xid {xid} is not in the catalog: see https://docs.nvidia.com/deploy/xid-errors/"),
                    |e| format!("catalog ({}): {}", e.mnemonic, e.action_text()),
                )),
            )
        };
        findings.push(f);
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let mut first = true;
    for f in findings {
        // One check line for the worst Xid, the rest under their own ids.
        let id = if first {
            ID.to_owned()
        } else {
            format!(
                "{ID}.{}",
                f.message.split_whitespace().nth(1).unwrap_or("?")
            )
        };
        first = false;
        list.problem(id, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses_match_across_formats() {
        assert!(same_pci("0000:05:00", "00000000:05:00.0"));
        assert!(same_pci("PCI:0000:9B:00", "00000000:9b:00.0"));
        assert!(!same_pci("0000:05:00", "00000000:06:00.0"));
    }
}
