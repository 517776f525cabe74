//! The scenario file: what the stand-in driver answers, and how it changes over time.
//!
//! This module is pure (no FFI, no globals): it parses the JSON and answers "what is the value
//! of X on GPU g at tick t". The C entry points in `ffi` only translate those answers into
//! NVML's structs and return codes. The format is documented in `docs/fake-nvml.md`.
//!
//! Time is counted in *ticks*. With `"timeline": "samples"` (the default) a GPU's tick is the
//! number of times its memory was read, minus one: every NVML consumer reads memory once per
//! sample, so the first sample sees tick 0, the second tick 1, and so on, deterministically.
//! With `"timeline": "milliseconds"` a tick is a millisecond since `nvmlInit`, for tools that
//! sample on a wall clock.

use serde::Deserialize;
use std::collections::BTreeMap;

/// Scenario files larger than this are refused: they are test inputs, not data sets.
pub const MAX_SCENARIO_BYTES: u64 = 16 * 1024 * 1024;
/// NVML handles are encoded with 12 bits for the MIG slot (see `ffi`), and no machine has
/// more GPUs than this.
pub const MAX_GPUS: usize = 64;
/// Bound on the process list, so a typo cannot make every call allocate gigabytes.
pub const MAX_PROCESSES: usize = 4096;
/// Bound on MIG devices per GPU (H100/H200 allow 7).
pub const MAX_MIG_DEVICES: usize = 64;

/// How ticks are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timeline {
    /// One tick per memory read of the GPU (one per sample).
    #[default]
    Samples,
    /// One tick per millisecond since `nvmlInit`.
    Milliseconds,
}

/// An NVML error a function can be configured to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    NotSupported,
    NoPermission,
    GpuIsLost,
    Unknown,
    DriverNotLoaded,
    LibRmVersionMismatch,
    Timeout,
    NotFound,
}

impl ErrorKind {
    /// The `nvmlReturn_t` value from nvml.h.
    pub fn code(self) -> u32 {
        match self {
            ErrorKind::NotSupported => 3,
            ErrorKind::NoPermission => 4,
            ErrorKind::NotFound => 6,
            ErrorKind::DriverNotLoaded => 9,
            ErrorKind::Timeout => 10,
            ErrorKind::GpuIsLost => 15,
            ErrorKind::LibRmVersionMismatch => 18,
            ErrorKind::Unknown => 999,
        }
    }
}

/// A whole scenario: the driver and its GPUs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text: what this scenario is for.
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_driver_version")]
    pub driver_version: String,
    #[serde(default = "default_nvml_version")]
    pub nvml_version: String,
    /// CUDA version as NVML encodes it: 1000 * major + 10 * minor (13000 is 13.0).
    #[serde(default = "default_cuda_version")]
    pub cuda_driver_version: i32,
    #[serde(default)]
    pub timeline: Timeline,
    /// When set, `nvmlInit` fails with this error (e.g. `lib_rm_version_mismatch`).
    #[serde(default)]
    pub init_error: Option<ErrorKind>,
    pub gpus: Vec<Gpu>,
    #[serde(default)]
    pub processes: Vec<Process>,
}

fn default_driver_version() -> String {
    "580.159.04".into()
}
fn default_nvml_version() -> String {
    "13.580.159.04".into()
}
fn default_cuda_version() -> i32 {
    13000
}

/// A `PCIe` link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub generation: u32,
    pub width: u32,
}

/// NVML's compute modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputeMode {
    #[default]
    Default,
    ExclusiveThread,
    Prohibited,
    ExclusiveProcess,
}

impl ComputeMode {
    /// The `nvmlComputeMode_t` value.
    pub fn code(self) -> u32 {
        match self {
            ComputeMode::Default => 0,
            ComputeMode::ExclusiveThread => 1,
            ComputeMode::Prohibited => 2,
            ComputeMode::ExclusiveProcess => 3,
        }
    }
}

