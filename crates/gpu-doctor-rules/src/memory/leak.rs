//! GD554: allocation sites whose live memory keeps growing (no OOM yet).

use super::{MemoryFacts, leak_evidence, leak_remedies, torch_bytes, with_gpu};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub const CODE: &str = "GD554";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-leak-candidate",
    cause: Some(Cause::OomLeak),
    summary: "An allocation site's live bytes grew through the recording and were not freed",
    body: "## What it does
Replays the snapshot's trace and samples each allocation site's live bytes after every tenth
of the recording. Fires for a site that grew in most tenths, hardly ever shrank, grew by at
least 1 MiB and 1% of the peak, and still has at least three allocations alive.

## Why is this bad?
Memory kept alive by mistake grows every step until the job dies with an out-of-memory hours
later, far from the line that holds on to it.

## Example
`losses.append(loss)` in the training loop keeps every step's graph alive: the site of the
forward pass grows by the same amount per step.

## How to fix
Accumulate `loss.item()`, `.detach()` what you log, clear lists of outputs; compare two
snapshots with `gpu-doctor snapshot diff A B`.
",
};

pub fn check(facts: &MemoryFacts) -> Vec<Finding> {
    facts
        .leaks
        .iter()
        .take(3)
        .map(|l| {
            let message = format!(
                "Live memory from {} grew by {} over the recording and was not freed",
                l.site,
                torch_bytes(l.growth_bytes)
            );
            let f = Finding::new(CODE, Cause::OomLeak, Severity::Warn, message)
                .confidence(0.7)
                .with_evidence(leak_evidence(facts, l));
            with_gpu(leak_remedies(f, &l.site), facts)
        })
        .collect()
}
