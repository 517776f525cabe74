//! Plain data shared by every gpu-doctor crate.
//!
//! This crate owns the vocabulary: ids ([`GpuIndex`], [`GpuUuid`], [`Pid`]), the
//! [`Reading`] of a metric that may be absent, what a GPU source yields ([`Inventory`],
//! [`Sample`], [`GpuEvent`]) and what the rules produce ([`Finding`]). It does no I/O, so
//! every other crate can depend on it without pulling in a driver, a file or a clock.

mod clock;
mod finding;
pub mod history;
mod ids;
mod reading;
mod sample;
pub mod units;

pub use clock::{Clock, SystemClock};
pub use finding::{Cause, Evidence, Finding, Remedy, RuleCode, Severity};
pub use ids::{GpuIndex, GpuUuid, Pid};
pub use reading::Reading;
pub use sample::{
    ComputeCapability, DeviceInfo, DeviceSample, DeviceState, EccCounts, GpuEvent, GpuEventKind,
    Inventory, MigInstance, PcieLink, ProcessKind, ProcessSample, RemappedRows, RetiredPages,
    Sample, ThrottleReason,
};

/// Version of every JSON document gpu-doctor writes (`status --json`, recordings, ...).
/// Bumped when a field changes meaning or disappears; adding a field does not bump it.
pub const SCHEMA_VERSION: u32 = 1;
