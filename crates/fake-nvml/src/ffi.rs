//! The exported NVML C functions.
//!
//! Every function locks the one driver state, checks that NVML is initialised, decodes the
//! device handle, applies the scenario's configured errors (and a lost GPU), and only then
//! writes its answer through the caller's pointers, each checked for null first. Nothing here
//! panics: a panic cannot cross `extern "C"`, so failures become NVML return codes.
//!
//! Handles are not pointers to anything: a device handle is `((gpu + 1) << 12) | slot`, slot 0
//! the physical GPU and slot `k` its MIG device `k - 1`; an event-set handle is its id.

// The names are NVML's, and the signatures mirror nvml.h.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use crate::SCENARIO_ENV;
use crate::scenario::{EventKind, Gpu, Scenario, Timeline};
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

type Ret = c_uint;
type Handle = *mut c_void;

const SUCCESS: Ret = 0;
const ERROR_UNINITIALIZED: Ret = 1;
const ERROR_INVALID_ARGUMENT: Ret = 2;
const ERROR_NOT_SUPPORTED: Ret = 3;
const ERROR_NOT_FOUND: Ret = 6;
const ERROR_INSUFFICIENT_SIZE: Ret = 7;
const ERROR_DRIVER_NOT_LOADED: Ret = 9;
const ERROR_TIMEOUT: Ret = 10;
const ERROR_UNKNOWN: Ret = 999;

/// NVML's "this process's memory cannot be read" marker (`NVML_VALUE_NOT_AVAILABLE`).
const VALUE_NOT_AVAILABLE: c_ulonglong = c_ulonglong::MAX;
/// NVML writes this as the MIG instance ids of a process outside MIG.
const NO_INSTANCE: c_uint = c_uint::MAX;
/// The event types the fake can deliver: single-bit ECC, double-bit ECC, Xid.
const SUPPORTED_EVENTS: c_ulonglong = 0x1 | 0x2 | 0x8;
/// A waiting caller is never held longer than this, whatever timeout it asks for.
const MAX_WAIT: Duration = Duration::from_secs(1);

#[repr(C)]
pub struct Memory {
    total: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

#[repr(C)]
pub struct MemoryV2 {
    version: c_uint,
    total: c_ulonglong,
    reserved: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

#[repr(C)]
pub struct PciInfo {
    bus_id_legacy: [c_char; 16],
    domain: c_uint,
    bus: c_uint,
    device: c_uint,
    pci_device_id: c_uint,
    pci_sub_system_id: c_uint,
    bus_id: [c_char; 32],
}

#[repr(C)]
pub struct Utilization {
    gpu: c_uint,
    memory: c_uint,
}

#[repr(C)]
pub struct ProcessInfo {
    pid: c_uint,
    used_gpu_memory: c_ulonglong,
    gpu_instance_id: c_uint,
    compute_instance_id: c_uint,
}

#[repr(C)]
pub struct EventData {
    device: Handle,
    event_type: c_ulonglong,
    data: c_ulonglong,
    gpu_instance_id: c_uint,
    compute_instance_id: c_uint,
}

/// One event set: which GPUs registered which event types, and what it already delivered.
struct EventSet {
    /// (gpu, event-type mask)
    registered: Vec<(usize, c_ulonglong)>,
    /// Per GPU, per scenario event: delivered through this set yet?
    delivered: Vec<Vec<bool>>,
}

struct Driver {
    scenario: Scenario,
    started: Instant,
    /// Memory reads per GPU: the tick under `Timeline::Samples`.
    reads: Vec<u64>,
    event_sets: Vec<Option<EventSet>>,
}

impl Driver {
    fn tick(&self, gpu: usize) -> u64 {
        match self.scenario.timeline {
            Timeline::Samples => self.reads.get(gpu).map_or(0, |r| r.saturating_sub(1)),
            Timeline::Milliseconds => {
                u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
            }
        }
    }
}

struct Global {
    refs: u32,
    driver: Option<Driver>,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    refs: 0,
    driver: None,
});

fn lock() -> MutexGuard<'static, Global> {
    GLOBAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a device handle names.
#[derive(Clone, Copy)]
struct Target {
    gpu: usize,
    mig: Option<usize>,
}

fn encode(gpu: usize, mig: Option<usize>) -> Handle {
    let slot = mig.map_or(0, |m| m + 1);
    (((gpu + 1) << 12) | slot) as Handle
}

fn decode(handle: Handle, gpus: usize) -> Option<Target> {
    let value = handle as usize;
    let gpu = (value >> 12).checked_sub(1)?;
    if gpu >= gpus {
        return None;
    }
    let slot = value & 0xfff;
    Some(Target {
        gpu,
        mig: slot.checked_sub(1),
    })
}

/// Writes `value` through `ptr`, refusing a null pointer.
unsafe fn put<T>(ptr: *mut T, value: T) -> Result<(), Ret> {
    if ptr.is_null() {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: non-null, and the caller passed a pointer to a `T` per nvml.h.
    unsafe { ptr.write(value) };
    Ok(())
}

/// Copies `text` and a NUL into `buf` of `len` bytes.
unsafe fn put_str(buf: *mut c_char, len: c_uint, text: &str) -> Result<(), Ret> {
    if buf.is_null() {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    let bytes = text.as_bytes();
    if bytes.len() + 1 > len as usize {
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    // SAFETY: `buf` is non-null and the caller said it holds `len` bytes, which we checked.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buf, bytes.len());
        buf.add(bytes.len()).write(0);
    }
    Ok(())
}

fn fixed<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (slot, byte) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *slot = c_char::from_ne_bytes([byte]);
    }
    out
}

fn status(result: Result<(), Ret>) -> Ret {
    match result {
        Ok(()) => SUCCESS,
        Err(code) => code,
    }
}

/// Whether a function answers for MIG device handles too.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mig {
    Allowed,
    No,
}

