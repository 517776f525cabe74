//! GD207: the IOMMU blocked devices' DMA: GPU peer-to-peer transfers fault.

use super::{Hit, Input, finding_from, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::ObsKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD207",
    name: "iommu-dma-fault",
    cause: Some(Cause::NcclError),
    summary: "The IOMMU blocked devices' DMA (DMAR / AMD-Vi faults): GPU peer-to-peer transfers fail or hang",
    body: r"## What it does
Finds the kernel's IOMMU fault lines: Intel's `DMAR: [DMA Write] Request device [02:00.0]
fault addr ... PTE Write access is not set` and AMD's `AMD-Vi: Event logged [IO_PAGE_FAULT
...]`.

## Why is this bad?
With the IOMMU translating DMA (or PCI Access Control Services routing peer traffic up to the
root complex), a GPU writing straight into another GPU's memory, or a NIC into a GPU's
(GPUDirect RDMA), is refused. NCCL does not see an error: its peer-to-peer transfers never
complete, so collectives hang until a watchdog timeout, or data is corrupted.

## Example
```
DMAR: [DMA Write] Request device [02:00.0] fault addr cd139000 [fault reason 05] PTE Write access is not set
```

## How to fix
1. Confirm: run once with `NCCL_P2P_DISABLE=1`; if the hang goes, peer-to-peer is the cause.
2. Put the IOMMU in pass-through (`iommu=pt`, or `intel_iommu=off`/`amd_iommu=off`) on the
   kernel command line, and disable PCI ACS on the switches between the GPUs (NCCL's
   troubleshooting guide shows `setpci` for it); reboot.
3. In a VM, peer-to-peer needs the hypervisor's support; otherwise keep `NCCL_P2P_DISABLE=1`.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = observations_where(input, |k| matches!(k, ObsKind::IommuFault { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let mut devices: Vec<&str> = hits
        .iter()
        .filter_map(|o| match &o.kind {
            ObsKind::IommuFault { pci: Some(p) } => Some(p.as_str()),
            _ => None,
        })
        .collect();
    devices.sort_unstable();
    devices.dedup();
    let on = if devices.is_empty() {
        String::new()
    } else {
        format!(" from {}", devices.join(", "))
    };
    let message = format!(
        "The IOMMU blocked DMA{on} ({} fault line(s)): GPU peer-to-peer and GPUDirect transfers are refused, so NCCL collectives hang or fail.",
        hits.len()
    );
    let f = finding_from("GD207", Cause::NcclError, Severity::Warn, message, 0.5, &hits)
        .with_remedy(
            "Confirm that peer-to-peer is the cause: run once without it",
            Some("NCCL_P2P_DISABLE=1 <the job>".to_owned()),
            None,
        )
        .with_remedy(
            "Let GPUs reach each other: IOMMU in pass-through and PCI ACS off, then reboot",
            Some("sudo grubby --update-kernel=ALL --args=iommu=pt   # or edit GRUB_CMDLINE_LINUX".to_owned()),
            Some("NCCL's troubleshooting guide (PCI Access Control Services) shows how to disable ACS with setpci".to_owned()),
        )
        .with_remedy(
            "See which devices faulted",
            Some(format!(
                "lspci -s {}",
                devices.first().copied().unwrap_or("<bus id>")
            )),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
