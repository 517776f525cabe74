//! Newtypes for the ids that are easy to mix up: a GPU's index, its UUID and a process id.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The index NVML gives a GPU (0-based, PCI bus order), not the CUDA ordinal, which
/// `CUDA_VISIBLE_DEVICES` and `CUDA_DEVICE_ORDER` can renumber.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct GpuIndex(pub u32);

/// A GPU's UUID as NVML prints it (`GPU-xxxxxxxx-...`; `MIG-...` for a MIG instance).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GpuUuid(pub String);

/// An operating-system process id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Pid(pub u32);

impl fmt::Display for GpuIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for GpuUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