/// One physical GPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    #[serde(default = "default_name")]
    pub name: String,
    pub uuid: String,
    pub pci_bus_id: String,
    #[serde(default)]
    pub serial: String,
    #[serde(default = "default_cc")]
    pub compute_capability: [i32; 2],
    #[serde(default = "default_total")]
    pub memory_total_bytes: u64,
    /// What the driver keeps for itself (v2 memory info's `reserved`; v1 counts it as used).
    #[serde(default = "default_reserved")]
    pub memory_reserved_bytes: u64,
    /// Memory in use with no process on the GPU (contexts of processes NVML does not list).
    #[serde(default)]
    pub memory_base_used_bytes: u64,
    #[serde(default = "default_slowdown")]
    pub temperature_slowdown_celsius: u32,
    #[serde(default = "default_shutdown")]
    pub temperature_shutdown_celsius: u32,
    #[serde(default = "default_link")]
    pub pcie_max: Link,
    #[serde(default = "default_power_limit")]
    pub power_limit_milliwatts: u32,
    #[serde(default = "default_true")]
    pub persistence_mode: bool,
    #[serde(default)]
    pub compute_mode: ComputeMode,
    #[serde(default = "default_true")]
    pub ecc_enabled: bool,
    #[serde(default)]
    pub mig: Option<Mig>,
    /// Readings that change over time; each phase overrides the fields it names from its
    /// `from` tick on.
    #[serde(default)]
    pub phases: Vec<Phase>,
    /// Events delivered through `nvmlEventSetWait_v2`.
    #[serde(default)]
    pub events: Vec<Event>,
    /// From this tick on, every call about this GPU fails with `lost_error`.
    #[serde(default)]
    pub lost_at: Option<u64>,
    #[serde(default = "default_lost_error")]
    pub lost_error: ErrorKind,
    /// NVML function name → the error it returns for this GPU (`nvmlDeviceGetPowerUsage`:
    /// `not_supported`).
    #[serde(default)]
    pub errors: BTreeMap<String, ErrorKind>,
}

fn default_name() -> String {
    "NVIDIA H200".into()
}
fn default_cc() -> [i32; 2] {
    [9, 0]
}
fn default_total() -> u64 {
    150_754_820_096
}
fn default_reserved() -> u64 {
    644_939_776
}
fn default_slowdown() -> u32 {
    89
}
fn default_shutdown() -> u32 {
    95
}
fn default_link() -> Link {
    Link {
        generation: 5,
        width: 16,
    }
}
fn default_power_limit() -> u32 {
    700_000
}
fn default_true() -> bool {
    true
}
fn default_lost_error() -> ErrorKind {
    ErrorKind::GpuIsLost
}

/// MIG configuration of one GPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mig {
    /// Current mode.
    pub enabled: bool,
    /// Mode after the next reset; defaults to `enabled`.
    #[serde(default)]
    pub pending: Option<bool>,
    /// `nvmlDeviceGetMaxMigDeviceCount`; defaults to the number of instances.
    #[serde(default)]
    pub max_devices: Option<u32>,
    #[serde(default)]
    pub instances: Vec<MigInstance>,
}

/// One MIG device (a compute instance inside a GPU instance).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigInstance {
    pub uuid: String,
    #[serde(default)]
    pub name: Option<String>,
    pub gpu_instance_id: u32,
    #[serde(default)]
    pub compute_instance_id: u32,
    pub memory_total_bytes: u64,
    #[serde(default)]
    pub memory_used_bytes: u64,
}

/// Clock-event (throttle) reasons, by NVML's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Throttle {
    GpuIdle,
    ApplicationsClocksSetting,
    SwPowerCap,
    HwSlowdown,
    SyncBoost,
    SwThermalSlowdown,
    HwThermalSlowdown,
    HwPowerBrakeSlowdown,
    DisplayClockSetting,
}

