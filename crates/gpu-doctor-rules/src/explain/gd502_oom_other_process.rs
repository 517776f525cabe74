//! GD502: out of memory because another process holds the GPU's memory.

use super::gd500_oom_capacity::{asked_phrase, oom_evidence};
use super::{Hit, Input, evidence, size};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, GpuIndex, Severity};
use gpu_doctor_scan::Framework;
use std::fmt::Write as _;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD502",
    name: "oom-other-process",
    cause: Some(Cause::OomOtherProcess),
    summary: "Out of memory because other processes hold the GPU's memory",
    body: r"## What it does
Finds out-of-memory errors where this process held little while the GPU was full: the message
lists other processes (`Process 1234 has 6.00 GiB memory in use`), or the arithmetic
total − free − this process leaves a large share to someone else, or (with `--live`) other
processes hold the memory now: when the message gives only the request (CuPy, JAX), they are
in the way if the request fits the GPU but not what they leave. Without `--live`, JAX's own
log can say it: the driver refused its preallocation (75% of the GPU) and a smaller retry
(`Failed to allocate device memory of 104.85GiB`, then `94.37GiB`) before the job failed, so
that much of the GPU was taken before JAX started. PyTorch before 2.1 does not say what this
process holds outside its allocator (its CUDA context, library workspaces), nor what a
desktop's display takes: there, what is left over counts as someone else's only when it is
more than PyTorch itself reserved.

## Why is this bad?
The job would fit on an empty GPU. The memory belongs to another job, a notebook kernel, a
zombie process from an earlier run, or dataloader workers that touched CUDA. Shrinking the
batch only hides the problem.

## Example
```
Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated;
24.56 MiB free; 86.00 MiB reserved in total by PyTorch)
```
PyTorch holds 86 MiB of 7.92 GiB; about 7.8 GiB belongs to something else.

## How to fix
1. See who holds the GPU: `nvidia-smi --query-compute-apps=pid,used_memory,name --format=csv`
   (or `gpu-doctor explain --live`, which names them).
2. Stop the stale process, or run on a free GPU (`CUDA_VISIBLE_DEVICES=N`, `gpu-doctor pick`).
3. For JAX or TensorFlow neighbours: they preallocate most of the GPU; set
   `XLA_PYTHON_CLIENT_PREALLOCATE=false` / `tf.config.experimental.set_memory_growth`.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let Some(a) = &input.oom else {
        return Vec::new();
    };
    if a.cause != Cause::OomOtherProcess {
        return Vec::new();
    }
    let others = a.others_bytes.unwrap_or(0);
    let whose = match a.others_from {
        Some("message") => "other processes listed in the message".to_owned(),
        Some("live") => "other processes on the GPU now".to_owned(),
        Some("log") => "other processes, by the GPU state printed in the log".to_owned(),
        Some("jax") => "something outside JAX's preallocated pool (another process, or TensorFlow in the same one)".to_owned(),
        _ => "memory outside this process".to_owned(),
    };
    let mut message = if a.others_from == Some("init") {
        if a.info.style == Some(gpu_doctor_scan::OomStyle::ContextInit) {
            let on = a
                .info
                .gpu
                .map_or_else(String::new, |g| format!(" on GPU {g}"));
            format!(
                "Out of memory while CUDA was starting{on}, before the job allocated anything: the GPU's memory was already taken by another process (or another framework in this one)"
            )
        } else {
            format!(
                "Out of memory before the job held any GPU memory ({}): the GPU was already full, taken by another process (or another framework in this one)",
                asked_phrase(a)
            )
        }
    } else if a.others_from == Some("tiny") {
        format!(
            "Out of memory on a request of only {} straight from the driver: TensorFlow and XLA take memory for their pool in large regions, so the GPU was already full, taken by another process (or another framework in this one)",
            size(a.info.requested_bytes.unwrap_or(0))
        )
    } else if a.others_from == Some("prealloc") {
        format!(
            "Out of memory ({}) after JAX could not get its memory pool when it started: the driver refused JAX's preallocation and its smaller retries, so much of the GPU was already taken by another process (or another framework in this one)",
            asked_phrase(a)
        )
    } else if a.others_from == Some("jax") {
        format!(
            "Out of memory outside JAX's pool: {}; JAX preallocates 75% of the GPU, so the rest was taken by {whose}",
            asked_phrase(a)
        )
    } else {
        format!(
            "Out of memory because the GPU is held by someone else: {}, and {} belongs to {whose}",
            asked_phrase(a),
            size(others)
        )
    };
    if let Some(mine) = a.info.this_process_bytes.or(a.info.reserved_total_bytes) {
        let _ = write!(message, " while this process held only {}", size(mine));
    }
    message.push('.');
    let mut f = Finding::new("GD502", Cause::OomOtherProcess, Severity::Error, message)
        .confidence(0.8)
        .with_evidence(oom_evidence(a));
    // The refused preallocation is the evidence that others were there first.
    if a.others_from == Some("prealloc")
        && let Some(refused) = a.all.iter().find(|o| o.seq < a.primary.seq)
    {
        f = f.with_evidence(evidence(refused));
    }
    if let Some(g) = a.info.gpu {
        f = f.on_gpu(GpuIndex(g));
    }
    let listed: Vec<String> = if a.live_processes.is_empty() {
        a.info
            .other_processes
            .iter()
            .map(|(pid, b)| format!("pid {pid} holds {}", size(*b)))
            .collect()
    } else {
        a.live_processes
            .iter()
            .map(|(pid, b, cmd)| match cmd {
                Some(c) => format!("pid {pid} ({c}) holds {}", size(*b)),
                None => format!("pid {pid} holds {}", size(*b)),
            })
            .collect()
    };
    let pids: Vec<String> = if a.live_processes.is_empty() {
        a.info
            .other_processes
            .iter()
            .map(|(p, _)| p.to_string())
            .collect()
    } else {
        a.live_processes
            .iter()
            .map(|(p, _, _)| p.to_string())
            .collect()
    };
    f = f.with_remedy(
        "Find the processes holding the GPU",
        Some("nvidia-smi --query-compute-apps=pid,used_memory,name --format=csv".to_owned()),
        (!listed.is_empty()).then(|| listed.join("; ")),
    );
    f = f.with_remedy(
        "Stop them if they are stale (an earlier run, a notebook kernel, leftover dataloader workers)",
        Some(if pids.is_empty() {
            "kill <pid>".to_owned()
        } else {
            format!("kill {}", pids.join(" "))
        }),
        None,
    );
    let pick = match a.freest_gpu {
        Some((g, free)) => (
            format!("CUDA_VISIBLE_DEVICES={g} python train.py"),
            Some(format!("GPU {g} has {} free now", size(free))),
        ),
        None => ("gpu-doctor pick".to_owned(), None),
    };
    f = f.with_remedy("Or run on a GPU that is free", Some(pick.0), pick.1);
    if matches!(a.framework, Some(Framework::Jax | Framework::Tensorflow)) {
        f = f.with_remedy(
            "JAX and TensorFlow preallocate most of the GPU; stop a neighbour from doing so",
            Some("XLA_PYTHON_CLIENT_PREALLOCATE=false  # TensorFlow: tf.config.experimental.set_memory_growth(gpu, True)".to_owned()),
            None,
        );
    }
    vec![Hit {
        finding: f,
        seq: a.primary.seq,
    }]
}
