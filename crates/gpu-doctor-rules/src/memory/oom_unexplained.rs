//! GD557: an out-of-memory the snapshot's numbers do not explain.

use super::{MemoryFacts, OomFacts, oom_evidence, torch_bytes, with_gpu};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub const CODE: &str = "GD557";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-oom-unexplained",
    cause: Some(Cause::Other),
    summary: "OOM although the device or a free block had room for the request",
    body: "## What it does
Fires on a snapshot's `oom` entry when neither fragmentation nor capacity explains it: the
device had the request free, or a free block was large enough.

## Why is this bad?
The free block may belong to another stream or a private pool (CUDA graphs), which the
request cannot use, or a memory fraction (`set_per_process_memory_fraction`) capped the
process. The usual fixes for capacity or fragmentation would not help.

## Example
`torch.cuda.set_per_process_memory_fraction(0.5)` on an idle GPU: CUDA reports 100 GiB free,
yet a 60 GiB request fails.

## How to fix
Check `torch.cuda.get_per_process_memory_fraction()`, CUDA-graph pools and side streams; the
segment map in `gpu-doctor snapshot --html` shows which stream and pool the free blocks are in.
",
};

pub fn check(facts: &MemoryFacts, oom: &OomFacts) -> Option<Finding> {
    let message = format!(
        "Out of memory that free memory should have served: {} asked, {} free on the device, largest free block {}",
        torch_bytes(oom.requested_bytes),
        oom.device_free_bytes
            .map_or_else(|| "unknown".into(), torch_bytes),
        torch_bytes(oom.largest_free_block_bytes)
    );
    let f = Finding::new(CODE, Cause::Other, Severity::Warn, message)
        .confidence(0.4)
        .with_evidence(oom_evidence(facts, oom))
        .with_remedy(
            "Check for a per-process memory fraction, CUDA-graph pools and side streams",
            Some(
                "python -c \"import torch; print(torch.cuda.get_per_process_memory_fraction())\""
                    .into(),
            ),
            None,
        );
    Some(with_gpu(f, facts))
}
