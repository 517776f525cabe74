//! GD550: an out-of-memory that defragmented memory would have served.

use super::{MemoryFacts, OomFacts, oom_evidence, torch_bytes, with_gpu};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub const CODE: &str = "GD550";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-oom-fragmentation",
    cause: Some(Cause::OomFragmentation),
    summary: "OOM although free memory would cover the request: no free block is large enough",
    body: "## What it does
Reads the `oom` entry of a memory snapshot: the request, what CUDA had free, and the
allocator's segments. Fires when what the device had free plus what PyTorch held reserved but
unallocated covers the request, yet the largest free block is smaller than it.

## Why is this bad?
The memory is there but cut into pieces. Without expandable segments, free blocks in different
`cudaMalloc` segments never merge, and a segment that still holds one live tensor cannot be
returned to CUDA. Buying a bigger GPU or shrinking the batch treats the wrong problem.

## Example
The GPU is filled with 1 GiB blocks, each refilled with a 600 MiB tensor, then 12 GiB is asked:
53 GiB is reserved but unallocated, the largest free block is 424 MiB, and the allocation fails.

## How to fix
Run with `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (also `PYTORCH_ALLOC_CONF` on torch
2.8 and later): segments grow in pages and freed pages are mapped again where needed. Otherwise
allocate long-lived large tensors first, or set `max_split_size_mb` so large cached blocks are
not split for small requests.
",
};

pub fn check(facts: &MemoryFacts, oom: &OomFacts) -> Option<Finding> {
    let free = oom.device_free_bytes?;
    let cached = oom.cached_free_bytes();
    if free >= oom.requested_bytes
        || free.saturating_add(cached) < oom.requested_bytes
        || oom.largest_free_block_bytes >= oom.requested_bytes
    {
        return None;
    }
    let reusable = free.saturating_add(facts.expandable_reusable_bytes);
    let expandable_helps = !facts.expandable_segments && reusable >= oom.requested_bytes;
    let message = format!(
        "Out of memory from fragmentation: {} asked, {} reserved but unallocated, but the largest free block is {}",
        torch_bytes(oom.requested_bytes),
        torch_bytes(cached),
        torch_bytes(oom.largest_free_block_bytes)
    );
    let mut f = Finding::new(CODE, Cause::OomFragmentation, Severity::Error, message)
        .confidence(if expandable_helps { 0.9 } else { 0.75 })
        .with_evidence(oom_evidence(facts, oom));
    if facts.expandable_segments {
        f = f.with_remedy(
            "Expandable segments are already on: allocate the large long-lived tensors first, or free what pins the segments",
            None,
            Some("live blocks still pin their pages; check the top sites".into()),
        );
    } else {
        f = f.with_remedy(
            "Let segments grow in pages so freed memory can be mapped again as one range",
            Some("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into()),
            Some(format!(
                "device free {} + whole free pages {} = {} against {} asked; on torch 2.8+ set PYTORCH_ALLOC_CONF too",
                torch_bytes(free),
                torch_bytes(facts.expandable_reusable_bytes),
                torch_bytes(reusable),
                torch_bytes(oom.requested_bytes)
            )),
        );
    }
    f = f.with_remedy(
        "Keep large cached blocks whole so small requests do not split them",
        Some("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512".into()),
        None,
    );
    Some(with_gpu(f, facts))
}
