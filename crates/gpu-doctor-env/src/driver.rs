//! The driver probe: the loaded kernel module (`/proc/driver/nvidia/version`), the NVIDIA
//! GPUs on the PCI bus, the user-space `libnvidia-ml` and `libcuda` copies the loader would
//! pick, and the `/dev/nvidia*` nodes with their permissions.

use crate::Probe;
use crate::facts::{DeviceNode, DriverFacts, KernelModule};
use crate::host::{Host, Identity, list_dir, read_text};
use crate::libs::{LdEntry, loader_order};
use std::os::unix::fs::MetadataExt;

/// Reads the driver's side of the machine.
#[derive(Debug, Clone, Default)]
pub struct DriverProbe {
    /// The loader cache, read once by the caller and shared with the CUDA probe.
    pub ldconfig: Vec<LdEntry>,
}

impl Probe for DriverProbe {
    type Facts = DriverFacts;
    const NAME: &'static str = "driver";

    fn probe(&self, host: &Host) -> DriverFacts {
        DriverFacts {
            kernel_module: read_text(&host.path("/proc/driver/nvidia/version"))
                .and_then(|t| parse_kernel_module(&t)),
            pci_gpus: pci_gpus(host),
            nvml_libraries: loader_order(
                host,
                &self.ldconfig,
                &["libnvidia-ml.so.1", "libnvidia-ml.so"],
            ),
            cuda_libraries: loader_order(host, &self.ldconfig, &["libcuda.so.1", "libcuda.so"]),
            device_nodes: device_nodes(host),
        }
    }
}

/// Parses the first line of `/proc/driver/nvidia/version`, in both the proprietary
/// (`NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 ...`) and the open
/// (`NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...`) forms.
pub fn parse_kernel_module(text: &str) -> Option<KernelModule> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    let after = line.split_once("Kernel Module")?.1;
    let version = after
        .split_whitespace()
        .find(|w| looks_like_version(w))?
        .to_owned();
    Some(KernelModule {
        version,
        flavor: if line.contains("Open Kernel Module") {
            "open"
        } else {
            "proprietary"
        }
        .to_owned(),
        line: line.trim().to_owned(),
    })
}

fn looks_like_version(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// NVIDIA (vendor 0x10de) VGA or 3D controllers under `/sys/bus/pci/devices`.
fn pci_gpus(host: &Host) -> Vec<String> {
    let dir = host.path("/sys/bus/pci/devices");
    list_dir(&dir)
        .into_iter()
        .filter(|bus| {
            let read = |f: &str| read_text(&dir.join(bus).join(f)).unwrap_or_default();
            let class = read("class");
            read("vendor").trim() == "0x10de"
                && (class.starts_with("0x0300") || class.starts_with("0x0302"))
        })
        .collect()
}

fn device_nodes(host: &Host) -> Vec<DeviceNode> {
    let dev = host.path("/dev");
    list_dir(&dev)
        .into_iter()
        .filter(|n| n.starts_with("nvidia"))
        .filter_map(|name| {
            let meta = std::fs::metadata(dev.join(&name)).ok()?;
            if meta.is_dir() {
                return None; // `/dev/nvidia-caps`: MIG capabilities, checked by MIG tools.
            }
            let mode = meta.mode() & 0o7777;
            Some(DeviceNode {
                path: format!("/dev/{name}"),
                mode: format!("{mode:04o}"),
                uid: meta.uid(),
                gid: meta.gid(),
                accessible: may_read_write(&host.identity, mode, meta.uid(), meta.gid()),
            })
        })
        .collect()
}

/// The kernel's rule for `open(O_RDWR)`: owner bits if the user owns it, else group bits if
/// one of the user's groups owns it, else the other bits; root may open anything.
pub fn may_read_write(id: &Identity, mode: u32, uid: u32, gid: u32) -> bool {
    if id.uid == 0 {
        return true;
    }
    let bits = if id.uid == uid {
        mode >> 6
    } else if id.gids.contains(&gid) {
        mode >> 3
    } else {
        mode
    };
    bits & 0o6 == 0o6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_open_module_line_from_the_h200() {
        let m = parse_kernel_module(
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n",
        )
        .unwrap();
        assert_eq!(m.version, "580.159.04");
        assert_eq!(m.flavor, "open");
    }

    #[test]
    fn parses_the_proprietary_module_line() {
        let m = parse_kernel_module(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.182.03  Fri Feb 24 03:29:56 UTC 2023\n",
        )
        .unwrap();
        assert_eq!(m.version, "470.182.03");
        assert_eq!(m.flavor, "proprietary");
    }

    #[test]
    fn garbage_is_not_a_module() {
        assert_eq!(parse_kernel_module("hello\n"), None);
        assert_eq!(parse_kernel_module("NVRM version: Kernel Module\n"), None);
    }

    #[test]
    fn permissions_follow_owner_group_other() {
        let user = Identity {
            uid: 1000,
            gids: vec![1000, 44],
        };
        assert!(may_read_write(&user, 0o666, 0, 0));
        assert!(!may_read_write(&user, 0o660, 0, 0));
        assert!(may_read_write(&user, 0o660, 0, 44));
        assert!(!may_read_write(&user, 0o066, 1000, 0), "owner bits win");
        assert!(may_read_write(
            &Identity {
                uid: 0,
                gids: vec![]
            },
            0o600,
            5,
            5
        ));
    }
}