impl Throttle {
    /// The bit in NVML's `nvmlClocksEventReason*` mask.
    pub fn bit(self) -> u64 {
        match self {
            Throttle::GpuIdle => 0x1,
            Throttle::ApplicationsClocksSetting => 0x2,
            Throttle::SwPowerCap => 0x4,
            Throttle::HwSlowdown => 0x8,
            Throttle::SyncBoost => 0x10,
            Throttle::SwThermalSlowdown => 0x20,
            Throttle::HwThermalSlowdown => 0x40,
            Throttle::HwPowerBrakeSlowdown => 0x80,
            Throttle::DisplayClockSetting => 0x100,
        }
    }
}

/// ECC counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ecc {
    pub volatile_corrected: u64,
    pub volatile_uncorrected: u64,
    pub aggregate_corrected: u64,
    pub aggregate_uncorrected: u64,
}

/// Retired pages (pre-Ampere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Retired {
    pub single_bit_ecc: u32,
    pub double_bit_ecc: u32,
    pub pending: bool,
}

/// Row remapping (Ampere and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Remapped {
    pub correctable: u32,
    pub uncorrectable: u32,
    pub pending: bool,
    pub failure: bool,
}

/// Readings that hold from tick `from` on (until a later phase overrides them).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    #[serde(default)]
    pub from: u64,
    pub utilization_gpu_percent: Option<u32>,
    pub utilization_memory_percent: Option<u32>,
    pub temperature_celsius: Option<u32>,
    pub power_draw_milliwatts: Option<u32>,
    pub clock_sm_mhz: Option<u32>,
    pub clock_memory_mhz: Option<u32>,
    pub throttle_reasons: Option<Vec<Throttle>>,
    pub pcie_link: Option<Link>,
    pub ecc: Option<Ecc>,
    pub retired_pages: Option<Retired>,
    pub remapped_rows: Option<Remapped>,
}

/// The readings of one GPU at one tick, every phase up to it applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readings {
    pub utilization_gpu_percent: u32,
    pub utilization_memory_percent: u32,
    pub temperature_celsius: u32,
    pub power_draw_milliwatts: u32,
    pub clock_sm_mhz: u32,
    pub clock_memory_mhz: u32,
    pub throttle_mask: u64,
    pub pcie_link: Link,
    pub ecc: Ecc,
    pub retired_pages: Retired,
    pub remapped_rows: Remapped,
}

/// What kind of event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Xid,
    EccSingleBit,
    EccDoubleBit,
}

impl EventKind {
    /// The `nvmlEventType*` bit.
    pub fn bit(self) -> u64 {
        match self {
            EventKind::EccSingleBit => 0x1,
            EventKind::EccDoubleBit => 0x2,
            EventKind::Xid => 0x8,
        }
    }
}

/// One event on one GPU.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// The tick from which the event can be delivered.
    pub at: u64,
    pub kind: EventKind,
    /// The Xid number, for `xid` events.
    #[serde(default)]
    pub xid: Option<u64>,
}

/// Compute, graphics or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    #[default]
    Compute,
    Graphics,
    ComputeAndGraphics,
}

/// A process on a GPU, present from tick `from` until (not including) tick `until`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    /// Required unless `pid_file` is given.
    #[serde(default)]
    pub pid: u32,
    /// Read the pid from this file at every query instead (a test's child writes its own pid
    /// there, so a process started after `nvmlInit` can be listed); not listed while the file
    /// is missing or does not hold a number.
    #[serde(default)]
    pub pid_file: Option<String>,
    pub gpu: usize,
    #[serde(default)]
    pub kind: ProcessKind,
    /// `null`: NVML cannot say (it reports `NVML_VALUE_NOT_AVAILABLE`).
    pub used_memory_bytes: Option<u64>,
    /// Added per tick since `from` (a leak).
    #[serde(default)]
    pub growth_bytes_per_tick: u64,
    #[serde(default)]
    pub from: u64,
    #[serde(default)]
    pub until: Option<u64>,
    /// MIG instance ids, when the process runs inside one.
    #[serde(default)]
    pub gpu_instance_id: Option<u32>,
    #[serde(default)]
    pub compute_instance_id: Option<u32>,
}

