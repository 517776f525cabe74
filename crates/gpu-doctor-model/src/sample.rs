//! What a GPU source yields: the [`Inventory`] (what does not change while a job runs), a
//! [`Sample`] (one reading of every device and process) and [`GpuEvent`]s (Xid, ECC, a GPU
//! falling off the bus).
//!
//! Units are in the field names (`_bytes`, `_milliwatts`, `_celsius`, `_mhz`, `_percent`).

use crate::{GpuIndex, GpuUuid, Pid, Reading};
use serde::{Deserialize, Serialize};

/// The machine's GPUs and driver, read once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Inventory {
    /// The kernel driver version, e.g. `580.159.04`.
    pub driver_version: Reading<String>,
    /// NVML's own version, e.g. `13.580.159.04`.
    pub nvml_version: Reading<String>,
    /// The highest CUDA version the driver supports, e.g. `13.0`.
    pub cuda_driver_version: Reading<String>,
    pub devices: Vec<DeviceInfo>,
}

/// Facts about one GPU that do not change while a job runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub index: GpuIndex,
    pub uuid: GpuUuid,
    pub name: String,
    pub pci_bus_id: Reading<String>,
    pub compute_capability: Reading<ComputeCapability>,
    pub memory_total_bytes: Reading<u64>,
    pub temperature_slowdown_celsius: Reading<u32>,
    pub temperature_shutdown_celsius: Reading<u32>,
    pub pcie_max_link: Reading<PcieLink>,
    pub serial: Reading<String>,
}

/// A CUDA compute capability such as 9.0 (Hopper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A PCIe link: generation and lane count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcieLink {
    pub generation: u32,
    pub width: u32,
}

/// One reading of every device and every process on them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Sample {
    /// Milliseconds since the Unix epoch, from the source's clock.
    pub timestamp_ms: u64,
    pub devices: Vec<DeviceSample>,
    pub processes: Vec<ProcessSample>,
}

/// Whether a device answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum DeviceState {
    #[default]
    Ok,
    /// The GPU stopped answering ("GPU is lost", fell off the bus). Its other readings are absent.
    Lost { reason: String },
}

/// One reading of one device. Every metric is a [`Reading`]: absent, never 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DeviceSample {
    pub index: GpuIndex,
    #[serde(flatten)]
    pub state: DeviceState,
    pub memory_total_bytes: Reading<u64>,
    pub memory_used_bytes: Reading<u64>,
    pub memory_free_bytes: Reading<u64>,
    /// Memory the driver keeps for itself (NVML's v2 memory info only).
    pub memory_reserved_bytes: Reading<u64>,
    pub utilization_gpu_percent: Reading<u32>,
    pub utilization_memory_percent: Reading<u32>,
    pub temperature_celsius: Reading<u32>,
    pub power_draw_milliwatts: Reading<u32>,
    pub power_limit_milliwatts: Reading<u32>,
    pub clock_sm_mhz: Reading<u32>,
    pub clock_memory_mhz: Reading<u32>,
    /// Active clock-event (throttle) reasons; an empty list means none.
    pub throttle_reasons: Reading<Vec<ThrottleReason>>,
    pub ecc_enabled: Reading<bool>,
    pub ecc_errors: Reading<EccCounts>,
    pub retired_pages: Reading<RetiredPages>,
    pub remapped_rows: Reading<RemappedRows>,
    pub pcie_link: Reading<PcieLink>,
    pub persistence_mode: Reading<bool>,
    /// `default`, `exclusive_process` or `prohibited`.
    pub compute_mode: Reading<String>,
    pub mig_enabled: Reading<bool>,
    /// The MIG devices of this GPU when MIG is on (empty otherwise, and then left out of
    /// JSON). Processes name theirs by [`ProcessSample::mig_instance`] (the GPU instance id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_instances: Vec<MigInstance>,
}

/// One MIG device: a compute instance inside a GPU instance, with the GPU instance's memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigInstance {
    /// The GPU instance id (what [`ProcessSample::mig_instance`] names).
    pub gpu_instance_id: u32,
    pub compute_instance_id: u32,
    /// The profile, e.g. `3g.71gb` (from the device name `NVIDIA H200 MIG 3g.71gb`).
    pub profile: String,
    /// `MIG-...`, what `CUDA_VISIBLE_DEVICES` takes to select it.
    pub uuid: GpuUuid,
    pub memory_total_bytes: Reading<u64>,
    pub memory_used_bytes: Reading<u64>,
}

