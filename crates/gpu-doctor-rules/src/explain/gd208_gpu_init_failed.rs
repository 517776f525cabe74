//! GD208: the driver could not bring a GPU up (`RmInitAdapter failed`).

use super::{Hit, Input, at_pci, finding_from, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD208",
    name: "gpu-init-failed",
    cause: Some(Cause::HwXid),
    summary: "The driver could not initialize a GPU (RmInitAdapter failed, GSP firmware did not start, no PCI memory window or one held by another driver)",
    body: r"## What it does
Finds `NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x..)` and `rm_init_adapter failed`, and
tells apart the GSP firmware failing to start (`Cannot initialize GSP firmware RM`,
`kgspInitRm_IMPL: ... cannot initialize GSP-RM`) and a GPU whose PCI memory window was never
assigned (`This PCI I/O region assigned to your NVIDIA device is invalid: BAR0 is 0M @ 0x0`), and
one held by another driver (`vfio-pci 0000:b3:00.0: BAR 1: can't reserve [mem ...]`, cause
`other`: the firmware's framebuffer keeps it).

## Why is this bad?
The kernel module is loaded but the GPU is not usable: nvidia-smi does not list it and CUDA
finds no device. Without a GSP message, the usual reasons are the GPU itself (failing,
underpowered, badly seated) or a driver too old for it (cause `hw_xid`, with less confidence).
When the GSP firmware does not start, the driver and firmware are at fault, not the card
(cause `other`): the open kernel module requires GSP, the proprietary one can run without it.

## Example
```
NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM
NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x56:1689)
```

## How to fix
1. For GSP failures: update the driver; try the proprietary kernel module instead of the open
   one, or (proprietary module only) turn GSP off with `NVreg_EnableGpuFirmware=0`.
2. Otherwise: check the card's power cables and seating, `lspci` for the GPU, and whether the
   driver supports this GPU; `dmesg | grep -i -E 'NVRM|Xid'` for what came before.
",
};

/// Whether an observation is of one kind.
type IsKind = fn(&ObsKind) -> bool;
/// Builds the finding for the observations of one kind.
type BuildFinding = fn(&[&Observation]) -> Finding;

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    // A PCI window never assigned, or held by another driver, explains the failed probe that
    // follows it.
    let windows: [(IsKind, BuildFinding); 2] = [
        (
            |k| matches!(k, ObsKind::PciBarUnassigned { .. }),
            bar_unassigned,
        ),
        (|k| matches!(k, ObsKind::PciBarBusy { .. }), bar_busy),
    ];
    for (is_kind, finding) in windows {
        let seen = observations_where(input, is_kind);
        if let Some(first) = seen.first() {
            return vec![Hit {
                finding: finding(&seen),
                seq: first.seq,
            }];
        }
    }
    let hits = observations_where(input, |k| matches!(k, ObsKind::GpuInitFailed { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let gsp = hits
        .iter()
        .any(|o| matches!(o.kind, ObsKind::GpuInitFailed { gsp: true, .. }));
    let at = at_pci(&hits);
    let f = if gsp {
        gsp_failed(&hits, &at)
    } else {
        init_failed(&hits, &at)
    };
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

fn gsp_failed(hits: &[&Observation], at: &str) -> Finding {
    if hits.iter().any(|o| {
        matches!(
            o.kind,
            ObsKind::GpuInitFailed {
                firmware_missing: true,
                ..
            }
        )
    }) {
        return firmware_missing(hits, at);
    }
    finding_from(
        "GD208",
        Cause::Other,
        Severity::Error,
        format!("The GPU's GSP firmware could not start{at}, so the driver could not bring the GPU up: a driver or firmware problem, not the job's or (most likely) the card's."),
        0.6,
        hits,
    )
    .with_remedy(
        "Update the driver, or switch between the open and the proprietary kernel module",
        Some("cat /proc/driver/nvidia/version; modinfo nvidia | grep -i license".to_owned()),
        Some("the open module needs GSP; the proprietary one can run without it".to_owned()),
    )
    .with_remedy(
        "With the proprietary module, turn GSP off and reboot",
        Some("echo 'options nvidia NVreg_EnableGpuFirmware=0' | sudo tee /etc/modprobe.d/nvidia-gsp.conf && sudo update-initramfs -u".to_owned()),
        None,
    )
}

/// The GSP firmware file of the loaded module's version is not on disk: a driver whose files
/// were updated while the old module stayed loaded, or an incomplete install.
fn firmware_missing(hits: &[&Observation], at: &str) -> Finding {
    finding_from(
        "GD208",
        Cause::Other,
        Severity::Error,
        format!("The driver could not bring the GPU up{at}: the GSP firmware file for the loaded kernel module's version is not installed. The driver's files and its loaded module are of different versions (an update without a reboot or without rebuilding the module), or the install is incomplete; the GPU is not at fault."),
        0.7,
        hits,
    )
    .with_remedy(
        "Compare the loaded module's version with the installed firmware",
        Some("cat /proc/driver/nvidia/version; ls /lib/firmware/nvidia/".to_owned()),
        None,
    )
    .with_remedy(
        "Reboot into the module that matches the installed driver, or reinstall the driver (with its firmware package) for the running kernel",
        Some("sudo reboot   # after an update; or reinstall the driver packages, then reboot".to_owned()),
        None,
    )
}

fn init_failed(hits: &[&Observation], at: &str) -> Finding {
    finding_from(
        "GD208",
        Cause::HwXid,
        Severity::Error,
        format!("The driver could not initialize the GPU{at} (RmInitAdapter failed): a GPU that is failing, underpowered or badly seated, or a driver too old for it."),
        0.5,
        hits,
    )
    .with_remedy(
        "See what the kernel logged before it, and whether the GPU is on the bus",
        Some("sudo dmesg -T | grep -i -E 'NVRM|Xid' | head -50; lspci -nn | grep -i nvidia".to_owned()),
        None,
    )
    .with_remedy(
        "Check the card's power cables and seating; try it in another slot or machine",
        None,
        Some("a driver older than the GPU also fails here: compare with NVIDIA's supported-GPU list".to_owned()),
    )
}

/// The firmware or kernel left the GPU's BAR unassigned (large-BAR GPUs behind a BIOS without
/// "Above 4G decoding", eGPUs, hot-plug): the driver cannot probe it. Not a GPU fault.
fn bar_unassigned(hits: &[&Observation]) -> Finding {
    let at = at_pci(hits);
    finding_from(
        "GD208",
        Cause::Other,
        Severity::Error,
        format!(
            "The GPU{at} was given no PCI memory window (BAR0 is 0M): the BIOS or the kernel did not assign its address range, so the driver cannot probe it. The GPU and the driver are not at fault."
        ),
        0.85,
        hits,
    )
    .with_remedy(
        "Let the kernel reassign PCI resources at boot",
        Some("add pci=realloc=on (or pci=realloc) to the kernel command line, then reboot".to_owned()),
        None,
    )
    .with_remedy(
        "In the BIOS, enable \"Above 4G decoding\" (and Resizable BAR where offered)",
        None,
        Some("eGPUs and large-memory GPUs need address space above 4 GiB".to_owned()),
    )
    .with_remedy(
        "Check what the GPU was given",
        Some("sudo lspci -vv -s <bus id> | grep -i region".to_owned()),
        None,
    )
}

/// The GPU's memory window is held by another driver: on the GPU the machine booted with, the
/// firmware's framebuffer (efifb, simplefb, vesafb) keeps it, which blocks passing the GPU to a
/// VM (vfio-pci) and the NVIDIA driver alike.
fn bar_busy(hits: &[&Observation]) -> Finding {
    let at = at_pci(hits);
    finding_from(
        "GD208",
        Cause::Other,
        Severity::Error,
        format!(
            "The kernel could not reserve the GPU's PCI memory window{at} for its driver: another driver holds it, most often the firmware's framebuffer (efifb/simplefb) on the GPU the machine booted with. The GPU is not at fault."
        ),
        0.75,
        hits,
    )
    .with_remedy(
        "See who holds the memory range",
        Some("sudo grep -i -B1 -A3 '<bus id>' /proc/iomem".to_owned()),
        Some("a BOOTFB, efifb or simplefb entry inside the GPU's range is the firmware framebuffer".to_owned()),
    )
    .with_remedy(
        "Keep the firmware framebuffer off that GPU",
        Some("add video=efifb:off (kernels 5.15+: initcall_blacklist=sysfb_init) to the kernel command line, then reboot".to_owned()),
        Some("or boot from another GPU; unbinding efi-framebuffer at runtime works until the next boot".to_owned()),
    )
}
