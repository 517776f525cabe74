//! [`NvmlSource`]: live GPU state through nvml-wrapper. The only crate that touches the
//! driver.
//!
//! NVML is loaded and initialised once in [`NvmlSource::open`]; device handles and static
//! facts (the [`Inventory`]) are made there and kept. The Xid/ECC event set is made by the
//! first [`GpuSource::drain_events`], so one-shot commands (`status`, `check`, `pick`) that
//! never drain do not pay for registering it on every GPU. Each
//! [`GpuSource::sample`] then does one pass per device, in a fixed order, skipping any
//! reading the device already said it does not support (a GPU does not gain a sensor
//! mid-run) and any it already refused for lack of permission. Every reading is a
//! [`Reading`]: an unsupported one is `Unsupported`, never 0.
//!
//! A GPU that answers `GPU_IS_LOST` (or an unknown error to its memory query, which every
//! GPU supports) is reported as [`DeviceState::Lost`] with its readings absent, one
//! [`GpuEventKind::DeviceLost`] event is queued, and the other GPUs keep reporting. Lost
//! GPUs are probed once per sample (one memory query) so a recovered GPU comes back.
//!
//! Events: Xid and ECC events come from NVML's event set, drained without blocking; process
//! start/exit events come from diffing each sample's process list with the previous one.

mod device;
mod procfs;
mod raw;

pub use procfs::{ProcFs, ProcessDetails, container_from_cgroup, format_cmdline, parse_passwd};

use device::{Dev, DeviceRead};
use gpu_doctor_model::{
    Clock, DeviceState, GpuEvent, GpuEventKind, GpuIndex, Inventory, Pid, Reading, Sample,
    SystemClock,
};
use gpu_doctor_source::{GpuSource, SourceError};
use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{EventSet, Nvml};
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

/// The library NVML is loaded from when no path is given.
pub const DEFAULT_LIBRARY: &str = "libnvidia-ml.so.1";

/// At most this many NVML events are taken in one `drain_events` (a storm of ECC events
/// must not keep the caller in the loop).
const MAX_EVENTS_PER_DRAIN: usize = 1024;

/// Live GPU state through NVML.
pub struct NvmlSource {
    /// Leaked in `open` and reclaimed in `Drop` (see `raw::leak`): the devices and the event
    /// set borrow it, and all three live in this struct.
    nvml: &'static Nvml,
    devices: Vec<Dev>,
    inventory: Inventory,
    events: Events,
    /// Events found while sampling (lost GPUs, processes coming and going), until drained.
    pending: Vec<GpuEvent>,
    /// (gpu, pid) of the previous sample; `None` before the first.
    previous: Option<BTreeSet<(u32, u32)>>,
    procfs: ProcFs,
    clock: Box<dyn Clock>,
    /// How long loading the library and `nvmlInit` took (the rest of `open` is per device).
    init_duration: std::time::Duration,
}

/// The Xid/ECC event set, made on the first `drain_events`.
enum Events {
    NotYet,
    /// No device supports the events: they are simply not reported.
    Unsupported,
    Registered(EventSet<'static>),
}

impl NvmlSource {
    /// Loads NVML from `library` (or the system's `libnvidia-ml.so.1`) and initialises it once.
    pub fn open(library: Option<&Path>) -> Result<Self, SourceError> {
        let looked_for =
            library.map_or_else(|| DEFAULT_LIBRARY.to_owned(), |p| p.display().to_string());
        let mut builder = Nvml::builder();
        if let Some(path) = library {
            builder.lib_path(path.as_os_str());
        }
        let started = std::time::Instant::now();
        let nvml = builder.init().map_err(|e| init_error(&looked_for, e))?;
        let init_duration = started.elapsed();
        let nvml = raw::leak(nvml);
        let mut source = NvmlSource {
            nvml,
            devices: Vec::new(),
            inventory: Inventory::default(),
            events: Events::NotYet,
            pending: Vec::new(),
            previous: None,
            procfs: ProcFs::default(),
            clock: Box::new(SystemClock),
            init_duration,
        };
        // Assigned after `source` exists so that an error below still runs `Drop`
        // (and `nvmlShutdown`).
        let count = nvml
            .device_count()
            .map_err(|e| SourceError::Driver(format!("cannot count GPUs: {e}")))?;
        source.devices = open_devices(nvml, count)?;
        source.inventory = Inventory {
            driver_version: reading(nvml.sys_driver_version()),
            nvml_version: reading(nvml.sys_nvml_version()),
            cuda_driver_version: reading(nvml.sys_cuda_driver_version()).map(format_cuda),
            devices: source.devices.iter().map(|d| d.info.clone()).collect(),
        };
        Ok(source)
    }

    /// Reads process details from another `/proc` root and passwd file (for tests, or a
    /// host `/proc` mounted into a container).
    pub fn set_procfs(&mut self, procfs: ProcFs) {
        self.procfs = procfs;
    }

    /// How long loading the library and `nvmlInit` took in [`NvmlSource::open`], for the
    /// benchmarks: the rest of `open` is the per-device handles and static facts.
    pub fn init_duration(&self) -> std::time::Duration {
        self.init_duration
    }

