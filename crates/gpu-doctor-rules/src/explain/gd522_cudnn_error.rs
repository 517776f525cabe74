//! GD522: a cuDNN call failed.

use super::{Hit, Input, finding_from, ranks_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD522",
    name: "cudnn-error",
    cause: Some(Cause::CudnnError),
    summary: "A cuDNN call failed (CUDNN_STATUS_*, cuDNN 8 and 9 codes)",
    body: r#"## What it does
Finds cuDNN failures: `cuDNN error: CUDNN_STATUS_*` with the old (cuDNN ≤ 8: 1–10) and the new
(cuDNN 9: 1xxx initialisation, 2xxx bad parameter, 3xxx not supported, 4xxx internal, 5xxx
execution) status numbers, TensorFlow's `Could not create cudnn handle` (TensorFlow 2: `Failed
to get convolution algorithm. This is probably because cuDNN failed to initialize`), and PyTorch's
`Unable to find a valid cuDNN algorithm to run convolution`. Allocation failures
(`CUDNN_STATUS_ALLOC_FAILED`, 4004) are out-of-memory errors and go to the OOM rules.

## Why is this bad?
The convolution, RNN or attention op did not run. `NOT_INITIALIZED` and "could not create
cudnn handle" mean cuDNN could not start: too little free GPU memory (TensorFlow preallocates
nearly all of it) or a cuDNN that does not match the framework's build. `NOT_SUPPORTED` often
means a non-contiguous input or an unsupported configuration. `EXECUTION_FAILED` can be an
earlier kernel error surfacing here.

## Example
```
RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED
```

## How to fix
1. Make sure memory is free when cuDNN starts: smaller batch; for TensorFlow
   `tf.config.experimental.set_memory_growth(gpu, True)`.
2. Check the cuDNN the framework loads matches its build
   (`python -c "import torch; print(torch.backends.cudnn.version())"`); do not mix a system
   cuDNN on `LD_LIBRARY_PATH` with pip's `nvidia-cudnn-*` wheels.
3. For `NOT_SUPPORTED`, make inputs contiguous (`x.contiguous()`) or try
   `torch.backends.cudnn.enabled = False` to confirm the op is the problem.
"#,
};

fn meaning(status: &str, code: Option<u32>) -> &'static str {
    let class = code.map(|c| if c >= 1000 { c / 1000 } else { 0 });
    match (status, class) {
        ("CUDNN_STATUS_NOT_INITIALIZED", _) | (_, Some(1)) => {
            "cuDNN could not start: usually too little free GPU memory, or a cuDNN that does not match the framework's build"
        }
        ("HANDLE_CREATION_FAILED", _) => {
            "cuDNN could not start: usually TensorFlow took nearly all GPU memory first, or the cuDNN version does not match"
        }
        ("NO_VALID_ALGORITHM", _) => {
            "no convolution algorithm fit: usually not enough free GPU memory for any algorithm's workspace"
        }
        ("CUDNN_STATUS_BAD_PARAM", _) | (_, Some(2)) => {
            "cuDNN rejected a parameter (shapes, strides, dtypes)"
        }
        ("CUDNN_STATUS_NOT_SUPPORTED", _) | (_, Some(3)) => {
            "the configuration is not supported; a non-contiguous input is a common reason"
        }
        ("CUDNN_STATUS_INTERNAL_ERROR", _) | (_, Some(4)) => {
            "cuDNN failed internally: often an out-of-memory in disguise or a version mismatch"
        }
        ("CUDNN_STATUS_EXECUTION_FAILED", _) | (_, Some(5)) => {
            "the GPU failed to run the kernel: often an earlier asynchronous error surfacing here"
        }
        _ => "a cuDNN call failed",
    }
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(|o| {
            matches!(&o.kind, ObsKind::Cudnn(s)
                if s.status != "CUDNN_STATUS_ALLOC_FAILED"
                    && s.status != "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED")
        })
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let ObsKind::Cudnn(s) = &first.kind else {
        return Vec::new();
    };
    let code = s.code.map(|c| format!(" ({c})")).unwrap_or_default();
    let message = format!(
        "cuDNN failed with {}{code}{}: {}.",
        s.status,
        ranks_phrase(&hits),
        meaning(&s.status, s.code)
    );
    let mut f = finding_from(
        "GD522",
        Cause::CudnnError,
        Severity::Error,
        message,
        0.6,
        &hits,
    );
    f = f
        .with_remedy(
            "Leave cuDNN free memory: a smaller batch; in TensorFlow, grow memory instead of preallocating",
            Some("tf.config.experimental.set_memory_growth(gpu, True)  # PyTorch: reduce the batch size".to_owned()),
            None,
        )
        .with_remedy(
            "Check that the cuDNN loaded matches the framework's build (no system cuDNN on LD_LIBRARY_PATH mixed with pip's nvidia-cudnn wheels)",
            Some("python -c \"import torch; print(torch.version.cuda, torch.backends.cudnn.version())\"".to_owned()),
            None,
        )
        .with_remedy(
            "Confirm cuDNN is the culprit by running the op without it, and make inputs contiguous",
            Some("torch.backends.cudnn.enabled = False  # then: x = x.contiguous()".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
