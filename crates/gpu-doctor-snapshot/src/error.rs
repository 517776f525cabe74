//! Why a snapshot could not be read, each with a hint a person can act on.

use thiserror::Error;

/// Everything that can go wrong reading a snapshot. The input is untrusted: every variant
/// is a clear refusal, never a panic or an unbounded allocation.
#[derive(Debug, Error)]
pub enum SnapshotError {
    #[error("cannot read the snapshot: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a pickle: the file starts with byte 0x{0:02x}, not the PROTO opcode 0x80")]
    NotPickle(u8),
    #[error("the file is empty")]
    Empty,
    #[error("unsupported pickle protocol {0} (memory snapshots use protocols 2 to 5)")]
    Protocol(u8),
    #[error(
        "refused opcode {name} at byte {offset}{detail}: a memory snapshot is plain data and never imports or calls code"
    )]
    Forbidden {
        name: &'static str,
        offset: u64,
        detail: String,
    },
    #[error("unknown pickle opcode 0x{op:02x} at byte {offset}")]
    UnknownOpcode { op: u8, offset: u64 },
    #[error("the file ends early at byte {offset}: it is truncated")]
    Truncated { offset: u64 },
    #[error(
        "a length field at byte {offset} claims {claimed} bytes but only {remaining} bytes remain in the file"
    )]
    LengthBeyondEnd {
        offset: u64,
        claimed: u64,
        remaining: u64,
    },
    #[error("a value at byte {offset} claims {claimed} bytes, over the limit of {limit} bytes")]
    TooLarge {
        offset: u64,
        claimed: u64,
        limit: u64,
    },
    #[error("containers nested deeper than {limit} levels at byte {offset}")]
    TooDeep { offset: u64, limit: usize },
    #[error("holding this file would take more than {limit} bytes of memory (at byte {offset})")]
    MemoryLimit { offset: u64, limit: u64 },
    #[error("malformed pickle at byte {offset}: {what}")]
    Malformed { offset: u64, what: String },
    #[error("not a PyTorch memory snapshot: {0}")]
    NotSnapshot(String),
}

impl SnapshotError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            SnapshotError::Io(_) => "check the path and that the file is readable",
            SnapshotError::NotPickle(_) | SnapshotError::Empty | SnapshotError::NotSnapshot(_) => {
                "pass the file written by `torch.cuda.memory._dump_snapshot(\"snap.pickle\")`"
            }
            SnapshotError::Protocol(_) => {
                "re-dump it with `pickle.dump(torch.cuda.memory._snapshot(), f, protocol=4)`"
            }
            SnapshotError::Forbidden { .. } => {
                "this file is not a memory snapshot (or was tampered with); do not unpickle it in Python either"
            }
            SnapshotError::UnknownOpcode { .. } | SnapshotError::Malformed { .. } => {
                "the file is damaged or not a memory snapshot; dump it again with `torch.cuda.memory._dump_snapshot()`"
            }
            SnapshotError::Truncated { .. } | SnapshotError::LengthBeyondEnd { .. } => {
                "the file was cut short (disk full, or copied while still being written) or is damaged; dump it again"
            }
            SnapshotError::TooDeep { .. } => {
                "a real snapshot nests containers 6 levels deep; this file is not a memory snapshot"
            }
            SnapshotError::TooLarge { .. } | SnapshotError::MemoryLimit { .. } => {
                "a real snapshot never looks like this; if it is one, record fewer entries with `_record_memory_history(max_entries=...)`"
            }
        }
    }
}