    /// Takes "now" from `clock` instead of the wall clock.
    pub fn set_clock(&mut self, clock: Box<dyn Clock>) {
        self.clock = clock;
    }
}

impl Drop for NvmlSource {
    fn drop(&mut self) {
        // Everything that borrows `nvml` goes first.
        self.events = Events::NotYet;
        self.devices.clear();
        // SAFETY: `nvml` came from `raw::leak` in `open`, and the event set and devices, the
        // only borrows of it, were dropped just above.
        #[allow(unsafe_code)]
        unsafe {
            raw::reclaim(self.nvml);
        }
    }
}

/// Why NVML could not be initialised, as the error the user sees.
fn init_error(looked_for: &str, e: NvmlError) -> SourceError {
    let no_driver = |reason: String| SourceError::NoDriver {
        looked_for: looked_for.to_owned(),
        reason,
    };
    match e {
        NvmlError::LibloadingError(e) => no_driver(e.to_string()),
        NvmlError::FailedToLoadSymbol(e) => {
            no_driver(format!("the library is not NVML (no nvmlInit_v2): {e}"))
        }
        NvmlError::DriverNotLoaded => {
            no_driver("the library loaded, but the NVIDIA kernel driver is not running".into())
        }
        NvmlError::LibRmVersionMismatch => SourceError::Driver(
            "driver/library version mismatch: the NVIDIA kernel module and libnvidia-ml differ \
             (typically after a driver upgrade without a reboot)"
                .into(),
        ),
        NvmlError::NoPermission => {
            SourceError::Driver("no permission to talk to the NVIDIA driver (/dev/nvidia*)".into())
        }
        other => SourceError::Driver(format!("nvmlInit failed: {other}")),
    }
}

/// A value NVML may refuse, as a [`Reading`].
pub(crate) fn reading<T>(r: Result<T, NvmlError>) -> Reading<T> {
    match r {
        Ok(v) => Reading::Value(v),
        Err(
            NvmlError::NotSupported
            | NvmlError::FailedToLoadSymbol(_)
            | NvmlError::FunctionNotFound,
        ) => Reading::Unsupported,
        Err(NvmlError::NoPermission) => Reading::NoPermission,
        Err(e) => Reading::Failed(e.to_string()),
    }
}

/// NVML's `13000` → `13.0`.
fn format_cuda(version: i32) -> String {
    format!("{}.{}", version / 1000, (version % 1000) / 10)
}

/// Every GPU's handle and static facts, the GPUs side by side: the first queries of a GPU are
/// slow on the driver's side (about 12 ms per H200 for the handle and static facts, against
/// microseconds later), and a one-shot `status` on eight GPUs should not pay that eight
/// times in a row. NVML is thread-safe and nvml-wrapper's `Device` is `Send + Sync`.
fn open_devices(nvml: &'static Nvml, count: u32) -> Result<Vec<Dev>, SourceError> {
    let open = |index: u32| {
        Dev::open(nvml, index)
            .map_err(|e| SourceError::Driver(format!("cannot open GPU {index}: {e}")))
    };
    if count <= 1 {
        return (0..count).map(open).collect();
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..count).map(|i| s.spawn(move || open(i))).collect();
        handles
            .into_iter()
            .zip(0..)
            .map(|(h, i)| {
                h.join().unwrap_or_else(|_| {
                    Err(SourceError::Driver(format!(
                        "cannot open GPU {i}: the driver call panicked"
                    )))
                })
            })
            .collect()
    })
}

