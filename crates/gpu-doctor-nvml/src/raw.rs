//! The few NVML calls nvml-wrapper 0.13 does not wrap, and giving the leaked `Nvml` back.
//!
//! nvml-wrapper has no `nvmlDeviceGetRemappedRows`, no MIG instance ids and only the v2 memory
//! query; gpu-doctor needs them (row remapping is how Ampere and later GPUs report failing memory, and v1
//! memory info is all that older drivers have). They are called here through nvml-wrapper's
//! own loaded symbol table, so no second `dlopen` happens. This is the only module of the
//! crate with `unsafe`; each block says why it holds.
#![allow(unsafe_code)]

use gpu_doctor_model::RemappedRows;
use nvml_wrapper::error::{NvmlError, nvml_try};
use nvml_wrapper::{Device, Nvml};
use std::ffi::c_uint;

fn missing(e: &impl std::fmt::Display) -> NvmlError {
    NvmlError::FailedToLoadSymbol(e.to_string())
}

/// `nvmlDeviceGetMemoryInfo` (v1): total, free and used bytes; used includes what the
/// driver reserves.
pub(crate) fn memory_info_v1(device: &Device<'_>) -> Result<(u64, u64, u64), NvmlError> {
    let sym = device
        .nvml()
        .lib()
        .nvmlDeviceGetMemoryInfo
        .as_ref()
        .map_err(missing)?;
    let mut memory = nvml_wrapper_sys::bindings::nvmlMemory_t {
        total: 0,
        free: 0,
        used: 0,
    };
    // SAFETY: the symbol was resolved from the library `device` came from; the handle is
    // live while `device` borrows its `Nvml`; `memory` is a valid, writable nvmlMemory_t.
    let code = unsafe { sym(device.handle(), &raw mut memory) };
    nvml_try(code)?;
    Ok((memory.total, memory.free, memory.used))
}

/// `nvmlDeviceGetRemappedRows`: correctable and uncorrectable remapped rows, whether a remap
/// is pending and whether one failed.
pub(crate) fn remapped_rows(device: &Device<'_>) -> Result<RemappedRows, NvmlError> {
    let sym = device
        .nvml()
        .lib()
        .nvmlDeviceGetRemappedRows
        .as_ref()
        .map_err(missing)?;
    let (mut corr, mut unc, mut pending, mut failure): (c_uint, c_uint, c_uint, c_uint) =
        (0, 0, 0, 0);
    // SAFETY: as above; the four out-pointers are distinct, valid, writable c_uints.
    let code = unsafe {
        sym(
            device.handle(),
            &raw mut corr,
            &raw mut unc,
            &raw mut pending,
            &raw mut failure,
        )
    };
    nvml_try(code)?;
    Ok(RemappedRows {
        correctable: corr.into(),
        uncorrectable: unc.into(),
        pending: pending != 0,
        failure: failure != 0,
    })
}

/// `nvmlDeviceGetGpuInstanceId` or `nvmlDeviceGetComputeInstanceId` of a MIG device handle.
fn instance_id(device: &Device<'_>, compute: bool) -> Result<u32, NvmlError> {
    let lib = device.nvml().lib();
    let sym = if compute {
        lib.nvmlDeviceGetComputeInstanceId.as_ref()
    } else {
        lib.nvmlDeviceGetGpuInstanceId.as_ref()
    }
    .map_err(missing)?;
    let mut id: c_uint = 0;
    // SAFETY: as above; `id` is a valid, writable c_uint.
    let code = unsafe { sym(device.handle(), &raw mut id) };
    nvml_try(code)?;
    Ok(id)
}

/// The GPU instance id of a MIG device handle (nvml-wrapper 0.13 does not wrap it).
pub(crate) fn gpu_instance_id(device: &Device<'_>) -> Result<u32, NvmlError> {
    instance_id(device, false)
}

/// The compute instance id of a MIG device handle.
pub(crate) fn compute_instance_id(device: &Device<'_>) -> Result<u32, NvmlError> {
    instance_id(device, true)
}

/// Leaks `nvml` so devices and the event set, which borrow it, can live beside it in one
/// struct. Paired with [`reclaim`].
pub(crate) fn leak(nvml: Nvml) -> &'static Nvml {
    Box::leak(Box::new(nvml))
}

/// Drops an `Nvml` made by [`leak`], which shuts NVML down and unloads the library.
///
/// # Safety
///
/// `nvml` must come from [`leak`], and nothing borrowing it (devices, event sets) may be used
/// after this call.
pub(crate) unsafe fn reclaim(nvml: &'static Nvml) {
    // SAFETY: the caller guarantees `nvml` is the unique leaked Box and no borrow outlives it.
    drop(unsafe { Box::from_raw(std::ptr::from_ref(nvml).cast_mut()) });
}

/// Whether two `Device`s are the same NVML handle (an event names its device by handle).
pub(crate) fn same_handle(a: &Device<'_>, b: &Device<'_>) -> bool {
    // SAFETY: the handles are only compared, never dereferenced or passed to NVML.
    unsafe { a.handle() == b.handle() }
}
