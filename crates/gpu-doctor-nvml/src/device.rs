//! One GPU: its cached handle and static facts, and the one pass that reads it per sample.
//!
//! The pass calls NVML in a fixed order, memory first: memory is supported on every GPU, so
//! its failure is the cheapest way to learn that a GPU is lost before spending twenty calls
//! on it. Readings the device refused as unsupported or not permitted are remembered in two
//! bit masks and not asked again. ECC aggregate counters are only re-read when the volatile
//! ones move (aggregate counts are the volatile ones plus history, so they cannot change
//! alone while the driver stays loaded). Settings (`PCIe` link, persistence, compute and MIG
//! mode) are re-read every few seconds, not every sample: see [`SETTINGS_REFRESH`].

use crate::{raw, reading};
use gpu_doctor_model::{
    ComputeCapability, DeviceInfo, DeviceSample, DeviceState, EccCounts, GpuIndex, GpuUuid,
    MigInstance, PcieLink, Pid, ProcessKind, ProcessSample, Reading, RetiredPages, ThrottleReason,
};
use nvml_wrapper::enum_wrappers::device::{
    Clock, ComputeMode, EccCounter, MemoryError, RetirementCause, TemperatureSensor,
    TemperatureThreshold,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::{Device, Nvml};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Readings that can be refused once and for all; the discriminant is the bit.
#[derive(Debug, Clone, Copy)]
enum Field {
    Utilization,
    Temperature,
    Power,
    PowerLimit,
    ClockSm,
    ClockMemory,
    Throttle,
    EccMode,
    EccVolatile,
    EccAggregate,
    RetiredPages,
    RetiredPending,
    Remapped,
    PcieGeneration,
    PcieWidth,
    Persistence,
    ComputeMode,
    MigMode,
    ComputeProcesses,
    GraphicsProcesses,
}

impl Field {
    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// The GPU stopped answering, and why.
struct Lost(String);

impl From<&NvmlError> for Lost {
    fn from(e: &NvmlError) -> Self {
        Lost(match e {
            NvmlError::GpuLost => {
                "GPU is lost (NVML_ERROR_GPU_IS_LOST): it fell off the bus or is otherwise inaccessible".into()
            }
            NvmlError::Unknown => {
                "the GPU does not answer: NVML returned an unknown error for its memory (NVML_ERROR_UNKNOWN)".into()
            }
            other => other.to_string(),
        })
    }
}

/// What one pass over a device found.
pub(crate) struct DeviceRead {
    pub(crate) sample: DeviceSample,
    pub(crate) processes: Vec<ProcessSample>,
    /// Set on the first sample that finds the GPU lost (for the one `DeviceLost` event).
    pub(crate) newly_lost: Option<String>,
}

/// One GPU, its handle cached for the life of the source.
pub(crate) struct Dev {
    /// `None` when the GPU was already lost when NVML was opened.
    pub(crate) device: Option<Device<'static>>,
    pub(crate) index: u32,
    pub(crate) info: DeviceInfo,
    unsupported: u32,
    no_permission: u32,
    /// v2 memory info is missing or refused: use v1 (which has no `reserved`).
    memory_v1: bool,
    /// ECC mode changes only with a reset, so it is read once.
    ecc_mode: Option<Reading<bool>>,
    /// Last volatile (corrected, uncorrected) and the full counts read with them.
    ecc: Option<(u64, u64, EccCounts)>,
    /// The settings and when they were read.
    settings: Option<(Instant, Settings)>,
    /// Why the GPU is lost, while it is.
    lost: Option<String>,
    /// Whether the `DeviceLost` event for the current loss was given.
    lost_reported: bool,
}

/// How long the slow-changing settings are kept before they are read again. Measured on an
/// H200 (driver 580): `nvmlDeviceGetMigMode` takes about 165 µs and the `PCIe` link width
/// 32 µs, against 1 to 10 µs for every other per-sample call; read every sample they would
/// double the recorder's cost. None of them changes without an administrator's action or a
/// power-state change, and a few seconds' delay in seeing one loses nothing.
const SETTINGS_REFRESH: Duration = Duration::from_secs(5);

/// Readings that change only by an administrator's action (or a link retraining).
#[derive(Debug, Clone)]
struct Settings {
    pcie_link: Reading<PcieLink>,
    persistence_mode: Reading<bool>,
    compute_mode: Reading<String>,
    mig_enabled: Reading<bool>,
}

/// Memory readings: total, used, free, reserved.
type MemoryReadings = [Reading<u64>; 4];

impl Dev {
    /// Gets the handle and the static facts of GPU `index`.
    pub(crate) fn open(nvml: &'static Nvml, index: u32) -> Result<Dev, NvmlError> {
        let device = match nvml.device_by_index(index) {
            Ok(d) => d,
            Err(NvmlError::GpuLost | NvmlError::Unknown) => return Ok(Dev::lost_at_open(index)),
            Err(e) => return Err(e),
        };
        let mut dev = Dev {
            device: None,
            index,
            info: DeviceInfo {
                index: GpuIndex(index),
                uuid: GpuUuid(device.uuid().unwrap_or_default()),
                name: device.name().unwrap_or_else(|_| "unknown GPU".into()),
                pci_bus_id: reading(device.pci_info().map(|p| p.bus_id)),
                compute_capability: reading(device.cuda_compute_capability().map(|c| {
                    ComputeCapability {
                        major: u32::try_from(c.major).unwrap_or(0),
                        minor: u32::try_from(c.minor).unwrap_or(0),
                    }
                })),
                memory_total_bytes: Reading::Unsupported,
                temperature_slowdown_celsius: reading(
                    device.temperature_threshold(TemperatureThreshold::Slowdown),
                ),
                temperature_shutdown_celsius: reading(
                    device.temperature_threshold(TemperatureThreshold::Shutdown),
                ),
                pcie_max_link: both(
                    reading(device.max_pcie_link_gen()),
                    reading(device.max_pcie_link_width()),
                )
                .map(|(generation, width)| PcieLink { generation, width }),
                serial: reading(device.serial()),
            },
            unsupported: 0,
            no_permission: 0,
            memory_v1: false,
            ecc_mode: None,
            ecc: None,
            settings: None,
            lost: None,
            lost_reported: false,
        };
        match dev.memory(&device) {
            Ok([total, ..]) => dev.info.memory_total_bytes = total,
            Err(Lost(reason)) => {
                dev.info.memory_total_bytes = Reading::Failed(reason.clone());
                dev.lost = Some(reason);
            }
        }
        dev.device = Some(device);
        Ok(dev)
    }

    fn lost_at_open(index: u32) -> Dev {
        let reason = "GPU is lost: NVML could not give a handle for it".to_owned();
        Dev {
            device: None,
            index,
            info: DeviceInfo {
                index: GpuIndex(index),
                uuid: GpuUuid(String::new()),
                name: "unknown GPU".into(),
                pci_bus_id: failed(&reason),
                compute_capability: failed(&reason),
                memory_total_bytes: failed(&reason),
                temperature_slowdown_celsius: failed(&reason),
                temperature_shutdown_celsius: failed(&reason),
                pcie_max_link: failed(&reason),
                serial: failed(&reason),
            },
            unsupported: 0,
            no_permission: 0,
            memory_v1: false,
            ecc_mode: None,
            ecc: None,
            settings: None,
            lost: Some(reason.clone()),
            lost_reported: false,
        }
    }

    /// Whether `other` is this GPU's handle.
    pub(crate) fn same_handle(&self, other: &Device<'_>) -> bool {
        self.device
            .as_ref()
            .is_some_and(|d| raw::same_handle(d, other))
    }

    /// One pass over the device.
    pub(crate) fn read(&mut self) -> DeviceRead {
        let result = match self.device.take() {
            Some(device) => {
                let r = self.read_device(&device);
                self.device = Some(device);
                r
            }
            None => Err(Lost(
                self.lost.clone().unwrap_or_else(|| "GPU is lost".into()),
            )),
        };
        match result {
            Ok((sample, processes)) => {
                self.lost = None;
                self.lost_reported = false;
                DeviceRead {
                    sample,
                    processes,
                    newly_lost: None,
                }
            }
            Err(Lost(reason)) => {
                let newly_lost = (!self.lost_reported).then(|| reason.clone());
                self.lost_reported = true;
                self.lost = Some(reason.clone());
                DeviceRead {
                    sample: lost_sample(self.index, reason),
                    processes: Vec::new(),
                    newly_lost,
                }
            }
        }
    }

    /// Reads one field unless the device refused it before; `GPU_IS_LOST` ends the pass.
    fn get<T>(
        &mut self,
        field: Field,
        call: impl FnOnce() -> Result<T, NvmlError>,
    ) -> Result<Reading<T>, Lost> {
        if self.unsupported & field.bit() != 0 {
            return Ok(Reading::Unsupported);
        }
        if self.no_permission & field.bit() != 0 {
            return Ok(Reading::NoPermission);
        }
        match call() {
            Err(e @ NvmlError::GpuLost) => Err(Lost::from(&e)),
            r => {
                let r = reading(r);
                match r {
                    Reading::Unsupported => self.unsupported |= field.bit(),
                    Reading::NoPermission => self.no_permission |= field.bit(),
                    _ => {}
                }
                Ok(r)
            }
        }
    }

    /// Memory, v2 where the driver has it, else v1. An unknown error here means the GPU is
    /// not answering at all.
    fn memory(&mut self, device: &Device<'static>) -> Result<MemoryReadings, Lost> {
        if !self.memory_v1 {
            match device.memory_info() {
                Ok(m) => {
                    return Ok([
                        Reading::Value(m.total),
                        Reading::Value(m.used),
                        Reading::Value(m.free),
                        Reading::Value(m.reserved),
                    ]);
                }
                Err(e @ (NvmlError::GpuLost | NvmlError::Unknown)) => return Err(Lost::from(&e)),
                Err(
                    NvmlError::NotSupported
                    | NvmlError::FailedToLoadSymbol(_)
                    | NvmlError::FunctionNotFound
                    | NvmlError::UnexpectedVariant(_)
                    | NvmlError::InvalidArg,
                ) => self.memory_v1 = true,
                Err(e) => {
                    let reason = e.to_string();
                    return Ok([
                        failed(&reason),
                        failed(&reason),
                        failed(&reason),
                        failed(&reason),
                    ]);
                }
            }
        }
        match raw::memory_info_v1(device) {
            Ok((total, free, used)) => Ok([
                Reading::Value(total),
                Reading::Value(used),
                Reading::Value(free),
                Reading::Unsupported,
            ]),
            Err(e @ (NvmlError::GpuLost | NvmlError::Unknown)) => Err(Lost::from(&e)),
            Err(e) => {
                let r = reading::<u64>(Err(e));
                Ok([r.clone(), r.clone(), r.clone(), r])
            }
        }
    }

    fn read_device(
        &mut self,
        device: &Device<'static>,
    ) -> Result<(DeviceSample, Vec<ProcessSample>), Lost> {
        let [memory_total, memory_used, memory_free, memory_reserved] = self.memory(device)?;
        let utilization = self.get(Field::Utilization, || device.utilization_rates())?;
        let temperature = self.get(Field::Temperature, || {
            device.temperature(TemperatureSensor::Gpu)
        })?;
        let power_draw = self.get(Field::Power, || device.power_usage())?;
        let power_limit = self.get(Field::PowerLimit, || device.enforced_power_limit())?;
        let clock_sm = self.get(Field::ClockSm, || device.clock_info(Clock::SM))?;
        let clock_memory = self.get(Field::ClockMemory, || device.clock_info(Clock::Memory))?;
        let throttle = self.get(Field::Throttle, || {
            device
                .current_throttle_reasons()
                .map(|r| decode_throttle(r.bits()))
        })?;
        let ecc_enabled = if let Some(mode) = self.ecc_mode.clone() {
            mode
        } else {
            let mode = self.get(Field::EccMode, || {
                device.is_ecc_enabled().map(|m| m.currently_enabled)
            })?;
            if !matches!(mode, Reading::Failed(_)) {
                self.ecc_mode = Some(mode.clone());
            }
            mode
        };
        let ecc_errors = self.ecc_counts(device)?;
        let retired_pages = self.retired_pages(device)?;
        let remapped_rows = self.get(Field::Remapped, || raw::remapped_rows(device))?;
        let Settings {
            pcie_link,
            persistence_mode,
            compute_mode,
            mig_enabled,
        } = self.settings(device)?;

        let compute = self.get(Field::ComputeProcesses, || {
            device.running_compute_processes()
        })?;
        let graphics = self.get(Field::GraphicsProcesses, || {
            device.running_graphics_processes()
        })?;
        let processes = merge_processes(
            self.index,
            compute.value().map_or(&[][..], Vec::as_slice),
            graphics.value().map_or(&[][..], Vec::as_slice),
        );

        let mig_instances = if mig_enabled.get() == Some(true) {
            mig_instances(device)?
        } else {
            Vec::new()
        };

        let sample = DeviceSample {
            index: GpuIndex(self.index),
            state: DeviceState::Ok,
            memory_total_bytes: memory_total,
            memory_used_bytes: memory_used,
            memory_free_bytes: memory_free,
            memory_reserved_bytes: memory_reserved,
            utilization_gpu_percent: utilization.clone().map(|u| u.gpu),
            utilization_memory_percent: utilization.map(|u| u.memory),
            temperature_celsius: temperature,
            power_draw_milliwatts: power_draw,
            power_limit_milliwatts: power_limit,
            clock_sm_mhz: clock_sm,
            clock_memory_mhz: clock_memory,
            throttle_reasons: throttle,
            ecc_enabled,
            ecc_errors,
            retired_pages,
            remapped_rows,
            pcie_link,
            persistence_mode,
            compute_mode,
            mig_enabled,
            mig_instances,
        };
        Ok((sample, processes))
    }

    /// `PCIe` link, persistence, compute and MIG mode, re-read every [`SETTINGS_REFRESH`].
    fn settings(&mut self, device: &Device<'static>) -> Result<Settings, Lost> {
        if let Some((read_at, settings)) = &self.settings
            && read_at.elapsed() < SETTINGS_REFRESH
        {
            return Ok(settings.clone());
        }
        let pcie_link = both(
            self.get(Field::PcieGeneration, || device.current_pcie_link_gen())?,
            self.get(Field::PcieWidth, || device.current_pcie_link_width())?,
        )
        .map(|(generation, width)| PcieLink { generation, width });
        let settings = Settings {
            pcie_link,
            persistence_mode: self.get(Field::Persistence, || device.is_in_persistent_mode())?,
            compute_mode: self.get(Field::ComputeMode, || {
                device.compute_mode().map(compute_mode_name)
            })?,
            mig_enabled: self.get(Field::MigMode, || device.mig_mode().map(|m| m.current != 0))?,
        };
        self.settings = Some((Instant::now(), settings.clone()));
        Ok(settings)
    }

    fn ecc_counts(&mut self, device: &Device<'static>) -> Result<Reading<EccCounts>, Lost> {
        let count = |error, counter| move || device.total_ecc_errors(error, counter);
        let volatile = both(
            self.get(
                Field::EccVolatile,
                count(MemoryError::Corrected, EccCounter::Volatile),
            )?,
            self.get(
                Field::EccVolatile,
                count(MemoryError::Uncorrected, EccCounter::Volatile),
            )?,
        );
        let Reading::Value((vc, vu)) = volatile else {
            return Ok(absence(volatile));
        };
        if let Some((c, u, counts)) = self.ecc
            && (c, u) == (vc, vu)
        {
            return Ok(Reading::Value(counts));
        }
        let aggregate = both(
            self.get(
                Field::EccAggregate,
                count(MemoryError::Corrected, EccCounter::Aggregate),
            )?,
            self.get(
                Field::EccAggregate,
                count(MemoryError::Uncorrected, EccCounter::Aggregate),
            )?,
        );
        let counts = aggregate.map(|(ac, au)| EccCounts {
            volatile_corrected: vc,
            volatile_uncorrected: vu,
            aggregate_corrected: ac,
            aggregate_uncorrected: au,
        });
        if let Reading::Value(c) = counts {
            self.ecc = Some((vc, vu, c));
        }
        Ok(counts)
    }

    fn retired_pages(&mut self, device: &Device<'static>) -> Result<Reading<RetiredPages>, Lost> {
        let count = |cause| move || device.retired_pages(cause).map(|p| p.len() as u64);
        let single = self.get(
            Field::RetiredPages,
            count(RetirementCause::MultipleSingleBitEccErrors),
        )?;
        let double = self.get(
            Field::RetiredPages,
            count(RetirementCause::DoubleBitEccError),
        )?;
        let pending = self.get(Field::RetiredPending, || device.are_pages_pending_retired())?;
        Ok(both(both(single, double), pending).map(
            |((single_bit_ecc, double_bit_ecc), pending)| RetiredPages {
                single_bit_ecc,
                double_bit_ecc,
                pending,
            },
        ))
    }
}

/// Two readings as one: a value when both are, else the first absence.
fn both<A, B>(a: Reading<A>, b: Reading<B>) -> Reading<(A, B)> {
    match (a, b) {
        (Reading::Value(a), Reading::Value(b)) => Reading::Value((a, b)),
        (Reading::Value(_), absent) => absence(absent),
        (absent, _) => absence(absent),
    }
}

/// An absent reading as a reading of another type.
fn absence<T, U>(r: Reading<T>) -> Reading<U> {
    match r {
        Reading::Unsupported => Reading::Unsupported,
        Reading::NoPermission => Reading::NoPermission,
        Reading::Failed(e) => Reading::Failed(e),
        // Only absent readings are passed in.
        Reading::Value(_) => Reading::Failed("internal: a value taken for an absence".into()),
    }
}

/// The readings of a GPU that stopped answering: all absent, with the reason.
fn lost_sample(index: u32, reason: String) -> DeviceSample {
    DeviceSample {
        index: GpuIndex(index),
        memory_total_bytes: failed(&reason),
        memory_used_bytes: failed(&reason),
        memory_free_bytes: failed(&reason),
        memory_reserved_bytes: failed(&reason),
        utilization_gpu_percent: failed(&reason),
        utilization_memory_percent: failed(&reason),
        temperature_celsius: failed(&reason),
        power_draw_milliwatts: failed(&reason),
        power_limit_milliwatts: failed(&reason),
        clock_sm_mhz: failed(&reason),
        clock_memory_mhz: failed(&reason),
        throttle_reasons: failed(&reason),
        ecc_enabled: failed(&reason),
        ecc_errors: failed(&reason),
        retired_pages: failed(&reason),
        remapped_rows: failed(&reason),
        pcie_link: failed(&reason),
        persistence_mode: failed(&reason),
        compute_mode: failed(&reason),
        mig_enabled: failed(&reason),
        mig_instances: Vec::new(),
        state: DeviceState::Lost { reason },
    }
}

/// An absent reading with the reason.
fn failed<T>(reason: &str) -> Reading<T> {
    Reading::Failed(reason.to_owned())
}

/// The MIG devices of a GPU in MIG mode: each one's ids, profile, UUID and memory. Empty
/// slots below the maximum answer `NOT_FOUND` and are skipped; a GPU lost meanwhile ends the
/// pass like any other reading.
fn mig_instances(device: &Device<'static>) -> Result<Vec<MigInstance>, Lost> {
    let Ok(max) = device.mig_device_count() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    // H100/H200 allow 7 MIG devices; the bound keeps a confused driver from costing more.
    for index in 0..max.min(64) {
        let mig = match device.mig_device_by_index(index) {
            Ok(m) => m,
            Err(e @ NvmlError::GpuLost) => return Err(Lost::from(&e)),
            Err(_) => continue,
        };
        let memory = match mig.memory_info() {
            Ok(m) => (Reading::Value(m.total), Reading::Value(m.used)),
            Err(_) => match raw::memory_info_v1(&mig) {
                Ok((total, _, used)) => (Reading::Value(total), Reading::Value(used)),
                Err(e) => {
                    let r = reading::<u64>(Err(e));
                    (r.clone(), r)
                }
            },
        };
        // Every MIG handle has both ids; one that cannot say them cannot have processes
        // attributed to it either, and a made-up id would be worse than leaving it out.
        let (Ok(gpu_instance_id), Ok(compute_instance_id)) =
            (raw::gpu_instance_id(&mig), raw::compute_instance_id(&mig))
        else {
            continue;
        };
        out.push(MigInstance {
            gpu_instance_id,
            compute_instance_id,
            profile: MigInstance::profile_from_name(&mig.name().unwrap_or_default()),
            uuid: GpuUuid(mig.uuid().unwrap_or_default()),
            memory_total_bytes: memory.0,
            memory_used_bytes: memory.1,
        });
    }
    out.sort_by_key(|m| (m.gpu_instance_id, m.compute_instance_id));
    Ok(out)
}

/// NVML's clock-event reason bits, in words. Bits gpu-doctor does not know are dropped.
pub(crate) fn decode_throttle(bits: u64) -> Vec<ThrottleReason> {
    const BITS: [(u64, ThrottleReason); 9] = [
        (0x1, ThrottleReason::GpuIdle),
        (0x2, ThrottleReason::ApplicationClocksSetting),
        (0x4, ThrottleReason::SwPowerCap),
        (0x8, ThrottleReason::HwSlowdown),
        (0x10, ThrottleReason::SyncBoost),
        (0x20, ThrottleReason::SwThermalSlowdown),
        (0x40, ThrottleReason::HwThermalSlowdown),
        (0x80, ThrottleReason::HwPowerBrakeSlowdown),
        (0x100, ThrottleReason::DisplayClockSetting),
    ];
    BITS.iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|&(_, reason)| reason)
        .collect()
}

fn compute_mode_name(mode: ComputeMode) -> String {
    match mode {
        ComputeMode::Default => "default",
        ComputeMode::ExclusiveThread => "exclusive_thread",
        ComputeMode::Prohibited => "prohibited",
        ComputeMode::ExclusiveProcess => "exclusive_process",
    }
    .to_owned()
}

/// NVML lists compute and graphics processes separately; a process in both is one
/// `ComputeAndGraphics` entry. Ordered by pid.
fn merge_processes(
    gpu: u32,
    compute: &[ProcessInfo],
    graphics: &[ProcessInfo],
) -> Vec<ProcessSample> {
    let mut by_pid: BTreeMap<u32, ProcessSample> = BTreeMap::new();
    let tagged = compute
        .iter()
        .map(|p| (p, ProcessKind::Compute))
        .chain(graphics.iter().map(|p| (p, ProcessKind::Graphics)));
    for (p, kind) in tagged {
        let memory = match p.used_gpu_memory {
            UsedGpuMemory::Used(bytes) => Reading::Value(bytes),
            UsedGpuMemory::Unavailable => Reading::Unsupported,
        };
        by_pid
            .entry(p.pid)
            .and_modify(|s| {
                if s.kind != kind {
                    s.kind = ProcessKind::ComputeAndGraphics;
                }
                // The same context appears in both lists; keep the number that is there.
                if !s.used_memory_bytes.is_value() {
                    s.used_memory_bytes = memory.clone();
                }
            })
            .or_insert_with(|| ProcessSample {
                gpu: GpuIndex(gpu),
                pid: Pid(p.pid),
                used_memory_bytes: memory,
                kind,
                user: None,
                command: None,
                container: None,
                mig_instance: p.gpu_instance_id,
            });
    }
    by_pid.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(pid: u32, used: UsedGpuMemory) -> ProcessInfo {
        ProcessInfo {
            pid,
            used_gpu_memory: used,
            gpu_instance_id: None,
            compute_instance_id: None,
        }
    }

    #[test]
    fn throttle_bits_decode_to_words() {
        assert_eq!(decode_throttle(0), vec![]);
        assert_eq!(decode_throttle(0x1), vec![ThrottleReason::GpuIdle]);
        assert_eq!(
            decode_throttle(0x4 | 0x20 | 0x40),
            vec![
                ThrottleReason::SwPowerCap,
                ThrottleReason::SwThermalSlowdown,
                ThrottleReason::HwThermalSlowdown
            ]
        );
        // Unknown high bits are dropped, not misread.
        assert_eq!(
            decode_throttle(0x8000_0000_0000_0100),
            vec![ThrottleReason::DisplayClockSetting]
        );
    }

    #[test]
    fn processes_in_both_lists_merge() {
        let merged = merge_processes(
            3,
            &[
                info(10, UsedGpuMemory::Used(100)),
                info(20, UsedGpuMemory::Unavailable),
            ],
            &[
                info(20, UsedGpuMemory::Used(200)),
                info(30, UsedGpuMemory::Used(300)),
            ],
        );
        let kinds: Vec<_> = merged
            .iter()
            .map(|p| (p.pid.0, p.kind, p.used_memory_bytes.get()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (10, ProcessKind::Compute, Some(100)),
                (20, ProcessKind::ComputeAndGraphics, Some(200)),
                (30, ProcessKind::Graphics, Some(300)),
            ]
        );
        assert!(merged.iter().all(|p| p.gpu == GpuIndex(3)));
    }

    #[test]
    fn both_keeps_the_first_absence() {
        assert_eq!(
            both(Reading::Value(1), Reading::Value(2)),
            Reading::Value((1, 2))
        );
        assert_eq!(
            both::<u32, u32>(Reading::Value(1), Reading::NoPermission),
            Reading::NoPermission
        );
        assert_eq!(
            both::<u32, u32>(Reading::Unsupported, Reading::Failed("x".into())),
            Reading::Unsupported
        );
    }

    #[test]
    fn a_lost_sample_has_no_numbers() {
        let s = lost_sample(1, "GPU is lost".into());
        assert_eq!(
            s.state,
            DeviceState::Lost {
                reason: "GPU is lost".into()
            }
        );
        let json = serde_json::to_value(&s).unwrap();
        for (key, value) in json.as_object().unwrap() {
            if key == "index" {
                continue;
            }
            assert!(!value.is_number(), "{key} is a number on a lost GPU");
        }
    }
}