impl Process {
    /// The pid to list now: `pid`, or what `pid_file` holds (`None` while it holds none).
    pub fn current_pid(&self) -> Option<u32> {
        use std::io::Read;
        let Some(path) = &self.pid_file else {
            return Some(self.pid);
        };
        let mut text = String::new();
        std::fs::File::open(path)
            .ok()?
            .take(64)
            .read_to_string(&mut text)
            .ok()?;
        text.trim().parse().ok().filter(|&p| p > 0)
    }

    /// Whether the process is on its GPU at `tick`.
    pub fn alive_at(&self, tick: u64) -> bool {
        tick >= self.from && self.until.is_none_or(|until| tick < until)
    }

    /// Its memory at `tick` (`None`: not available).
    pub fn memory_at(&self, tick: u64) -> Option<u64> {
        let grown = self
            .growth_bytes_per_tick
            .saturating_mul(tick.saturating_sub(self.from));
        self.used_memory_bytes.map(|b| b.saturating_add(grown))
    }
}

/// Why a scenario cannot be used.
#[derive(Debug)]
pub struct ScenarioError(pub String);

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Scenario {
    /// Parses and checks a scenario.
    pub fn parse(json: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario =
            serde_json::from_str(json).map_err(|e| ScenarioError(e.to_string()))?;
        scenario.check()?;
        Ok(scenario)
    }

    /// Reads a scenario file, bounded in size.
    pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        use std::io::Read;
        let file = std::fs::File::open(path)
            .map_err(|e| ScenarioError(format!("{}: {e}", path.display())))?;
        let mut text = String::new();
        file.take(MAX_SCENARIO_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| ScenarioError(format!("{}: {e}", path.display())))?;
        if text.len() as u64 > MAX_SCENARIO_BYTES {
            return Err(ScenarioError(format!(
                "{}: larger than {MAX_SCENARIO_BYTES} bytes",
                path.display()
            )));
        }
        Scenario::parse(&text).map_err(|e| ScenarioError(format!("{}: {e}", path.display())))
    }

    fn check(&self) -> Result<(), ScenarioError> {
        if self.gpus.len() > MAX_GPUS {
            return Err(ScenarioError(format!("more than {MAX_GPUS} GPUs")));
        }
        if self.processes.len() > MAX_PROCESSES {
            return Err(ScenarioError(format!(
                "more than {MAX_PROCESSES} processes"
            )));
        }
        for (i, gpu) in self.gpus.iter().enumerate() {
            if let Some(mig) = &gpu.mig
                && (mig.instances.len() > MAX_MIG_DEVICES
                    || mig.max_devices.unwrap_or(0) as usize > MAX_MIG_DEVICES)
            {
                return Err(ScenarioError(format!(
                    "gpu {i}: more than {MAX_MIG_DEVICES} MIG devices"
                )));
            }
            for name in gpu.errors.keys() {
                if !name.starts_with("nvml") {
                    return Err(ScenarioError(format!(
                        "gpu {i}: `{name}` in `errors` is not an NVML function name"
                    )));
                }
            }
            for event in &gpu.events {
                if event.kind == EventKind::Xid && event.xid.is_none() {
                    return Err(ScenarioError(format!(
                        "gpu {i}: an xid event needs an `xid` number"
                    )));
                }
            }
        }
        for p in &self.processes {
            if p.pid == 0 && p.pid_file.is_none() {
                return Err(ScenarioError(
                    "a process needs a `pid` (or a `pid_file` to read it from)".into(),
                ));
            }
            if p.gpu >= self.gpus.len() {
                return Err(ScenarioError(format!(
                    "process {} is on gpu {}, but there are {} GPUs",
                    p.pid,
                    p.gpu,
                    self.gpus.len()
                )));
            }
        }
        Ok(())
    }

    /// Memory in use on `gpu` at `tick`: the base plus every live process that can say.
    pub fn memory_used(&self, gpu: usize, tick: u64) -> u64 {
        let base = self.gpus.get(gpu).map_or(0, |g| g.memory_base_used_bytes);
        self.processes
            .iter()
            .filter(|p| p.gpu == gpu && p.alive_at(tick) && p.current_pid().is_some())
            .filter_map(|p| p.memory_at(tick))
            .fold(base, u64::saturating_add)
    }

    /// The processes on `gpu` at `tick` whose kind includes compute (or graphics).
    pub fn processes_at(
        &self,
        gpu: usize,
        tick: u64,
        graphics: bool,
    ) -> impl Iterator<Item = &Process> {
        self.processes.iter().filter(move |p| {
            p.gpu == gpu
                && p.alive_at(tick)
                && match p.kind {
                    ProcessKind::Compute => !graphics,
                    ProcessKind::Graphics => graphics,
                    ProcessKind::ComputeAndGraphics => true,
                }
        })
    }
}

