//! GD520: a cuBLAS call failed.

use super::{Hit, Input, finding_from, ranks_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{LibStatus, ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD520",
    name: "cublas-error",
    cause: Some(Cause::CublasError),
    summary: "A cuBLAS call failed (CUBLAS_STATUS_*)",
    body: r"## What it does
Finds `CUBLAS_STATUS_*` failures (`CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling
`cublasSgemm(...)``) and says what the status usually means. `CUBLAS_STATUS_ALLOC_FAILED` is
an out-of-memory error and is reported by the OOM rules (GD500–GD503) instead.

## Why is this bad?
The matrix multiply (a linear layer, attention) did not run. `NOT_INITIALIZED` means the
cuBLAS handle could not be created, most often because the GPU was already out of memory or
an earlier error broke the context; `EXECUTION_FAILED` is often the first place an earlier
asynchronous kernel error (an illegal access, a device assert) surfaces; `INVALID_VALUE` and
`NOT_SUPPORTED` point at shapes, strides or dtypes the library rejects. `ARCH_MISMATCH` says
the GPU lacks a feature the call needs (cuBLAS's words: usually a compute capability below
what the library supports): it is reported with cause `env_arch_unsupported`.

## Example
```
RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle,
opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`
```

## How to fix
1. Rerun with `CUDA_LAUNCH_BLOCKING=1`: if an earlier kernel failed, the real error appears.
2. For `NOT_INITIALIZED`, check free GPU memory at the failing point and that labels/indices
   are in range (a device assert often precedes it).
3. For `INVALID_VALUE`/`NOT_SUPPORTED`, print the shapes and dtypes of the operands.
4. Upgrade PyTorch/cuBLAS; some failures are library bugs fixed in later releases.
",
};

fn meaning(status: &str) -> &'static str {
    match status {
        "CUBLAS_STATUS_NOT_INITIALIZED" => {
            "the cuBLAS handle could not be created: usually the GPU was already out of memory, or an earlier error broke the CUDA context"
        }
        "CUBLAS_STATUS_EXECUTION_FAILED" => {
            "the GPU failed to run the kernel: often an earlier asynchronous error (illegal access, device assert) surfacing here, or bad operands"
        }
        "CUBLAS_STATUS_INVALID_VALUE" => {
            "cuBLAS rejected the arguments: a shape, stride, leading dimension or dtype it does not accept"
        }
        "CUBLAS_STATUS_NOT_SUPPORTED" => {
            "the operation is not supported for these dtypes/layouts on this GPU"
        }
        "CUBLAS_STATUS_ARCH_MISMATCH" => {
            "the GPU lacks a feature the call needs: its compute capability is below what this cuBLAS (or the code calling it) supports"
        }
        "CUBLAS_STATUS_INTERNAL_ERROR" => {
            "cuBLAS failed internally: often a driver/library mismatch or an earlier error"
        }
        "CUBLAS_STATUS_MAPPING_ERROR" => "cuBLAS could not access GPU memory",
        _ => "a cuBLAS call failed",
    }
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(
            |o| matches!(&o.kind, ObsKind::Cublas(s) if s.status != "CUBLAS_STATUS_ALLOC_FAILED"),
        )
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let ObsKind::Cublas(s) = &first.kind else {
        return Vec::new();
    };
    let call = s
        .call
        .as_deref()
        .map(|c| format!(" in `{}`", c.split('(').next().unwrap_or(c)))
        .unwrap_or_default();
    let message = if s.status == LibStatus::UNKNOWN {
        format!(
            "cuBLAS failed{call}{}; the message does not name the status (a number printed with it is cuBLAS's status code: 13 EXECUTION_FAILED, 7 INVALID_VALUE, 1 NOT_INITIALIZED).",
            ranks_phrase(&hits)
        )
    } else {
        format!(
            "cuBLAS failed with {}{call}{}: {}.",
            s.status,
            ranks_phrase(&hits),
            meaning(&s.status)
        )
    };
    if s.status == "CUBLAS_STATUS_ARCH_MISMATCH" {
        return vec![Hit {
            finding: arch_mismatch(message, &hits),
            seq: first.seq,
        }];
    }
    let mut f = finding_from(
        "GD520",
        Cause::CublasError,
        Severity::Error,
        message,
        0.6,
        &hits,
    );
    f = f.with_remedy(
        "Rerun with synchronous launches; an earlier kernel error then shows up where it happens",
        Some("CUDA_LAUNCH_BLOCKING=1 python train.py".to_owned()),
        None,
    );
    if s.status == "CUBLAS_STATUS_NOT_INITIALIZED" {
        f = f.with_remedy(
            "Check free GPU memory where it fails, and that labels and indices are in range",
            Some("nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv".to_owned()),
            None,
        );
    } else {
        f = f.with_remedy(
            "Print the operands' shapes, strides and dtypes at the failing call",
            Some("print(a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype)".to_owned()),
            None,
        );
    }
    f = f.with_remedy(
        "Upgrade PyTorch (and its bundled cuBLAS); some of these failures are library bugs",
        Some(
            "pip install --upgrade torch --index-url https://download.pytorch.org/whl/cu128"
                .to_owned(),
        ),
        Some("pick the cuXYZ tag not newer than the CUDA version `nvidia-smi` shows".to_owned()),
    );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// `CUBLAS_STATUS_ARCH_MISMATCH`: the GPU is too old for the library or the code calling it.
fn arch_mismatch(message: String, hits: &[&Observation]) -> Finding {
    finding_from(
        "GD520",
        Cause::EnvArchUnsupported,
        Severity::Error,
        message,
        0.7,
        hits,
    )
    .with_remedy(
        "See the GPU's compute capability, and compare it with the minimum of the library and the software's build",
        Some("nvidia-smi --query-gpu=name,compute_cap --format=csv".to_owned()),
        Some("recent cuBLAS releases need compute capability 5.0 or later; half and tensor-core paths need more".to_owned()),
    )
    .with_remedy(
        "Run it on a newer GPU, or use a release of the software (and its CUDA) that still supports this one",
        None,
        None,
    )
    .with_remedy(
        "On a recent GPU, look for an older cuBLAS loaded in place of the one the software ships or was built with (another CUDA's lib directory first on LD_LIBRARY_PATH)",
        Some("ldd $(which PROGRAM) | grep -i cublas; echo $LD_LIBRARY_PATH".to_owned()),
        None,
    )
}