/// One event set with Xid and ECC events registered on every device that supports them.
/// `None` when no device does: events are then simply not reported.
fn register_events(nvml: &'static Nvml, devices: &[Dev]) -> Option<EventSet<'static>> {
    let wanted = EventTypes::CRITICAL_XID_ERROR
        | EventTypes::SINGLE_BIT_ECC_ERROR
        | EventTypes::DOUBLE_BIT_ECC_ERROR;
    let mut set = None;
    for device in devices.iter().filter_map(|d| d.device.as_ref()) {
        let Ok(supported) = device.supported_event_types() else {
            continue;
        };
        let types = supported & wanted;
        if types.is_empty() {
            continue;
        }
        let current = match set.take() {
            Some(s) => s,
            None => nvml.create_event_set().ok()?,
        };
        // On failure nvml-wrapper frees the set, with whatever earlier devices registered;
        // start a new one for the devices still to come.
        set = device.register_events(types, current).ok();
    }
    set
}

impl GpuSource for NvmlSource {
    fn inventory(&mut self) -> Result<Inventory, SourceError> {
        Ok(self.inventory.clone())
    }

    fn sample(&mut self) -> Result<Sample, SourceError> {
        let timestamp_ms = self.clock.now_ms();
        let mut devices = Vec::with_capacity(self.devices.len());
        let mut processes = Vec::new();
        for dev in &mut self.devices {
            let DeviceRead {
                sample,
                processes: procs,
                newly_lost,
            } = dev.read();
            if let Some(reason) = newly_lost {
                self.pending.push(GpuEvent {
                    timestamp_ms,
                    gpu: GpuIndex(dev.index),
                    kind: GpuEventKind::DeviceLost { reason },
                });
            }
            devices.push(sample);
            processes.extend(procs);
        }

        let live: HashSet<u32> = processes.iter().map(|p| p.pid.0).collect();
        for p in &mut processes {
            let details = self.procfs.details(p.pid.0);
            p.user = details.user;
            p.command = details.command;
            p.container = details.container;
        }
        self.procfs.retain(&live);

        // A lost GPU lists no processes; that is not its processes exiting.
        let lost: HashSet<u32> = devices
            .iter()
            .filter(|d| matches!(d.state, DeviceState::Lost { .. }))
            .map(|d| d.index.0)
            .collect();
        let now: BTreeSet<(u32, u32)> = processes.iter().map(|p| (p.gpu.0, p.pid.0)).collect();
        if let Some(before) = &self.previous {
            for &(gpu, pid) in now.difference(before) {
                self.pending.push(GpuEvent {
                    timestamp_ms,
                    gpu: GpuIndex(gpu),
                    kind: GpuEventKind::ProcessStarted { pid: Pid(pid) },
                });
            }
            for &(gpu, pid) in before.difference(&now) {
                if !lost.contains(&gpu) {
                    self.pending.push(GpuEvent {
                        timestamp_ms,
                        gpu: GpuIndex(gpu),
                        kind: GpuEventKind::ProcessExited { pid: Pid(pid) },
                    });
                }
            }
        }
        // Remember the lost GPU's last processes, so they are not "started" again when it
        // comes back nor "exited" while it is away.
        let mut remembered = now;
        if let Some(before) = &self.previous {
            remembered.extend(before.iter().filter(|(gpu, _)| lost.contains(gpu)));
        }
        self.previous = Some(remembered);

        Ok(Sample {
            timestamp_ms,
            devices,
            processes,
        })
    }

    fn drain_events(&mut self) -> Result<Vec<GpuEvent>, SourceError> {
        let mut out = std::mem::take(&mut self.pending);
        if matches!(self.events, Events::NotYet) {
            self.events = register_events(self.nvml, &self.devices)
                .map_or(Events::Unsupported, Events::Registered);
        }
        let Events::Registered(set) = &self.events else {
            return Ok(out);
        };
        let timestamp_ms = self.clock.now_ms();
        for _ in 0..MAX_EVENTS_PER_DRAIN {
            // Timeout: nothing (more) to deliver. Any other error (the GPU is lost, the
            // driver is going away) ends this drain; lost GPUs are reported by `sample`.
            let Ok(data) = set.wait(0) else { break };
            let gpu = self
                .devices
                .iter()
                .find(|d| d.same_handle(&data.device))
                .map_or_else(|| data.device.index().unwrap_or(u32::MAX), |d| d.index);
            let kind = if let Some(xid) = data.event_data {
                let (xid, detail) = match xid {
                    nvml_wrapper::enums::event::XidError::Value(v) => {
                        (u32::try_from(v).unwrap_or(u32::MAX), None)
                    }
                    nvml_wrapper::enums::event::XidError::Unknown => {
                        (999, Some("the driver reported an unknown Xid".to_owned()))
                    }
                };
                GpuEventKind::Xid { xid, detail }
            } else if data.event_type.contains(EventTypes::DOUBLE_BIT_ECC_ERROR) {
                GpuEventKind::EccUncorrected
            } else if data.event_type.contains(EventTypes::SINGLE_BIT_ECC_ERROR) {
                GpuEventKind::EccCorrected
            } else {
                continue;
            };
            out.push(GpuEvent {
                timestamp_ms,
                gpu: GpuIndex(gpu),
                kind,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_versions_format_like_nvidia_smi() {
        assert_eq!(format_cuda(13000), "13.0");
        assert_eq!(format_cuda(12020), "12.2");
        assert_eq!(format_cuda(11080), "11.8");
    }

    #[test]
    fn errors_become_readings_not_zeros() {
        assert_eq!(
            reading::<u32>(Err(NvmlError::NotSupported)),
            Reading::Unsupported
        );
        assert_eq!(
            reading::<u32>(Err(NvmlError::FailedToLoadSymbol("x".into()))),
            Reading::Unsupported
        );
        assert_eq!(
            reading::<u32>(Err(NvmlError::NoPermission)),
            Reading::NoPermission
        );
        assert!(matches!(
            reading::<u32>(Err(NvmlError::Unknown)),
            Reading::Failed(_)
        ));
        assert_eq!(reading(Ok(0u32)), Reading::Value(0));
    }

    #[test]
    fn a_missing_library_is_no_driver_with_the_path() {
        let Err(err) = NvmlSource::open(Some(Path::new("/nonexistent/libnvidia-ml.so.1"))) else {
            panic!("opened a library that does not exist");
        };
        let SourceError::NoDriver { looked_for, reason } = &err else {
            panic!("expected NoDriver, got {err:?}");
        };
        assert_eq!(looked_for, "/nonexistent/libnvidia-ml.so.1");
        assert!(!reason.is_empty());
        assert!(err.hint().is_some());
    }
}
