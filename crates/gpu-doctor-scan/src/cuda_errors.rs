//! The CUDA runtime errors that show up in job output: number, names, the text
//! `cudaGetErrorString` prints, and whether the error is sticky (the CUDA context is
//! corrupted and the process must be restarted).
//!
//! Numbers are the current `cudaError_t` values (`driver_types.h`, CUDA 10+). The driver API
//! uses the same numbers for these errors. Older runtimes numbered some differently (CUDA
//! ≤9: device assert 59, illegal address 77), so the message text is matched first.

/// One CUDA error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaErrorEntry {
    pub code: u32,
    pub runtime_name: &'static str,
    pub driver_name: &'static str,
    pub message: &'static str,
    /// The context is unusable afterwards: every later CUDA call fails; restart the process.
    pub sticky: bool,
    /// The message is specific enough to recognise without other CUDA words on the line.
    pub distinctive: bool,
}

const fn e(
    code: u32,
    runtime_name: &'static str,
    driver_name: &'static str,
    message: &'static str,
    sticky: bool,
    distinctive: bool,
) -> CudaErrorEntry {
    CudaErrorEntry {
        code,
        runtime_name,
        driver_name,
        message,
        sticky,
        distinctive,
    }
}

/// The table. Sources: CUDA runtime API `cudaError` enum documentation
/// (<https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html>), whose notes
/// on 700, 710 and 714–719 say the process must be terminated and relaunched.
pub const CUDA_ERRORS: &[CudaErrorEntry] = &[
    e(
        1,
        "cudaErrorInvalidValue",
        "CUDA_ERROR_INVALID_VALUE",
        "invalid argument",
        false,
        false,
    ),
    e(
        2,
        "cudaErrorMemoryAllocation",
        "CUDA_ERROR_OUT_OF_MEMORY",
        "out of memory",
        false,
        false,
    ),
    e(
        3,
        "cudaErrorInitializationError",
        "CUDA_ERROR_NOT_INITIALIZED",
        "initialization error",
        false,
        false,
    ),
    e(
        4,
        "cudaErrorCudartUnloading",
        "CUDA_ERROR_DEINITIALIZED",
        "driver shutting down",
        false,
        false,
    ),
    e(
        9,
        "cudaErrorInvalidConfiguration",
        "CUDA_ERROR_INVALID_CONFIGURATION",
        "invalid configuration argument",
        false,
        true,
    ),
    e(
        34,
        "cudaErrorStubLibrary",
        "CUDA_ERROR_STUB_LIBRARY",
        "CUDA driver is a stub library",
        false,
        true,
    ),
    e(
        35,
        "cudaErrorInsufficientDriver",
        "CUDA_ERROR_INSUFFICIENT_DRIVER",
        "CUDA driver version is insufficient for CUDA runtime version",
        false,
        true,
    ),
    e(
        36,
        "cudaErrorCallRequiresNewerDriver",
        "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
        "API call is not supported in the installed CUDA driver",
        false,
        true,
    ),
    e(
        46,
        "cudaErrorDevicesUnavailable",
        "CUDA_ERROR_DEVICES_UNAVAILABLE",
        "all CUDA-capable devices are busy or unavailable",
        false,
        true,
    ),
    e(
        98,
        "cudaErrorInvalidDeviceFunction",
        "CUDA_ERROR_INVALID_DEVICE_FUNCTION",
        "invalid device function",
        false,
        false,
    ),
    e(
        100,
        "cudaErrorNoDevice",
        "CUDA_ERROR_NO_DEVICE",
        "no CUDA-capable device is detected",
        false,
        true,
    ),
    e(
        101,
        "cudaErrorInvalidDevice",
        "CUDA_ERROR_INVALID_DEVICE",
        "invalid device ordinal",
        false,
        true,
    ),
    e(
        201,
        "cudaErrorDeviceUninitialized",
        "CUDA_ERROR_INVALID_CONTEXT",
        "invalid device context",
        false,
        false,
    ),
    e(
        209,
        "cudaErrorNoKernelImageForDevice",
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
        "no kernel image is available for execution on the device",
        false,
        true,
    ),
    e(
        214,
        "cudaErrorECCUncorrectable",
        "CUDA_ERROR_ECC_UNCORRECTABLE",
        "uncorrectable ECC error encountered",
        true,
        true,
    ),
    e(
        217,
        "cudaErrorPeerAccessUnsupported",
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        "peer access is not supported between these two devices",
        false,
        true,
    ),
    e(
        218,
        "cudaErrorInvalidPtx",
        "CUDA_ERROR_INVALID_PTX",
        "a PTX JIT compilation failed",
        false,
        true,
    ),
    e(
        222,
        "cudaErrorUnsupportedPtxVersion",
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        "the provided PTX was compiled with an unsupported toolchain",
        false,
        true,
    ),
    // The driver's call into the operating system failed, or the OS does not offer it: a
    // compatibility layer (WSL, a FreeBSD shim) or a sandbox between the job and the driver.
    e(
        304,
        "cudaErrorOperatingSystem",
        "CUDA_ERROR_OPERATING_SYSTEM",
        "OS call failed or operation not supported on this OS",
        false,
        true,
    ),
    e(
        400,
        "cudaErrorInvalidResourceHandle",
        "CUDA_ERROR_INVALID_HANDLE",
        "invalid resource handle",
        false,
        true,
    ),
    e(
        600,
        "cudaErrorNotReady",
        "CUDA_ERROR_NOT_READY",
        "device not ready",
        false,
        false,
    ),
    e(
        700,
        "cudaErrorIllegalAddress",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "an illegal memory access was encountered",
        true,
        true,
    ),
    e(
        701,
        "cudaErrorLaunchOutOfResources",
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        "too many resources requested for launch",
        false,
        true,
    ),
    e(
        702,
        "cudaErrorLaunchTimeout",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        "the launch timed out and was terminated",
        true,
        true,
    ),
    e(
        704,
        "cudaErrorPeerAccessAlreadyEnabled",
        "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
        "peer access is already enabled",
        false,
        true,
    ),
    e(
        705,
        "cudaErrorPeerAccessNotEnabled",
        "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
        "peer access has not been enabled",
        false,
        true,
    ),
    e(
        710,
        "cudaErrorAssert",
        "CUDA_ERROR_ASSERT",
        "device-side assert triggered",
        true,
        true,
    ),
    e(
        714,
        "cudaErrorHardwareStackError",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "hardware stack error",
        true,
        true,
    ),
    e(
        715,
        "cudaErrorIllegalInstruction",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "an illegal instruction was encountered",
        true,
        true,
    ),
    e(
        716,
        "cudaErrorMisalignedAddress",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "misaligned address",
        true,
        true,
    ),
    e(
        717,
        "cudaErrorInvalidAddressSpace",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "operation not supported on global/shared address space",
        true,
        true,
    ),
    e(
        718,
        "cudaErrorInvalidPc",
        "CUDA_ERROR_INVALID_PC",
        "invalid program counter",
        true,
        true,
    ),
    e(
        719,
        "cudaErrorLaunchFailure",
        "CUDA_ERROR_LAUNCH_FAILED",
        "unspecified launch failure",
        true,
        true,
    ),
    // CUDA graph capture (900-908). Before 800: 900's message starts with 800's, and the
    // first entry whose message a line holds wins.
    e(
        900,
        "cudaErrorStreamCaptureUnsupported",
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
        "operation not permitted when stream is capturing",
        false,
        true,
    ),
    e(
        901,
        "cudaErrorStreamCaptureInvalidated",
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
        "operation failed due to a previous error during capture",
        false,
        true,
    ),
    e(
        902,
        "cudaErrorStreamCaptureMerge",
        "CUDA_ERROR_STREAM_CAPTURE_MERGE",
        "operation would result in a merge of separate capture sequences",
        false,
        true,
    ),
    e(
        903,
        "cudaErrorStreamCaptureUnmatched",
        "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
        "capture was not ended in the same stream as it began",
        false,
        true,
    ),
    e(
        904,
        "cudaErrorStreamCaptureUnjoined",
        "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
        "capturing stream has unjoined work",
        false,
        true,
    ),
    e(
        905,
        "cudaErrorStreamCaptureIsolation",
        "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
        "dependency created on uncaptured work in another stream",
        false,
        true,
    ),
    e(
        906,
        "cudaErrorStreamCaptureImplicit",
        "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
        "operation would make the legacy stream depend on a capturing blocking stream",
        false,
        true,
    ),
    e(
        907,
        "cudaErrorCapturedEvent",
        "CUDA_ERROR_CAPTURED_EVENT",
        "operation not permitted on an event last recorded in a capturing stream",
        false,
        true,
    ),
    e(
        908,
        "cudaErrorStreamCaptureWrongThread",
        "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
        "attempt to terminate a thread-local capture sequence from another thread",
        false,
        true,
    ),
    e(
        800,
        "cudaErrorNotPermitted",
        "CUDA_ERROR_NOT_PERMITTED",
        "operation not permitted",
        false,
        false,
    ),
    e(
        803,
        "cudaErrorSystemDriverMismatch",
        "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        "system has unsupported display driver / cuda driver combination",
        false,
        true,
    ),
    e(
        804,
        "cudaErrorCompatNotSupportedOnDevice",
        "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        "forward compatibility was attempted on non supported HW",
        false,
        true,
    ),
    e(
        999,
        "cudaErrorUnknown",
        "CUDA_ERROR_UNKNOWN",
        "unknown error",
        true,
        false,
    ),
];

/// Finds an entry by runtime or driver name, or by number.
pub fn lookup_cuda_error(name_or_code: &str) -> Option<&'static CudaErrorEntry> {
    if let Ok(code) = name_or_code.parse::<u32>() {
        return CUDA_ERRORS.iter().find(|e| e.code == code);
    }
    CUDA_ERRORS
        .iter()
        .find(|e| e.runtime_name == name_or_code || e.driver_name == name_or_code)
}

/// CUDA ≤9 numbered a few errors differently; `cuda runtime error (59)` is a device assert
/// there. Maps those old numbers to today's entries.
pub(crate) fn legacy_code(code: u32) -> Option<u32> {
    Some(match code {
        59 => 710,
        77 => 700,
        74 => 716,
        4 => 719,
        38 => 100,
        10 => 101,
        48 => 209,
        30 => 999,
        _ => return None,
    })
}
