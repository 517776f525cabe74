//! GD505: `TensorFlow`'s "ran out of memory ... not a failure" warning, on its own.

use super::{Hit, Input, evidence};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::ObsKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD505",
    name: "oom-warning-not-a-failure",
    cause: Some(Cause::Other),
    summary: "TensorFlow's allocator, or TensorRT's builder, ran out of memory in a way that is not a failure",
    body: r#"## What it does
Finds TensorFlow/JAX BFC allocator warnings that say `ran out of memory trying to allocate ...
The caller indicates that this is not a failure` when no real out-of-memory error followed,
and TensorRT's builder skipping tactics that did not fit (`Skipping tactic 2 due to
insufficient memory`): it prints `Error Code 2: OutOfMemory` for each, then builds with
another tactic, so those errors are not the failure either.

Its cause is `other`: the warning itself names no failure, so whatever stopped the job (if
anything did) is not in these lines.

## Why is this bad?
It is not: the op fell back to an algorithm that needs less workspace. A naive log grep for
"out of memory" flags it; gpu-doctor reports it as information so it is not mistaken for the
failure. If the job is slow, more free memory could let faster algorithms run.

## Example
```
W bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.25GiB with
freed_by_count=0. The caller indicates that this is not a failure, but may mean that there
could be performance gains if more memory were available.
```

## How to fix
Nothing is required. To silence it, leave TensorFlow more headroom (a smaller batch) or enable
memory growth: `tf.config.experimental.set_memory_growth(gpu, True)`.
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    if input.oom.is_some() {
        return Vec::new();
    }
    let warnings: Vec<_> = input
        .facts
        .observations
        .iter()
        .filter(|o| matches!(&o.kind, ObsKind::Oom(i) if i.not_a_failure))
        .collect();
    let Some(first) = warnings.first() else {
        return Vec::new();
    };
    let tensorrt = matches!(&first.kind,
        ObsKind::Oom(i) if i.style == Some(gpu_doctor_scan::OomStyle::TensorRtBuilder));
    let message = if tensorrt {
        format!(
            "TensorRT skipped {} tactic(s) that did not fit in GPU memory while it built the engine; it goes on with the others, so this alone is not why a build failed (if it did).",
            warnings.len()
        )
    } else {
        format!(
            "TensorFlow's allocator warned {} time(s) that it ran out of memory, but it says this is not a failure; it is not why the job stopped.",
            warnings.len()
        )
    };
    let f = Finding::new("GD505", Cause::Other, Severity::Info, message)
    .confidence(0.9)
    .with_evidence(evidence(first))
    .with_remedy(
        if tensorrt {
            "Nothing is required; to let the builder try every tactic, give it more free memory or a larger workspace pool"
        } else {
            "Nothing is required; for headroom, let TensorFlow grow its memory instead of preallocating"
        },
        Some(if tensorrt {
            "trtexec --memPoolSize=workspace:4096M ...   # or config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 4 << 30)".to_owned()
        } else {
            "tf.config.experimental.set_memory_growth(gpu, True)".to_owned()
        }),
        None,
    );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
