//! GD504: a single allocation larger than the whole GPU.

use super::gd500_oom_capacity::{asked_phrase, oom_evidence};
use super::{Hit, Input, size};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, GpuIndex, Severity};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD504",
    name: "oom-request-exceeds-gpu",
    cause: Some(Cause::OomCapacity),
    summary: "Out of memory: one allocation is larger than the whole GPU",
    body: r"## What it does
Finds out-of-memory errors where the single failed request is larger than the GPU's total
memory (or the process's allowed limit).

## Why is this bad?
No batch-size tweak or allocator setting makes a 300 GiB tensor fit on a 140 GiB GPU. Such a
request is almost always a shape bug (a wrong dimension, an accidental outer product, a
sequence length or vocabulary far larger than intended) or a model that must be sharded.

## Example
```
cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 322,122,547,200 bytes
(allocated so far: 0 bytes).
```
on a 141 GB H200.

## How to fix
1. Print the shapes and dtypes of the tensors built at the failing line; look for a
   dimension that is far too large.
2. If the size is intended, split the work (chunk the computation, shard the model with
   FSDP/tensor parallelism, or offload to CPU).
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let Some(a) = &input.oom else {
        return Vec::new();
    };
    if !a.request_exceeds_gpu {
        return Vec::new();
    }
    let (Some(req), Some(total)) = (
        a.info.requested_bytes,
        a.info.total_bytes.or_else(|| {
            input
                .live
                .and_then(|s| s.devices.first())
                .and_then(|d| d.memory_total_bytes.get())
        }),
    ) else {
        return Vec::new();
    };
    let ratio = req as f64 / total.max(1) as f64;
    let message = format!(
        "Out of memory: {}; the request alone is {ratio:.1}× the whole GPU ({}), so this is a tensor-shape or model-size problem, not a batch-size one.",
        asked_phrase(a),
        size(total)
    );
    let mut f = Finding::new("GD504", Cause::OomCapacity, Severity::Error, message)
        .confidence(0.9)
        .with_evidence(oom_evidence(a))
        .with_remedy(
            "Check the shape and dtype of the tensor built at the failing line",
            Some("print(x.shape, x.dtype, x.numel() * x.element_size() / 2**30, \"GiB\")".to_owned()),
            Some(format!(
                "{} requested is more than {} the GPU has in total: look for a dimension that is far too large",
                size(req),
                size(total)
            )),
        )
        .with_remedy(
            "If the size is intended, split the work: chunk the computation or shard the model across GPUs (FSDP, tensor parallel)",
            None,
            Some(format!("at least {:.0} GPUs of this size would be needed to hold it", ratio.ceil())),
        );
    if let Some(g) = a.info.gpu {
        f = f.on_gpu(GpuIndex(g));
    }
    vec![Hit {
        finding: f,
        seq: a.primary.seq,
    }]
}
