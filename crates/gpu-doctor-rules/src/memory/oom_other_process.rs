//! GD553: an out-of-memory because memory outside torch's cache filled the GPU.

use super::{MemoryFacts, OomFacts, oom_evidence, torch_bytes, with_gpu};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub const CODE: &str = "GD553";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-oom-other-process",
    cause: Some(Cause::OomOtherProcess),
    summary: "OOM where memory outside this PyTorch cache (another process) holds the GPU",
    body: "## What it does
Needs the device's capacity (snapshots do not carry it; NVML does). Fires when the request
would fit in the memory that is neither free nor reserved by this process's allocator, and
that memory is large: at least 1 GiB and a tenth of the GPU.

## Why is this bad?
Another process (a second job, a zombie data-loader worker, a notebook) or a non-PyTorch
library in this process holds the memory. Tuning this program does not help.

## Example
A 140 GiB GPU: 30 GiB reserved by PyTorch, 1 GiB free, 20 GiB asked: 109 GiB is held
elsewhere.

## How to fix
See who holds it: `nvidia-smi --query-compute-apps=pid,used_memory --format=csv`; stop it, or
run on a GPU that is free (`gpu-doctor pick`).
",
};

pub fn check(facts: &MemoryFacts, oom: &OomFacts) -> Option<Finding> {
    let total = facts.device_total_bytes?;
    let free = oom.device_free_bytes?;
    let elsewhere = total
        .saturating_sub(free)
        .saturating_sub(oom.reserved_bytes);
    if elsewhere < oom.requested_bytes || elsewhere < (1 << 30) || elsewhere < total / 10 {
        return None;
    }
    let message = format!(
        "Out of memory because {} of the GPU is held outside this process's PyTorch cache",
        torch_bytes(elsewhere)
    );
    let f = Finding::new(CODE, Cause::OomOtherProcess, Severity::Error, message)
        .confidence(0.7)
        .with_evidence(oom_evidence(facts, oom))
        .with_remedy(
            "See which processes hold GPU memory",
            Some("nvidia-smi --query-compute-apps=pid,used_memory --format=csv".into()),
            None,
        )
        .with_remedy(
            "Run on a GPU that is free",
            Some("gpu-doctor pick".into()),
            None,
        );
    Some(with_gpu(f, facts))
}
