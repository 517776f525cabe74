//! Reader and analyses for torch CUDA memory snapshots
//! (`torch.cuda.memory._dump_snapshot()`).
//!
//! This crate owns turning a snapshot pickle into typed facts ([`read_snapshot`] →
//! [`Snapshot`]) and the analyses on them ([`analyze`] → [`Analysis`]: fragmentation, the OOM
//! moment, allocation sites, leak candidates, memory over time; [`diff`] between two). It does
//! not diagnose (the rules crate turns these numbers into findings) and does no rendering
//! besides the self-contained HTML page ([`html`]).

mod error;
mod input;
mod memo;
pub mod model;
mod reader;

pub use error::SnapshotError;
pub use model::*;
pub use reader::{Limits, read_snapshot};

use std::path::Path;

/// Reads a snapshot file with the default [`Limits`].
pub fn read_file(path: &Path, progress: &mut dyn FnMut(u64)) -> Result<Snapshot, SnapshotError> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata().ok().map(|m| m.len());
    read_snapshot(file, len, Limits::default(), progress)
}

mod analysis;
pub mod html;

pub use analysis::{
    Analysis, AnalyzeOptions, Bucket, Fragmentation, LeakCandidate, OomMoment, Peak, SegmentUse,
    Site, SiteDelta, SnapshotDiff, TimelinePoint, TraceSummary, analyze, diff, format_bytes,
    short_path,
};
