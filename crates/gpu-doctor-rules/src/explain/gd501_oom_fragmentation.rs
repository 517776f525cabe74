//! GD501: out of memory with enough memory free or cached, but not in one piece.

use super::gd500_oom_capacity::{asked_phrase, oom_evidence};
use super::{Hit, Input, size};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, GpuIndex, Severity};
use gpu_doctor_scan::{Framework, OomStyle};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD501",
    name: "oom-fragmentation",
    cause: Some(Cause::OomFragmentation),
    summary: "Out of memory from fragmentation: enough memory is cached or free, but not in one block",
    body: r#"## What it does
Finds out-of-memory errors whose numbers show the memory was there but unusable: PyTorch held
more "reserved but unallocated" memory than the request was missing, and at least 15% of the
GPU (less is the caching allocator's normal slack at a job's peak), or the driver reported
more free memory than was requested, or (TensorFlow/JAX) the allocator's pool had room but its
largest free block was smaller than the request.

## Why is this bad?
Before it raises, PyTorch's caching allocator has already returned every cached block it
could; what is still "reserved but unallocated" sits in segments that also hold live tensors.
A request larger than any hole fails although the total would suffice. The same batch will
fail again on the next run unless the allocation pattern or the allocator changes.

## Example
```
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total
capacity of 139.80 GiB of which 10.29 GiB is free. ... Of the allocated memory 75.59 GiB is
allocated by PyTorch, and 53.41 GiB is reserved by PyTorch but unallocated.
```
53 GiB were cached but split around live tensors; 12 GiB could not be found in one piece.

## How to fix
1. PyTorch ≥ 2.1: `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (PyTorch ≥ 2.8 also reads
   `PYTORCH_ALLOC_CONF`; set both). Segments then grow in place instead of fragmenting.
2. Older PyTorch: `PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128` stops large cached blocks
   from being split.
3. TensorFlow: `TF_GPU_ALLOCATOR=cuda_malloc_async`.
4. Allocate the largest, longest-lived tensors first; keep shapes steady (pad variable-length
   batches to a few bucket sizes); call `torch.cuda.empty_cache()` between phases (e.g.
   between evaluation and training).
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let Some(a) = &input.oom else {
        return Vec::new();
    };
    if a.cause != Cause::OomFragmentation {
        return Vec::new();
    }
    let i = &a.info;
    let why = match (
        i.reserved_unallocated_bytes,
        i.free_bytes,
        i.requested_bytes,
    ) {
        // The same test as the analysis: equal figures are the message's rounding, not
        // enough free memory.
        (_, Some(free), Some(req)) if free >= req + super::oom::FREE_MARGIN && req > 0 => format!(
            "the GPU reported {} free, more than the {} requested, yet the allocation failed: the free memory is not in one piece",
            size(free),
            size(req)
        ),
        (Some(u), _, _) => format!(
            "{} is reserved by the allocator but unallocated, more than the {} that was missing: it is split around live tensors",
            size(u),
            size(a.missing_bytes.unwrap_or(0))
        ),
        _ => match a.largest_free_block {
            Some(l) => format!(
                "the allocator's pool had room but its largest free block was {}",
                size(l)
            ),
            None => "the free memory is not in one piece".to_owned(),
        },
    };
    let message = format!(
        "Out of memory from fragmentation: {}; {why}.",
        asked_phrase(a)
    );
    let mut f = Finding::new("GD501", Cause::OomFragmentation, Severity::Error, message)
        .confidence(0.85)
        .with_evidence(oom_evidence(a));
    if let Some(g) = i.gpu {
        f = f.on_gpu(GpuIndex(g));
    }
    let old_torch = matches!(
        i.style,
        Some(OomStyle::TorchCached | OomStyle::TorchReservedTotal | OomStyle::TorchThc)
    );
    match a.framework {
        Some(Framework::Tensorflow | Framework::Jax) => {
            f = f.with_remedy(
                "Use the CUDA async allocator, which does not fragment like the BFC pool",
                Some("export TF_GPU_ALLOCATOR=cuda_malloc_async".to_owned()),
                None,
            );
        }
        _ if old_torch => {
            f = f
                .with_remedy(
                    "Stop the allocator from splitting large cached blocks",
                    Some("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128".to_owned()),
                    Some("this PyTorch prints the 1.x message, which predates expandable segments; lower values (down to 20) fragment less but cache less".to_owned()),
                )
                .with_remedy(
                    "Or upgrade to PyTorch ≥ 2.1 and use expandable segments",
                    Some("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".to_owned()),
                    None,
                );
        }
        _ => {
            f = f.with_remedy(
                "Let the allocator grow segments in place instead of fragmenting them",
                Some("export PYTORCH_ALLOC_CONF=expandable_segments:True PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".to_owned()),
                Some(match i.reserved_unallocated_bytes {
                    Some(u) => format!("makes the {} held in split segments reusable; PyTorch ≥ 2.8 reads PYTORCH_ALLOC_CONF, older versions PYTORCH_CUDA_ALLOC_CONF, so set both", size(u)),
                    None => "PyTorch ≥ 2.8 reads PYTORCH_ALLOC_CONF, older versions PYTORCH_CUDA_ALLOC_CONF, so set both".to_owned(),
                }),
            );
        }
    }
    f = f.with_remedy(
        "Allocate the largest, longest-lived tensors first and keep shapes steady (pad variable-length batches to a few sizes); free cached blocks between phases",
        Some("torch.cuda.empty_cache()".to_owned()),
        None,
    );
    vec![Hit {
        finding: f,
        seq: a.primary.seq,
    }]
}