impl Gpu {
    /// The configured error for `function`, or the lost error once the GPU is lost.
    pub fn error_for(&self, function: &str, tick: u64) -> Option<ErrorKind> {
        if self.lost_at.is_some_and(|at| tick >= at) {
            return Some(self.lost_error);
        }
        self.errors.get(function).copied()
    }

    /// The readings at `tick`: defaults (an idle H200), then each phase whose `from` has come.
    pub fn readings_at(&self, tick: u64) -> Readings {
        let mut r = Readings {
            utilization_gpu_percent: 0,
            utilization_memory_percent: 0,
            temperature_celsius: 34,
            power_draw_milliwatts: 78_418,
            clock_sm_mhz: 1980,
            clock_memory_mhz: 3201,
            throttle_mask: Throttle::GpuIdle.bit(),
            pcie_link: self.pcie_max,
            ecc: Ecc::default(),
            retired_pages: Retired::default(),
            remapped_rows: Remapped::default(),
        };
        for phase in self.phases.iter().filter(|p| p.from <= tick) {
            macro_rules! take {
                ($($field:ident),*) => {$(
                    if let Some(v) = phase.$field { r.$field = v; }
                )*};
            }
            take!(
                utilization_gpu_percent,
                utilization_memory_percent,
                temperature_celsius,
                power_draw_milliwatts,
                clock_sm_mhz,
                clock_memory_mhz,
                pcie_link,
                ecc,
                retired_pages,
                remapped_rows
            );
            if let Some(reasons) = &phase.throttle_reasons {
                r.throttle_mask = reasons.iter().fold(0, |m, t| m | t.bit());
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"gpus":[{"uuid":"GPU-0","pci_bus_id":"00000000:18:00.0"}]}"#;

    #[test]
    fn minimal_scenario_gets_h200_defaults() {
        let s = Scenario::parse(MINIMAL).unwrap();
        assert_eq!(s.cuda_driver_version, 13000);
        assert_eq!(s.gpus[0].memory_total_bytes, 150_754_820_096);
        assert_eq!(s.gpus[0].readings_at(0).pcie_link.generation, 5);
        assert_eq!(s.memory_used(0, 0), 0);
    }

    #[test]
    fn phases_override_in_order() {
        let s = Scenario::parse(
            r#"{"gpus":[{"uuid":"GPU-0","pci_bus_id":"x","phases":[
                {"from":0,"temperature_celsius":40},
                {"from":3,"temperature_celsius":85,"throttle_reasons":["sw_thermal_slowdown","sw_power_cap"]}
            ]}]}"#,
        )
        .unwrap();
        let g = &s.gpus[0];
        assert_eq!(g.readings_at(2).temperature_celsius, 40);
        assert_eq!(g.readings_at(2).throttle_mask, 0x1);
        assert_eq!(g.readings_at(3).temperature_celsius, 85);
        assert_eq!(g.readings_at(9).throttle_mask, 0x24);
    }

    #[test]
    fn processes_come_go_and_grow() {
        let s = Scenario::parse(
            r#"{"gpus":[{"uuid":"GPU-0","pci_bus_id":"x","memory_base_used_bytes":100}],
                "processes":[{"pid":7,"gpu":0,"used_memory_bytes":1000,"growth_bytes_per_tick":10,"from":2,"until":5}]}"#,
        )
        .unwrap();
        assert_eq!(s.memory_used(0, 1), 100);
        assert_eq!(s.memory_used(0, 2), 1100);
        assert_eq!(s.memory_used(0, 4), 1120);
        assert_eq!(s.memory_used(0, 5), 100);
        assert_eq!(s.processes_at(0, 3, false).count(), 1);
        assert_eq!(s.processes_at(0, 3, true).count(), 0);
    }

    #[test]
    fn lost_gpu_fails_every_call_from_its_tick() {
        let s = Scenario::parse(
            r#"{"gpus":[{"uuid":"GPU-0","pci_bus_id":"x","lost_at":2,
                "errors":{"nvmlDeviceGetPowerUsage":"not_supported"}}]}"#,
        )
        .unwrap();
        let g = &s.gpus[0];
        assert_eq!(
            g.error_for("nvmlDeviceGetPowerUsage", 0),
            Some(ErrorKind::NotSupported)
        );
        assert_eq!(g.error_for("nvmlDeviceGetTemperature", 1), None);
        assert_eq!(
            g.error_for("nvmlDeviceGetTemperature", 2),
            Some(ErrorKind::GpuIsLost)
        );
    }

    #[test]
    fn bad_scenarios_are_refused_with_a_reason() {
        let unknown_field = r#"{"gpus":[{"uuid":"GPU-0","pci_bus_id":"x","colour":1}]}"#;
        assert!(
            Scenario::parse(unknown_field)
                .unwrap_err()
                .0
                .contains("colour")
        );
        let bad_gpu = r#"{"gpus":[],"processes":[{"pid":1,"gpu":3,"used_memory_bytes":1}]}"#;
        assert!(Scenario::parse(bad_gpu).unwrap_err().0.contains("gpu 3"));
        let xid = r#"{"gpus":[{"uuid":"G","pci_bus_id":"x","events":[{"at":0,"kind":"xid"}]}]}"#;
        assert!(Scenario::parse(xid).unwrap_err().0.contains("xid"));
    }

    #[test]
    fn a_pid_can_come_from_a_file() {
        let dir = std::env::temp_dir().join(format!("fake-nvml-pid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("job.pid");
        let json = format!(
            r#"{{"gpus":[{{"uuid":"G","pci_bus_id":"x"}}],"processes":[{{"pid_file":{:?},"gpu":0,"used_memory_bytes":5}}]}}"#,
            file.display().to_string()
        );
        let s = Scenario::parse(&json).unwrap();
        // Not listed, and not counted, until the file names a pid.
        assert_eq!(
            s.processes_at(0, 0, false)
                .filter_map(Process::current_pid)
                .count(),
            0
        );
        assert_eq!(s.memory_used(0, 0), 0);
        std::fs::write(&file, "4321\n").unwrap();
        assert_eq!(s.processes[0].current_pid(), Some(4321));
        assert_eq!(s.memory_used(0, 0), 5);
        std::fs::remove_dir_all(&dir).unwrap();
        let neither = r#"{"gpus":[{"uuid":"G","pci_bus_id":"x"}],"processes":[{"gpu":0,"used_memory_bytes":1}]}"#;
        assert!(Scenario::parse(neither).unwrap_err().0.contains("pid_file"));
    }

    #[test]
    fn shipped_scenarios_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(n >= 7, "only {n} scenarios in {}", dir.display());
    }
}
