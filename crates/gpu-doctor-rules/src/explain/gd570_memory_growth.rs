//! GD570: memory climbs step by step (no OOM yet).

use super::gd503_oom_leak::leak_remedies;
use super::oom::growth_before;
use super::{Hit, Input, evidence, size};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD570",
    name: "memory-growth",
    cause: Some(Cause::OomLeak),
    summary: "GPU memory climbs steadily over iterations: a leak that will end in an OOM",
    body: r"## What it does
Finds memory readings the job printed (`memory_allocated`, `mem: 12.3G`, an `nvidia-smi
--query-gpu=memory.used` log, bare `step bytes` pairs from `print(step,
torch.cuda.memory_allocated())`) that climb steadily and keep climbing in the second half of the
run, when no out-of-memory error has happened (yet). With an OOM, GD503 reports it instead.

## Why is this bad?
A training or inference step should need the same memory every time. Steady growth means
something keeps tensors alive across steps; the job will run out of memory eventually, or
already holds memory that other jobs could use.

## Example
```
step 0 mem: 0.13 GB
step 10 mem: 0.47 GB
step 20 mem: 0.81 GB
step 30 mem: 1.14 GB
```

## How to fix
1. Accumulate numbers, not tensors: `total_loss += loss.item()`.
2. Detach anything stored across steps; evaluate under `torch.no_grad()`.
3. Record the allocator history and read it with `gpu-doctor snapshot`.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    if input.oom.is_some() {
        return Vec::new();
    }
    let Some(g) = growth_before(input.facts, None) else {
        return Vec::new();
    };
    let message = format!(
        "GPU memory climbed steadily from {} to {} over {} readings: something keeps memory alive across steps, and the job will run out of memory if it runs long enough.",
        size(g.first_bytes),
        size(g.last_bytes),
        g.readings
    );
    let mut f = Finding::new("GD570", Cause::OomLeak, Severity::Warn, message)
        .confidence(0.6)
        .with_evidence(evidence(&g.first))
        .with_evidence(evidence(&g.last));
    for (action, command, detail) in leak_remedies(&g) {
        f = f.with_remedy(action, command, detail);
    }
    vec![Hit {
        finding: f,
        seq: g.first.seq,
    }]
}
