//! NvmlSource: live GPU state through nvml-wrapper; the only crate that touches the driver.

use gpu_doctor_model::{GpuEvent, Inventory, Sample};
use gpu_doctor_source::{GpuSource, SourceError};
use std::path::Path;

/// Live GPU state through NVML (being built).
pub struct NvmlSource {}

impl NvmlSource {
    /// Loads NVML from `library` (or the system's `libnvidia-ml.so.1`) and initialises it once.
    pub fn open(library: Option<&Path>) -> Result<Self, SourceError> {
        Err(SourceError::NoDriver {
            looked_for: library.map_or("libnvidia-ml.so.1".into(), |p| p.display().to_string()),
            reason: "not built yet".into(),
        })
    }
}

impl GpuSource for NvmlSource {
    fn inventory(&mut self) -> Result<Inventory, SourceError> {
        Err(SourceError::Driver("not built yet".into()))
    }
    fn sample(&mut self) -> Result<Sample, SourceError> {
        Err(SourceError::Driver("not built yet".into()))
    }
    fn drain_events(&mut self) -> Result<Vec<GpuEvent>, SourceError> {
        Ok(Vec::new())
    }
}
