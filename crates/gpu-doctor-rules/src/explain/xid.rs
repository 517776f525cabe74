//! NVIDIA's Xid catalog as data (`data/xid.tsv`, with its sources in the file header):
//! what an Xid means, what to do first, and whether the application or the hardware is to
//! blame.

use std::sync::LazyLock;

/// Who or what an Xid points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XidClass {
    /// The application faulted (illegal access, ...); the GPU is fine.
    App,
    /// A memory (ECC) error.
    Ecc,
    /// The GPU left the `PCIe` bus.
    Bus,
    /// Power or thermal.
    Power,
    /// Driver or firmware.
    Driver,
    NvLink,
    /// Other hardware.
    Hw,
    /// Informational.
    Info,
}

/// One catalog row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XidEntry {
    pub xid: u32,
    pub mnemonic: String,
    pub description: String,
    /// NVIDIA's immediate resolution bucket (`RESTART_APP`, `RESET_GPU`, `RESTART_BM`, ...).
    pub action: String,
    pub class: XidClass,
}

impl XidEntry {
    /// What the immediate bucket asks for, in words.
    pub fn action_text(&self) -> &'static str {
        match self.action.as_str() {
            "IGNORE" => "no action needed for this Xid itself",
            "RESTART_APP" => "restart the application; if it recurs, debug the application",
            "RESET_GPU" => "stop the GPU's processes, then reset the GPU or reboot the node",
            "RESTART_BM" => {
                "reboot the node; if it recurs, inspect PCIe seating, power and cooling"
            }
            "RESTART_VM" => "restart the VM",
            "CHECK_MECHANICALS" => "check the board's power cables and seating",
            "CHECK_UVM" => "check the nvidia-uvm module and the application's managed memory",
            "CONTACT_SUPPORT" => {
                "collect `nvidia-bug-report.sh` and contact NVIDIA support or the node's vendor"
            }
            _ => "follow NVIDIA's workflow for this Xid",
        }
    }
}

static CATALOG: LazyLock<Vec<XidEntry>> =
    LazyLock::new(|| parse(include_str!("../../data/xid.tsv")));

/// Parses the catalog; malformed rows are skipped (a test checks there are none).
pub fn parse(text: &str) -> Vec<XidEntry> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut f = l.split('\t');
            let xid = f.next()?.trim().parse().ok()?;
            let mnemonic = f.next()?.trim().to_owned();
            let description = f.next()?.trim().to_owned();
            let action = f.next()?.trim().to_owned();
            let class = match f.next()?.trim() {
                "app" => XidClass::App,
                "ecc" => XidClass::Ecc,
                "bus" => XidClass::Bus,
                "power" => XidClass::Power,
                "driver" => XidClass::Driver,
                "nvlink" => XidClass::NvLink,
                "hw" => XidClass::Hw,
                "info" => XidClass::Info,
                _ => return None,
            };
            Some(XidEntry {
                xid,
                mnemonic,
                description,
                action,
                class,
            })
        })
        .collect()
}

/// The catalog entry for an Xid.
pub fn lookup(xid: u32) -> Option<&'static XidEntry> {
    CATALOG.iter().find(|e| e.xid == xid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_parses() {
        let text = include_str!("../../data/xid.tsv");
        let rows = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .count();
        assert_eq!(parse(text).len(), rows);
        assert_eq!(lookup(79).map(|e| e.class), Some(XidClass::Bus));
        assert_eq!(lookup(13).map(|e| e.class), Some(XidClass::App));
        assert!(lookup(1000).is_none());
    }
}
