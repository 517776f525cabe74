//! A stand-in `libnvidia-ml.so`, driven by a scenario file, so tests run the real NVML code
//! path (nvml-wrapper, `dlopen`, the C ABI) on a machine without a GPU.
//!
//! Load it through `GPU_DOCTOR_NVML_LIB=target/<profile>/libfake_nvml.so` and name the
//! scenario in `FAKE_NVML_SCENARIO`. The scenario is read by `nvmlInit`; its format, and
//! which NVML functions are answered, are in `docs/fake-nvml.md`.
//!
//! The crate owns two things: [`scenario`], the pure model of what the driver answers at each
//! tick, and `ffi`, the exported C functions that translate those answers into NVML's
//! structs and return codes. Functions that are not exported are reported by nvml-wrapper as
//! "failed to load symbol", which gpu-doctor treats like `NOT_SUPPORTED`.

// Exporting a C ABI means receiving raw pointers from the caller: there is no way to write
// an NVML stand-in without `unsafe`. It is confined to `ffi`, where every exported function
// checks each pointer for null before writing through it.
#![allow(unsafe_code)]

mod ffi;
pub mod scenario;

pub use scenario::Scenario;

/// The environment variable naming the scenario file.
pub const SCENARIO_ENV: &str = "FAKE_NVML_SCENARIO";
