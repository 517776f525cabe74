//! GD510: a kernel touched memory it must not (CUDA errors 700, 714–719).

use super::{Hit, Input, finding_from, ranks_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD510",
    name: "illegal-memory-access",
    cause: Some(Cause::IllegalAccess),
    summary: "A kernel made an illegal memory access (CUDA 700, 714–719); the process must restart",
    body: r"## What it does
Finds CUDA errors that mean a kernel read or wrote memory it does not own or ran a bad
instruction: `an illegal memory access was encountered` (700), `misaligned address` (716),
`an illegal instruction was encountered` (715), `unspecified launch failure` (719), hardware
stack errors (714), invalid address spaces (717) and program counters (718), by name,
number or message, from PyTorch, CuPy, JAX, TensorFlow or raw CUDA.

## Why is this bad?
These errors are sticky: the CUDA context is corrupted, every later CUDA call in the process
fails, and the process must be restarted. Kernel errors are reported asynchronously, so the
Python line in the traceback is often not the op that faulted.

## Example
```
cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory
access was encountered
```

## How to fix
1. Rerun with `CUDA_LAUNCH_BLOCKING=1` so the error is raised at the faulting kernel.
2. Run under compute-sanitizer to get the kernel, the address and the thread:
   `compute-sanitizer --tool memcheck python train.py` (or `gpu-doctor sanitize -- python train.py`).
3. In your own kernels, check index arithmetic and bounds; in library ops, upgrade the library
   (illegal accesses in cuDNN/cuBLAS/PyTorch kernels are often fixed bugs).
4. If it happens at random places on one GPU only, check the kernel log for Xids
   (`gpu-doctor explain --kernel`).
",
};

fn is_illegal(o: &Observation) -> bool {
    matches!(&o.kind, ObsKind::CudaError(e) if matches!(e.code, Some(700 | 714 | 715 | 716 | 717 | 718 | 719)))
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(|o| is_illegal(o))
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let what = match &first.kind {
        ObsKind::CudaError(e) => {
            let name = e.name.clone().unwrap_or_default();
            let msg = e.message.clone().unwrap_or_default();
            match e.code {
                Some(c) => format!("{msg} ({name}, {c})"),
                None => msg,
            }
        }
        _ => String::new(),
    };
    let message = format!(
        "A GPU kernel failed with \"{what}\"{}: a sticky error, so the process must be restarted, and the traceback's line may not be the faulting op.",
        ranks_phrase(&hits)
    );
    let mut f = finding_from(
        "GD510",
        Cause::IllegalAccess,
        Severity::Error,
        message,
        0.85,
        &hits,
    );
    f = f
        .with_remedy(
            "Rerun with synchronous launches so the error is raised at the kernel that faulted",
            Some("CUDA_LAUNCH_BLOCKING=1 python train.py".to_owned()),
            None,
        )
        .with_remedy(
            "Run it under compute-sanitizer to get the kernel, the address and the thread",
            Some("compute-sanitizer --tool memcheck python train.py  # or: gpu-doctor sanitize -- python train.py".to_owned()),
            Some("expect a 10–100× slowdown; a small input that still fails is enough".to_owned()),
        )
        .with_remedy(
            "If the kernel is in a library (cuDNN, cuBLAS, PyTorch), upgrade it; if it moves around on one GPU only, check the kernel log for Xids",
            Some("gpu-doctor explain --kernel".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