/// The common path of every device function: initialised? a valid handle? an error the
/// scenario configured (or a lost GPU)? Then `answer` writes the result.
fn device_call(
    handle: Handle,
    function: &str,
    mig: Mig,
    counts_as_sample: bool,
    answer: impl FnOnce(&mut Driver, Target, u64) -> Result<(), Ret>,
) -> Ret {
    let mut global = lock();
    let Some(driver) = global.driver.as_mut() else {
        return ERROR_UNINITIALIZED;
    };
    let Some(target) = decode(handle, driver.scenario.gpus.len()) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if let Some(m) = target.mig {
        let instances = driver.scenario.gpus[target.gpu]
            .mig
            .as_ref()
            .map_or(0, |g| g.instances.len());
        if m >= instances {
            return ERROR_INVALID_ARGUMENT;
        }
        if mig == Mig::No {
            return ERROR_NOT_SUPPORTED;
        }
    }
    if counts_as_sample && target.mig.is_none() {
        driver.reads[target.gpu] = driver.reads[target.gpu].saturating_add(1);
    }
    let tick = driver.tick(target.gpu);
    if let Some(error) = driver.scenario.gpus[target.gpu].error_for(function, tick) {
        return error.code();
    }
    status(answer(driver, target, tick))
}

fn gpu(driver: &Driver, target: Target) -> &Gpu {
    &driver.scenario.gpus[target.gpu]
}

// ---------------------------------------------------------------------------------------
// Initialisation and the system
// ---------------------------------------------------------------------------------------

