//! The seam between where GPU facts come from and what is done with them.
//!
//! [`GpuSource`] is implemented by the live NVML backend (in `gpu-doctor-nvml`) and by
//! [`ReplaySource`], which plays back a recording written by [`RecordingWriter`]. Commands
//! only ever see the trait, so every command runs the same on a live GPU, on the stand-in
//! driver and on a recording (`--source replay:FILE`).

mod recording;

pub use recording::{RecordLine, RecordingHeader, RecordingWriter, ReplaySource};

use gpu_doctor_model::{GpuEvent, Inventory, Sample};

/// A source of GPU facts. Per-field failures are data ([`gpu_doctor_model::Reading`]);
/// `Err` means the whole source is unusable.
pub trait GpuSource: Send {
    /// The machine's GPUs and driver. Cheap after the first call.
    fn inventory(&mut self) -> Result<Inventory, SourceError>;
    /// One reading of every device and process.
    fn sample(&mut self) -> Result<Sample, SourceError>;
    /// Events (Xid, ECC, lost GPUs, processes coming and going) since the last call.
    fn drain_events(&mut self) -> Result<Vec<GpuEvent>, SourceError>;
}

/// Why a source cannot be used at all. Each variant carries a hint a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("could not load the NVIDIA driver library ({looked_for}): {reason}")]
    NoDriver { looked_for: String, reason: String },
    #[error("NVML failed: {0}")]
    Driver(String),
    #[error("cannot read recording {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("recording {path}, line {line}: {reason}")]
    Corrupt {
        path: String,
        line: u64,
        reason: String,
    },
    #[error("the recording has no more samples")]
    Exhausted,
}

impl SourceError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            SourceError::NoDriver { .. } => Some(
                "install the NVIDIA driver (e.g. `apt install nvidia-driver-580` or your distribution's package) \
                 and check `nvidia-smi` works; in a container, run it with the NVIDIA container toolkit \
                 (`--gpus all`); to read a recording instead, pass `--source replay:FILE`",
            ),
            SourceError::Driver(_) => {
                Some("check `nvidia-smi` and the kernel log (`gpu-doctor explain --kernel`)")
            }
            SourceError::Corrupt { .. } => Some(
                "the file is not a complete gpu-doctor recording; a recorder that was killed leaves \
                 every line before the last intact, so re-record or cut the broken line",
            ),
            SourceError::Io { .. } | SourceError::Exhausted => None,
        }
    }
}
