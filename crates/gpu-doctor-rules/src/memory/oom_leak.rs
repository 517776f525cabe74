//! GD552: an out-of-memory preceded by steady growth at one site.

use super::{
    MemoryFacts, OomFacts, leak_evidence, leak_remedies, oom_evidence, torch_bytes, with_gpu,
};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub const CODE: &str = "GD552";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-oom-leak",
    cause: Some(Cause::OomLeak),
    summary: "OOM after one allocation site kept growing over the recording without freeing",
    body: "## What it does
Fires on a snapshot that ends in an out-of-memory when allocation sites whose live bytes grew
steadily over the recording (and are still alive) account for at least a tenth of the memory
allocated at the OOM.

## Why is this bad?
The OOM is the symptom; the cause is memory kept alive by mistake. A smaller batch only
delays it.

## Example
A training loop appends every `loss` to a list: each step keeps its activations, allocated
memory climbs by the same amount per step and the run dies after a few hundred steps.

## How to fix
Find what keeps tensors from that site alive: accumulate `loss.item()`, `.detach()` what you
log, clear lists of outputs. `gpu-doctor snapshot diff A B` on two snapshots shows what grew.
",
};

pub fn check(facts: &MemoryFacts, oom: &OomFacts) -> Option<Finding> {
    let grown: u64 = facts.leaks.iter().map(|l| l.growth_bytes).sum();
    let top = facts.leaks.first()?;
    if grown.saturating_mul(10) < oom.allocated_bytes.max(1) {
        return None;
    }
    let message = format!(
        "Out of memory after a leak: {} grew by {} over the recording and was never freed",
        top.site,
        torch_bytes(top.growth_bytes)
    );
    let mut f = Finding::new(CODE, Cause::OomLeak, Severity::Error, message)
        .confidence(0.8)
        .with_evidence(oom_evidence(facts, oom));
    for l in facts.leaks.iter().take(3) {
        f = f.with_evidence(leak_evidence(facts, l));
    }
    Some(with_gpu(leak_remedies(f, &top.site), facts))
}
