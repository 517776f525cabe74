//! GD555: much free memory stranded in segments that also hold live tensors.

use super::{MemoryFacts, torch_bytes, with_gpu};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Evidence, Finding, Severity};

pub const CODE: &str = "GD555";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-fragmentation-risk",
    cause: Some(Cause::OomFragmentation),
    summary: "A third or more of reserved memory is free but stranded between live blocks",
    body: "## What it does
Without an OOM in the snapshot, sums the free blocks in segments that also hold live blocks
(PyTorch's `inactive_split_bytes`). Fires when that is at least 1 GiB and 30% of reserved
memory, and expandable segments are off.

## Why is this bad?
`empty_cache()` cannot return stranded memory and a large request cannot use it: the next
large allocation will grow reserved memory or fail with an OOM that reports gigabytes
\"reserved but unallocated\".

## Example
Alternating 1 GiB temporaries with 600 MiB long-lived tensors leaves 424 MiB holes in every
segment.

## How to fix
`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, or allocate long-lived tensors before
temporaries.
",
};

pub fn check(facts: &MemoryFacts) -> Option<Finding> {
    let stranded = facts.stranded_free_bytes;
    if facts.expandable_segments
        || stranded < (1 << 30)
        || stranded.saturating_mul(10) < facts.reserved_bytes.saturating_mul(3)
    {
        return None;
    }
    let mut values = std::collections::BTreeMap::new();
    values.insert("stranded_free_bytes".into(), stranded as f64);
    values.insert("reserved_bytes".into(), facts.reserved_bytes as f64);
    values.insert(
        "largest_free_block_bytes".into(),
        facts.largest_free_block_bytes as f64,
    );
    let f = Finding::new(
        CODE,
        Cause::OomFragmentation,
        Severity::Warn,
        format!(
            "{} of {} reserved is free but stranded between live blocks; the largest free block is {}",
            torch_bytes(stranded),
            torch_bytes(facts.reserved_bytes),
            torch_bytes(facts.largest_free_block_bytes)
        ),
    )
    .confidence(0.6)
    .with_evidence(Evidence {
        source: facts.source.clone(),
        line: None,
        text: format!(
            "segments: {} reserved, {} allocated, {} free in partly used segments",
            torch_bytes(facts.reserved_bytes),
            torch_bytes(facts.allocated_bytes),
            torch_bytes(stranded)
        ),
        values,
    })
    .with_remedy(
        "Let segments grow in pages so freed memory can be reused as one range",
        Some("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into()),
        None,
    );
    Some(with_gpu(f, facts))
}