impl MigInstance {
    /// The profile part of a MIG device name (`NVIDIA H200 MIG 3g.71gb` → `3g.71gb`), or the
    /// whole name when it has no ` MIG ` part.
    pub fn profile_from_name(name: &str) -> String {
        name.rsplit_once(" MIG ")
            .map_or(name, |(_, profile)| profile)
            .trim()
            .to_owned()
    }
}

/// Why the clocks are held down, in words (NVML's clock-event reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleReason {
    GpuIdle,
    ApplicationClocksSetting,
    SwPowerCap,
    HwSlowdown,
    SyncBoost,
    SwThermalSlowdown,
    HwThermalSlowdown,
    HwPowerBrakeSlowdown,
    DisplayClockSetting,
}

impl ThrottleReason {
    /// Whether this reason means something is wrong (heat, power), not just idle or a setting.
    pub fn is_problem(self) -> bool {
        matches!(
            self,
            ThrottleReason::HwSlowdown
                | ThrottleReason::SwThermalSlowdown
                | ThrottleReason::HwThermalSlowdown
                | ThrottleReason::HwPowerBrakeSlowdown
        )
    }

    /// A few words for a person.
    pub fn describe(self) -> &'static str {
        match self {
            ThrottleReason::GpuIdle => "idle",
            ThrottleReason::ApplicationClocksSetting => "application clocks",
            ThrottleReason::SwPowerCap => "power cap",
            ThrottleReason::HwSlowdown => "HW slowdown",
            ThrottleReason::SyncBoost => "sync boost",
            ThrottleReason::SwThermalSlowdown => "thermal (SW)",
            ThrottleReason::HwThermalSlowdown => "thermal (HW)",
            ThrottleReason::HwPowerBrakeSlowdown => "power brake",
            ThrottleReason::DisplayClockSetting => "display clocks",
        }
    }
}

/// ECC error counts: volatile since the driver loaded, aggregate over the GPU's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct EccCounts {
    pub volatile_corrected: u64,
    pub volatile_uncorrected: u64,
    pub aggregate_corrected: u64,
    pub aggregate_uncorrected: u64,
}

/// Pages retired after ECC errors (GPUs before Ampere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RetiredPages {
    pub single_bit_ecc: u64,
    pub double_bit_ecc: u64,
    /// A retirement waits for the next driver reload.
    pub pending: bool,
}

/// Row remapping (Ampere and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RemappedRows {
    pub correctable: u64,
    pub uncorrectable: u64,
    /// A remap waits for a GPU reset.
    pub pending: bool,
    /// A remap failed: the GPU should be taken out of service.
    pub failure: bool,
}

/// Compute, graphics or both (NVML lists them separately).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    #[default]
    Compute,
    Graphics,
    ComputeAndGraphics,
}

/// One process on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ProcessSample {
    pub gpu: GpuIndex,
    pub pid: Pid,
    /// NVML cannot always say (e.g. under some hypervisors); absent, not 0.
    pub used_memory_bytes: Reading<u64>,
    #[serde(rename = "type")]
    pub kind: ProcessKind,
    /// From /proc; absent when the process is in another pid namespace or already gone.
    pub user: Option<String>,
    pub command: Option<String>,
    /// Container or pod id from the process's cgroup, when it runs in one.
    pub container: Option<String>,
    /// The MIG GPU instance it runs in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_instance: Option<u32>,
}

/// Something that happened on a GPU, as opposed to a state it is in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuEvent {
    pub timestamp_ms: u64,
    pub gpu: GpuIndex,
    #[serde(flatten)]
    pub kind: GpuEventKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum GpuEventKind {
    /// An Xid error reported by the driver.
    Xid { xid: u32, detail: Option<String> },
    /// A new single-bit (corrected) ECC error.
    EccCorrected,
    /// A new double-bit (uncorrected) ECC error.
    EccUncorrected,
    /// The GPU stopped answering.
    DeviceLost { reason: String },
    /// A process appeared on the GPU.
    ProcessStarted { pid: Pid },
    /// A process left the GPU.
    ProcessExited { pid: Pid },
}

#[cfg(test)]
mod mig_tests {
    use super::*;

    #[test]
    fn mig_profile_and_json() {
        assert_eq!(
            MigInstance::profile_from_name("NVIDIA H200 MIG 3g.71gb"),
            "3g.71gb"
        );
        assert_eq!(MigInstance::profile_from_name("odd"), "odd");
        // An empty MIG list is left out, so samples of GPUs without MIG read as before.
        let json = serde_json::to_value(DeviceSample::default()).unwrap();
        assert!(json.get("mig_instances").is_none());
        let back: DeviceSample = serde_json::from_value(json).unwrap();
        assert!(back.mig_instances.is_empty());
    }
}