fn init() -> Ret {
    let mut global = lock();
    if global.refs > 0 {
        global.refs += 1;
        return SUCCESS;
    }
    let Some(path) = std::env::var_os(SCENARIO_ENV).filter(|p| !p.is_empty()) else {
        eprintln!("fake-nvml: set {SCENARIO_ENV} to a scenario file (see docs/fake-nvml.md)");
        return ERROR_DRIVER_NOT_LOADED;
    };
    let scenario = match Scenario::load(std::path::Path::new(&path)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fake-nvml: cannot use scenario {e}");
            return ERROR_UNKNOWN;
        }
    };
    if let Some(error) = scenario.init_error {
        return error.code();
    }
    let gpus = scenario.gpus.len();
    global.driver = Some(Driver {
        scenario,
        started: Instant::now(),
        reads: vec![0; gpus],
        event_sets: Vec::new(),
    });
    global.refs = 1;
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlInit_v2() -> Ret {
    init()
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlInit() -> Ret {
    init()
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlInitWithFlags(_flags: c_uint) -> Ret {
    init()
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlShutdown() -> Ret {
    let mut global = lock();
    if global.refs == 0 {
        return ERROR_UNINITIALIZED;
    }
    global.refs -= 1;
    if global.refs == 0 {
        global.driver = None;
    }
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlErrorString(result: Ret) -> *const c_char {
    let text: &'static std::ffi::CStr = match result {
        0 => c"Success",
        1 => c"Uninitialized",
        2 => c"Invalid Argument",
        3 => c"Not Supported",
        4 => c"Insufficient Permissions",
        6 => c"Not Found",
        7 => c"Insufficient Size",
        9 => c"Driver Not Loaded",
        10 => c"Timeout",
        15 => c"GPU is lost",
        18 => c"RM has detected an NVML/RM version mismatch.",
        _ => c"Unknown Error",
    };
    text.as_ptr()
}

fn system_call(answer: impl FnOnce(&Driver) -> Result<(), Ret>) -> Ret {
    let global = lock();
    match global.driver.as_ref() {
        Some(driver) => status(answer(driver)),
        None => ERROR_UNINITIALIZED,
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(version: *mut c_char, length: c_uint) -> Ret {
    system_call(|d| unsafe { put_str(version, length, &d.scenario.driver_version) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetNVMLVersion(version: *mut c_char, length: c_uint) -> Ret {
    system_call(|d| unsafe { put_str(version, length, &d.scenario.nvml_version) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion(version: *mut c_int) -> Ret {
    system_call(|d| unsafe { put(version, d.scenario.cuda_driver_version) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(version: *mut c_int) -> Ret {
    system_call(|d| unsafe { put(version, d.scenario.cuda_driver_version) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(count: *mut c_uint) -> Ret {
    system_call(|d| unsafe { put(count, d.scenario.gpus.len() as c_uint) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCount(count: *mut c_uint) -> Ret {
    unsafe { nvmlDeviceGetCount_v2(count) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(index: c_uint, device: *mut Handle) -> Ret {
    let global = lock();
    let Some(driver) = global.driver.as_ref() else {
        return ERROR_UNINITIALIZED;
    };
    let index = index as usize;
    let Some(gpu) = driver.scenario.gpus.get(index) else {
        return ERROR_INVALID_ARGUMENT;
    };
    if let Some(error) = gpu.error_for("nvmlDeviceGetHandleByIndex_v2", driver.tick(index)) {
        return error.code();
    }
    status(unsafe { put(device, encode(index, None)) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex(index: c_uint, device: *mut Handle) -> Ret {
    unsafe { nvmlDeviceGetHandleByIndex_v2(index, device) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByUUID(
    uuid: *const c_char,
    device: *mut Handle,
) -> Ret {
    if uuid.is_null() {
        return ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: non-null; NVML's contract is a NUL-terminated string.
    let wanted = unsafe { std::ffi::CStr::from_ptr(uuid) }.to_string_lossy();
    system_call(|d| {
        for (g, gpu) in d.scenario.gpus.iter().enumerate() {
            if gpu.uuid == wanted {
                return unsafe { put(device, encode(g, None)) };
            }
            let instances = gpu.mig.iter().flat_map(|m| m.instances.iter());
            for (m, instance) in instances.enumerate() {
                if instance.uuid == wanted {
                    return unsafe { put(device, encode(g, Some(m))) };
                }
            }
        }
        Err(ERROR_NOT_FOUND)
    })
}

// ---------------------------------------------------------------------------------------
// Static facts
// ---------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetIndex(device: Handle, index: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetIndex",
        Mig::No,
        false,
        |_, t, _| unsafe { put(index, t.gpu as c_uint) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetName(
    device: Handle,
    name: *mut c_char,
    length: c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetName",
        Mig::Allowed,
        false,
        |d, t, _| {
            let g = gpu(d, t);
            let text = match (t.mig, &g.mig) {
                (Some(m), Some(mig)) => mig.instances[m]
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{} MIG", g.name)),
                _ => g.name.clone(),
            };
            unsafe { put_str(name, length, &text) }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUUID(
    device: Handle,
    uuid: *mut c_char,
    length: c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetUUID",
        Mig::Allowed,
        false,
        |d, t, _| {
            let g = gpu(d, t);
            let text = match (t.mig, &g.mig) {
                (Some(m), Some(mig)) => mig.instances[m].uuid.as_str(),
                _ => g.uuid.as_str(),
            };
            unsafe { put_str(uuid, length, text) }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSerial(
    device: Handle,
    serial: *mut c_char,
    length: c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetSerial",
        Mig::No,
        false,
        |d, t, _| unsafe { put_str(serial, length, &gpu(d, t).serial) },
    )
}

/// Splits `DDDDDDDD:BB:DD.F` into domain, bus and device; zeros when it does not parse.
fn parse_bus_id(id: &str) -> (c_uint, c_uint, c_uint) {
    let mut parts = id.split(':');
    let domain = parts
        .next()
        .and_then(|p| c_uint::from_str_radix(p, 16).ok());
    let bus = parts
        .next()
        .and_then(|p| c_uint::from_str_radix(p, 16).ok());
    let device = parts
        .next()
        .and_then(|p| p.split('.').next())
        .and_then(|p| c_uint::from_str_radix(p, 16).ok());
    (domain.unwrap_or(0), bus.unwrap_or(0), device.unwrap_or(0))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(device: Handle, pci: *mut PciInfo) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetPciInfo_v3",
        Mig::No,
        false,
        |d, t, _| {
            let id = &gpu(d, t).pci_bus_id;
            let (domain, bus, dev) = parse_bus_id(id);
            let legacy = format!("{:04x}:{bus:02x}:{dev:02x}.0", domain & 0xffff);
            let info = PciInfo {
                bus_id_legacy: fixed(&legacy),
                domain,
                bus,
                device: dev,
                // H200 SXM, as `nvidia-smi -q` shows it.
                pci_device_id: 0x2335_10DE,
                pci_sub_system_id: 0x18BF_10DE,
                bus_id: fixed(id),
            };
            unsafe { put(pci, info) }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCudaComputeCapability(
    device: Handle,
    major: *mut c_int,
    minor: *mut c_int,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetCudaComputeCapability",
        Mig::No,
        false,
        |d, t, _| {
            let [ma, mi] = gpu(d, t).compute_capability;
            if major.is_null() || minor.is_null() {
                return Err(ERROR_INVALID_ARGUMENT);
            }
            unsafe {
                put(major, ma)?;
                put(minor, mi)
            }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTemperatureThreshold(
    device: Handle,
    kind: c_uint,
    temp: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetTemperatureThreshold",
        Mig::No,
        false,
        |d, t, _| {
            let g = gpu(d, t);
            let value = match kind {
                0 => g.temperature_shutdown_celsius,
                1 => g.temperature_slowdown_celsius,
                _ => return Err(ERROR_NOT_SUPPORTED),
            };
            unsafe { put(temp, value) }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkGeneration(
    device: Handle,
    gen_: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetMaxPcieLinkGeneration",
        Mig::No,
        false,
        |d, t, _| unsafe { put(gen_, gpu(d, t).pcie_max.generation) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkWidth(device: Handle, width: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetMaxPcieLinkWidth",
        Mig::No,
        false,
        |d, t, _| unsafe { put(width, gpu(d, t).pcie_max.width) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedEventTypes(
    device: Handle,
    types: *mut c_ulonglong,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetSupportedEventTypes",
        Mig::No,
        false,
        |_, _, _| unsafe { put(types, SUPPORTED_EVENTS) },
    )
}

// ---------------------------------------------------------------------------------------
// Readings that change
// ---------------------------------------------------------------------------------------

/// Total, reserved, used and free of a GPU or MIG device at `tick`.
fn memory(driver: &Driver, t: Target, tick: u64) -> (u64, u64, u64, u64) {
    let g = gpu(driver, t);
    if let (Some(m), Some(mig)) = (t.mig, &g.mig) {
        let inst = &mig.instances[m];
        let used = inst.memory_used_bytes.min(inst.memory_total_bytes);
        return (
            inst.memory_total_bytes,
            0,
            used,
            inst.memory_total_bytes - used,
        );
    }
    let total = g.memory_total_bytes;
    let reserved = g.memory_reserved_bytes.min(total);
    let used = driver
        .scenario
        .memory_used(t.gpu, tick)
        .min(total - reserved);
    (total, reserved, used, total - reserved - used)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo(device: Handle, out: *mut Memory) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetMemoryInfo",
        Mig::Allowed,
        true,
        |d, t, tick| {
            let (total, reserved, used, free) = memory(d, t, tick);
            // v1 has no `reserved`: it counts the driver's share as used.
            unsafe {
                put(
                    out,
                    Memory {
                        total,
                        free,
                        used: used + reserved,
                    },
                )
            }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(device: Handle, out: *mut MemoryV2) -> Ret {
    if out.is_null() {
        return ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: non-null; the caller sets `version` before the call (NVML_STRUCT_VERSION).
    let version = unsafe { (*out).version };
    if version >> 24 != 2 {
        return 25; // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
    }
    device_call(
        device,
        "nvmlDeviceGetMemoryInfo_v2",
        Mig::Allowed,
        true,
        |d, t, tick| {
            let (total, reserved, used, free) = memory(d, t, tick);
            unsafe {
                put(
                    out,
                    MemoryV2 {
                        version,
                        total,
                        reserved,
                        free,
                        used,
                    },
                )
            }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(
    device: Handle,
    out: *mut Utilization,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetUtilizationRates",
        Mig::No,
        false,
        |d, t, tick| {
            let r = gpu(d, t).readings_at(tick);
            unsafe {
                put(
                    out,
                    Utilization {
                        gpu: r.utilization_gpu_percent,
                        memory: r.utilization_memory_percent,
                    },
                )
            }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTemperature(
    device: Handle,
    sensor: c_uint,
    temp: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetTemperature",
        Mig::No,
        false,
        |d, t, tick| {
            if sensor != 0 {
                return Err(ERROR_INVALID_ARGUMENT);
            }
            unsafe { put(temp, gpu(d, t).readings_at(tick).temperature_celsius) }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerUsage(device: Handle, power: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetPowerUsage",
        Mig::No,
        false,
        |d, t, tick| unsafe { put(power, gpu(d, t).readings_at(tick).power_draw_milliwatts) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEnforcedPowerLimit(
    device: Handle,
    limit: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetEnforcedPowerLimit",
        Mig::No,
        false,
        |d, t, _| unsafe { put(limit, gpu(d, t).power_limit_milliwatts) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementLimit(
    device: Handle,
    limit: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetPowerManagementLimit",
        Mig::No,
        false,
        |d, t, _| unsafe { put(limit, gpu(d, t).power_limit_milliwatts) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetClockInfo(
    device: Handle,
    kind: c_uint,
    clock: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetClockInfo",
        Mig::No,
        false,
        |d, t, tick| {
            let r = gpu(d, t).readings_at(tick);
            let mhz = match kind {
                0 | 1 => r.clock_sm_mhz,
                2 => r.clock_memory_mhz,
                3 => 1545,
                _ => return Err(ERROR_INVALID_ARGUMENT),
            };
            unsafe { put(clock, mhz) }
        },
    )
}

fn throttle(device: Handle, function: &str, reasons: *mut c_ulonglong) -> Ret {
    device_call(device, function, Mig::No, false, |d, t, tick| unsafe {
        put(reasons, gpu(d, t).readings_at(tick).throttle_mask)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksThrottleReasons(
    device: Handle,
    reasons: *mut c_ulonglong,
) -> Ret {
    throttle(device, "nvmlDeviceGetCurrentClocksThrottleReasons", reasons)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksEventReasons(
    device: Handle,
    reasons: *mut c_ulonglong,
) -> Ret {
    throttle(device, "nvmlDeviceGetCurrentClocksEventReasons", reasons)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEccMode(
    device: Handle,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> Ret {
    device_call(device, "nvmlDeviceGetEccMode", Mig::No, false, |d, t, _| {
        let on = c_uint::from(gpu(d, t).ecc_enabled);
        if current.is_null() || pending.is_null() {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        unsafe {
            put(current, on)?;
            put(pending, on)
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTotalEccErrors(
    device: Handle,
    error_type: c_uint,
    counter_type: c_uint,
    count: *mut c_ulonglong,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetTotalEccErrors",
        Mig::No,
        false,
        |d, t, tick| {
            let g = gpu(d, t);
            if !g.ecc_enabled {
                return Err(ERROR_NOT_SUPPORTED);
            }
            let e = g.readings_at(tick).ecc;
            let value = match (error_type, counter_type) {
                (0, 0) => e.volatile_corrected,
                (1, 0) => e.volatile_uncorrected,
                (0, 1) => e.aggregate_corrected,
                (1, 1) => e.aggregate_uncorrected,
                _ => return Err(ERROR_INVALID_ARGUMENT),
            };
            unsafe { put(count, value) }
        },
    )
}

fn retired_count(g: &Gpu, tick: u64, cause: c_uint) -> Result<c_uint, Ret> {
    let r = g.readings_at(tick).retired_pages;
    match cause {
        0 => Ok(r.single_bit_ecc),
        1 => Ok(r.double_bit_ecc),
        _ => Err(ERROR_INVALID_ARGUMENT),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages(
    device: Handle,
    cause: c_uint,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
) -> Ret {
    unsafe {
        retired(
            device,
            "nvmlDeviceGetRetiredPages",
            cause,
            count,
            addresses,
            std::ptr::null_mut(),
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages_v2(
    device: Handle,
    cause: c_uint,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: *mut c_ulonglong,
) -> Ret {
    unsafe {
        retired(
            device,
            "nvmlDeviceGetRetiredPages_v2",
            cause,
            count,
            addresses,
            timestamps,
        )
    }
}

unsafe fn retired(
    device: Handle,
    function: &str,
    cause: c_uint,
    count: *mut c_uint,
    addresses: *mut c_ulonglong,
    timestamps: *mut c_ulonglong,
) -> Ret {
    device_call(device, function, Mig::No, false, |d, t, tick| {
        if count.is_null() {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let n = retired_count(gpu(d, t), tick, cause)?;
        // SAFETY: non-null.
        let room = unsafe { *count };
        unsafe { put(count, n)? };
        if room < n || addresses.is_null() {
            return if n == 0 {
                Ok(())
            } else {
                Err(ERROR_INSUFFICIENT_SIZE)
            };
        }
        for i in 0..n as usize {
            // SAFETY: the caller said the arrays hold `room` >= `n` entries.
            unsafe {
                addresses.add(i).write(0x1_0000_0000 + 0x1000 * i as u64);
                if !timestamps.is_null() {
                    timestamps.add(i).write(1_764_000_000 + i as u64);
                }
            }
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPagesPendingStatus(
    device: Handle,
    pending: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetRetiredPagesPendingStatus",
        Mig::No,
        false,
        |d, t, tick| unsafe {
            put(
                pending,
                c_uint::from(gpu(d, t).readings_at(tick).retired_pages.pending),
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    device: Handle,
    corr: *mut c_uint,
    unc: *mut c_uint,
    pending: *mut c_uint,
    failure: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetRemappedRows",
        Mig::No,
        false,
        |d, t, tick| {
            if corr.is_null() || unc.is_null() || pending.is_null() || failure.is_null() {
                return Err(ERROR_INVALID_ARGUMENT);
            }
            let r = gpu(d, t).readings_at(tick).remapped_rows;
            unsafe {
                put(corr, r.correctable)?;
                put(unc, r.uncorrectable)?;
                put(pending, c_uint::from(r.pending))?;
                put(failure, c_uint::from(r.failure))
            }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkGeneration(
    device: Handle,
    gen_: *mut c_uint,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetCurrPcieLinkGeneration",
        Mig::No,
        false,
        |d, t, tick| unsafe { put(gen_, gpu(d, t).readings_at(tick).pcie_link.generation) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkWidth(device: Handle, width: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetCurrPcieLinkWidth",
        Mig::No,
        false,
        |d, t, tick| unsafe { put(width, gpu(d, t).readings_at(tick).pcie_link.width) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPersistenceMode(device: Handle, mode: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetPersistenceMode",
        Mig::No,
        false,
        |d, t, _| unsafe { put(mode, c_uint::from(gpu(d, t).persistence_mode)) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeMode(device: Handle, mode: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetComputeMode",
        Mig::No,
        false,
        |d, t, _| unsafe { put(mode, gpu(d, t).compute_mode.code()) },
    )
}

// ---------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------

unsafe fn processes(
    device: Handle,
    function: &str,
    graphics: bool,
    count: *mut c_uint,
    infos: *mut ProcessInfo,
) -> Ret {
    device_call(device, function, Mig::Allowed, false, |d, t, tick| {
        if count.is_null() {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let mig_gi = match (t.mig, &gpu(d, t).mig) {
            (Some(m), Some(mig)) => Some(mig.instances[m].gpu_instance_id),
            _ => None,
        };
        let list: Vec<ProcessInfo> = d
            .scenario
            .processes_at(t.gpu, tick, graphics)
            .filter(|p| mig_gi.is_none() || p.gpu_instance_id == mig_gi)
            .filter_map(|p| Some((p, p.current_pid()?)))
            .map(|(p, pid)| ProcessInfo {
                pid,
                used_gpu_memory: p.memory_at(tick).unwrap_or(VALUE_NOT_AVAILABLE),
                gpu_instance_id: p.gpu_instance_id.unwrap_or(NO_INSTANCE),
                compute_instance_id: p.compute_instance_id.unwrap_or(NO_INSTANCE),
            })
            .collect();
        // SAFETY: non-null.
        let room = unsafe { *count } as usize;
        unsafe { put(count, list.len() as c_uint)? };
        if list.is_empty() {
            return Ok(());
        }
        if infos.is_null() || room < list.len() {
            return Err(ERROR_INSUFFICIENT_SIZE);
        }
        for (i, info) in list.into_iter().enumerate() {
            // SAFETY: the caller said `infos` holds `room` >= `len` entries.
            unsafe { infos.add(i).write(info) };
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    device: Handle,
    count: *mut c_uint,
    infos: *mut ProcessInfo,
) -> Ret {
    unsafe {
        processes(
            device,
            "nvmlDeviceGetComputeRunningProcesses_v3",
            false,
            count,
            infos,
        )
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v3(
    device: Handle,
    count: *mut c_uint,
    infos: *mut ProcessInfo,
) -> Ret {
    unsafe {
        processes(
            device,
            "nvmlDeviceGetGraphicsRunningProcesses_v3",
            true,
            count,
            infos,
        )
    }
}

// ---------------------------------------------------------------------------------------
// MIG
// ---------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: Handle,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> Ret {
    device_call(device, "nvmlDeviceGetMigMode", Mig::No, false, |d, t, _| {
        if current.is_null() || pending.is_null() {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let (now, next) = gpu(d, t).mig.as_ref().map_or((false, false), |m| {
            (m.enabled, m.pending.unwrap_or(m.enabled))
        });
        unsafe {
            put(current, c_uint::from(now))?;
            put(pending, c_uint::from(next))
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(device: Handle, count: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetMaxMigDeviceCount",
        Mig::No,
        false,
        |d, t, _| {
            let n = gpu(d, t)
                .mig
                .as_ref()
                .map_or(0, |m| m.max_devices.unwrap_or(m.instances.len() as c_uint));
            unsafe { put(count, n) }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: Handle,
    index: c_uint,
    mig_device: *mut Handle,
) -> Ret {
    device_call(
        device,
        "nvmlDeviceGetMigDeviceHandleByIndex",
        Mig::No,
        false,
        |d, t, _| {
            let Some(mig) = gpu(d, t).mig.as_ref().filter(|m| m.enabled) else {
                return Err(ERROR_INVALID_ARGUMENT);
            };
            let index = index as usize;
            if index < mig.instances.len() {
                unsafe { put(mig_device, encode(t.gpu, Some(index))) }
            } else if index < mig.max_devices.unwrap_or(0) as usize {
                Err(ERROR_NOT_FOUND)
            } else {
                Err(ERROR_INVALID_ARGUMENT)
            }
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceIsMigDeviceHandle(device: Handle, is_mig: *mut c_uint) -> Ret {
    device_call(
        device,
        "nvmlDeviceIsMigDeviceHandle",
        Mig::Allowed,
        false,
        |_, t, _| unsafe { put(is_mig, c_uint::from(t.mig.is_some())) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDeviceHandleFromMigDeviceHandle(
    mig_device: Handle,
    device: *mut Handle,
) -> Ret {
    device_call(
        mig_device,
        "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
        Mig::Allowed,
        false,
        |_, t, _| {
            if t.mig.is_none() {
                return Err(ERROR_INVALID_ARGUMENT);
            }
            unsafe { put(device, encode(t.gpu, None)) }
        },
    )
}

fn instance_id(device: Handle, function: &str, compute: bool, id: *mut c_uint) -> Ret {
    device_call(device, function, Mig::Allowed, false, |d, t, _| {
        let (Some(m), Some(mig)) = (t.mig, &gpu(d, t).mig) else {
            return Err(ERROR_NOT_SUPPORTED);
        };
        let inst = &mig.instances[m];
        let value = if compute {
            inst.compute_instance_id
        } else {
            inst.gpu_instance_id
        };
        unsafe { put(id, value) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceId(device: Handle, id: *mut c_uint) -> Ret {
    instance_id(device, "nvmlDeviceGetGpuInstanceId", false, id)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeInstanceId(device: Handle, id: *mut c_uint) -> Ret {
    instance_id(device, "nvmlDeviceGetComputeInstanceId", true, id)
}

// ---------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetCreate(set: *mut Handle) -> Ret {
    if set.is_null() {
        return ERROR_INVALID_ARGUMENT;
    }
    let mut global = lock();
    let Some(driver) = global.driver.as_mut() else {
        return ERROR_UNINITIALIZED;
    };
    let delivered = driver
        .scenario
        .gpus
        .iter()
        .map(|g| vec![false; g.events.len()])
        .collect();
    driver.event_sets.push(Some(EventSet {
        registered: Vec::new(),
        delivered,
    }));
    let id = driver.event_sets.len();
    status(unsafe { put(set, id as Handle) })
}

fn event_set(driver: &mut Driver, set: Handle) -> Option<&mut EventSet> {
    let id = (set as usize).checked_sub(1)?;
    driver.event_sets.get_mut(id)?.as_mut()
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlDeviceRegisterEvents(device: Handle, types: c_ulonglong, set: Handle) -> Ret {
    device_call(
        device,
        "nvmlDeviceRegisterEvents",
        Mig::No,
        false,
        |d, t, _| {
            if types & !SUPPORTED_EVENTS != 0 {
                return Err(ERROR_NOT_SUPPORTED);
            }
            let set = event_set(d, set).ok_or(ERROR_INVALID_ARGUMENT)?;
            set.registered.push((t.gpu, types));
            Ok(())
        },
    )
}

/// The next event due on a GPU registered with `set`, earliest tick first; marks it delivered.
fn next_event(driver: &mut Driver, set: Handle) -> Result<Option<EventData>, Ret> {
    let ticks: Vec<u64> = (0..driver.scenario.gpus.len())
        .map(|g| driver.tick(g))
        .collect();
    let Driver {
        scenario,
        event_sets,
        ..
    } = driver;
    let id = (set as usize)
        .checked_sub(1)
        .ok_or(ERROR_INVALID_ARGUMENT)?;
    let set = event_sets
        .get_mut(id)
        .and_then(Option::as_mut)
        .ok_or(ERROR_INVALID_ARGUMENT)?;
    let mut best: Option<(u64, usize, usize)> = None;
    for &(g, mask) in &set.registered {
        for (i, event) in scenario.gpus[g].events.iter().enumerate() {
            let due = event.at <= ticks[g] && event.kind.bit() & mask != 0;
            if due && !set.delivered[g][i] && best.is_none_or(|(at, _, _)| event.at < at) {
                best = Some((event.at, g, i));
            }
        }
    }
    Ok(best.map(|(_, g, i)| {
        set.delivered[g][i] = true;
        let event = scenario.gpus[g].events[i];
        EventData {
            device: encode(g, None),
            event_type: event.kind.bit(),
            data: if event.kind == EventKind::Xid {
                event.xid.unwrap_or(999)
            } else {
                0
            },
            gpu_instance_id: NO_INSTANCE,
            compute_instance_id: NO_INSTANCE,
        }
    }))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    set: Handle,
    data: *mut EventData,
    timeout_ms: c_uint,
) -> Ret {
    if data.is_null() {
        return ERROR_INVALID_ARGUMENT;
    }
    let deadline = Instant::now() + Duration::from_millis(timeout_ms.into()).min(MAX_WAIT);
    loop {
        {
            let mut global = lock();
            let Some(driver) = global.driver.as_mut() else {
                return ERROR_UNINITIALIZED;
            };
            match next_event(driver, set) {
                Ok(Some(event)) => return status(unsafe { put(data, event) }),
                Ok(None) => {}
                Err(code) => return code,
            }
        }
        // Only a millisecond timeline can make an event due while we wait.
        if Instant::now() >= deadline {
            return ERROR_TIMEOUT;
        }
        std::thread::sleep(Duration::from_millis(5).min(deadline - Instant::now()));
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlEventSetFree(set: Handle) -> Ret {
    let mut global = lock();
    let Some(driver) = global.driver.as_mut() else {
        return ERROR_UNINITIALIZED;
    };
    let Some(id) = (set as usize).checked_sub(1) else {
        return ERROR_INVALID_ARGUMENT;
    };
    match driver.event_sets.get_mut(id) {
        Some(slot @ Some(_)) => {
            *slot = None;
            SUCCESS
        }
        _ => ERROR_INVALID_ARGUMENT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip() {
        let t = decode(encode(3, Some(2)), 8).unwrap();
        assert_eq!((t.gpu, t.mig), (3, Some(2)));
        let t = decode(encode(0, None), 1).unwrap();
        assert_eq!((t.gpu, t.mig), (0, None));
        assert!(decode(encode(8, None), 8).is_none());
        assert!(decode(std::ptr::null_mut(), 8).is_none());
    }

    #[test]
    fn bus_ids_parse() {
        assert_eq!(parse_bus_id("00000000:18:00.0"), (0, 0x18, 0));
        assert_eq!(parse_bus_id("00000001:9A:1f.0"), (1, 0x9a, 0x1f));
        assert_eq!(parse_bus_id("junk"), (0, 0, 0));
    }

    #[test]
    fn strings_respect_the_buffer() {
        let mut buf = [1 as c_char; 4];
        assert_eq!(
            unsafe { put_str(buf.as_mut_ptr(), 4, "abcd") },
            Err(ERROR_INSUFFICIENT_SIZE)
        );
        assert_eq!(unsafe { put_str(buf.as_mut_ptr(), 4, "abc") }, Ok(()));
        assert_eq!(buf[3], 0);
        assert_eq!(
            unsafe { put_str(std::ptr::null_mut(), 4, "a") },
            Err(ERROR_INVALID_ARGUMENT)
        );
    }
}
