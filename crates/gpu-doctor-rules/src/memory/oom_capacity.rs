//! GD551: an out-of-memory that no rearrangement would have avoided.

use super::{MemoryFacts, OomFacts, oom_evidence, torch_bytes, with_gpu};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub const CODE: &str = "GD551";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-oom-capacity",
    cause: Some(Cause::OomCapacity),
    summary: "OOM where the request exceeds free device memory plus PyTorch's whole cache",
    body: "## What it does
Reads the `oom` entry of a memory snapshot and fires when the request is larger than what
CUDA had free plus everything PyTorch held reserved but unallocated.

## Why is this bad?
Even a perfectly defragmented cache could not serve the request: the program needs more
memory than the GPU has left. Allocator settings will not help.

## Example
64.67 GiB is allocated, 2.46 GiB is reserved but unallocated, 72.16 GiB is free on the
device, and 80 GiB is asked.

## How to fix
Need less at once: a smaller batch (with gradient accumulation to keep the effective batch),
activation checkpointing, bf16/fp16, a fused or 8-bit optimizer, or shard the model.
`gpu-doctor fit` predicts the largest batch that fits. A request far larger than the GPU
is usually a shape bug, not a batch size.
",
};

pub fn check(facts: &MemoryFacts, oom: &OomFacts) -> Option<Finding> {
    let free = oom.device_free_bytes?;
    let cached = oom.cached_free_bytes();
    let available = free.saturating_add(cached);
    if available >= oom.requested_bytes {
        return None;
    }
    let message = format!(
        "Out of memory: {} asked, but only {} free on the device plus {} cached by PyTorch",
        torch_bytes(oom.requested_bytes),
        torch_bytes(free),
        torch_bytes(cached)
    );
    let short = oom.requested_bytes - available;
    let f = Finding::new(CODE, Cause::OomCapacity, Severity::Error, message)
        .confidence(0.85)
        .with_evidence(oom_evidence(facts, oom))
        .with_remedy(
            "Need less memory at once: a smaller batch with gradient accumulation, activation checkpointing, or bf16",
            None,
            Some(format!("{} short of the request", torch_bytes(short))),
        )
        .with_remedy(
            "Predict the largest batch that fits",
            Some("gpu-doctor fit".into()),
            None,
        );
    Some(with_gpu(f, facts))
}
