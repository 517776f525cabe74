//! GD547: another CUDA error (unknown error, launch timeout, invalid argument, ...).

use super::{Hit, Input, first_and_last, ranks_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD547",
    name: "cuda-error",
    cause: Some(Cause::Other),
    summary: "A CUDA error that no more specific rule explains (unknown error, launch timeout, ...)",
    body: r"## What it does
Reports CUDA runtime and driver errors that the more specific rules do not cover, by name and
number, and says whether the error is sticky: `unknown error` (999), `the launch timed out
and was terminated` (702), `invalid argument` (1), `invalid resource handle` (400),
`initialization error` (3), `operation not permitted` (800), and the CUDA-graph capture
errors (900-908, `operation not permitted when stream is capturing`), which mean a call that
capture forbids ran while a framework recorded a graph.

## Why is this bad?
The CUDA call failed. Sticky errors (702, 999) leave the context unusable, so the process
must restart; 999 right after a GPU fault often comes with an Xid in the kernel log. 702 on a
GPU that also drives a display is the OS watchdog killing a long kernel.

## Example
```
RuntimeError: CUDA error: unknown error
```

## How to fix
1. Check the kernel log for Xids around the same time: `gpu-doctor explain --kernel`.
2. Rerun with `CUDA_LAUNCH_BLOCKING=1` to find the failing call.
3. For 702 on a display GPU, run compute on a GPU without a display, or shorten kernels.
",
};

fn other_error(o: &Observation) -> bool {
    matches!(&o.kind, ObsKind::CudaError(e)
        if !matches!(e.code, Some(2 | 214 | 700 | 710 | 714..=719)))
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(|o| other_error(o))
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let ObsKind::CudaError(e) = &first.kind else {
        return Vec::new();
    };
    let what = match (&e.message, &e.name, e.code) {
        (Some(m), Some(n), Some(c)) => format!("\"{m}\" ({n}, {c})"),
        (Some(m), _, Some(c)) => format!("\"{m}\" ({c})"),
        (Some(m), _, None) => format!("\"{m}\""),
        (None, _, Some(c)) => format!("error {c}"),
        _ => "an error".to_owned(),
    };
    let sticky = if e.sticky {
        "; it is sticky, so the process must be restarted"
    } else {
        ""
    };
    // cuda-gdb reports every API call that returned an error, those the program expects and
    // handles (enabling peer access twice) too: alone, they are a warning.
    let debugger_only = hits
        .iter()
        .all(|o| o.text.contains("Cuda API error detected"));
    let (message, severity) = if debugger_only {
        (
            format!(
                "cuda-gdb reported a CUDA call that returned {what}: the debugger reports every failed call, including those the program expects and handles, so this alone did not stop the job."
            ),
            Severity::Warn,
        )
    } else {
        (
            format!(
                "A CUDA call failed with {what}{}{sticky}.",
                ranks_phrase(&hits)
            ),
            Severity::Error,
        )
    };
    let mut f = Finding::new("GD547", Cause::Other, severity, message).confidence(0.4);
    for ev in first_and_last(&hits) {
        f = f.with_evidence(ev);
    }
    f = if debugger_only {
        f.with_remedy(
            "Look for the error that stopped the job after these reports; to have cuda-gdb stop at failed calls instead of only reporting them, or ignore them",
            Some("(cuda-gdb) set cuda api_failures stop   # or: ignore".to_owned()),
            None,
        )
    } else if matches!(e.code, Some(900..=908)) {
        // A call that graph capture forbids: nothing is wrong with the GPU or the driver.
        f.with_remedy(
            "A call that CUDA forbids while a stream is captured into a CUDA graph ran during capture: a bug in the framework's graph capture (or in a hook, logger or sync it ran), not in the GPU. Run without CUDA graphs to confirm",
            Some("vllm serve MODEL --enforce-eager  # vLLM; torch.compile: mode=\"max-autotune-no-cudagraphs\"".to_owned()),
            None,
        )
        .with_remedy(
            "If it started with an upgrade, go back to the last framework version that worked and report the regression with the traceback",
            None,
            None,
        )
    } else {
        f.with_remedy(
            "Check the kernel log for Xids at the same time (a GPU fault often shows up as \"unknown error\")",
            Some("gpu-doctor explain --kernel".to_owned()),
            None,
        )
        .with_remedy(
            "Rerun with synchronous launches to find the failing call",
            Some("CUDA_LAUNCH_BLOCKING=1 python train.py".to_owned()),
            None,
        )
    };
    if e.code == Some(701) {
        // The kernel asks for more registers (or shared memory) per block than an SM has: a
        // property of the kernel and its launch, the same on every run.
        f = f.with_remedy(
            "A kernel asked for more registers or threads per block than the GPU has: launch it with fewer threads per block, or cap its registers",
            Some("nvcc -maxrregcount=64 ...   # or __launch_bounds__(256) on the kernel; OpenACC: vector_length(128)".to_owned()),
            None,
        );
    }
    if e.code == Some(702) {
        f = f.with_remedy(
            "The display watchdog killed a long kernel: compute on a GPU that drives no display, or split the work into shorter kernels",
            None,
            None,
        );
    }
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
