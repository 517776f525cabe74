//! GD503: out of memory after memory climbed step by step.

use super::gd500_oom_capacity::{asked_phrase, oom_evidence};
use super::oom::{Growth, OomAnalysis};
use super::{Hit, Input, evidence, size};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, GpuIndex, Severity};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD503",
    name: "oom-leak",
    cause: Some(Cause::OomLeak),
    summary: "Out of memory after memory climbed steadily over iterations: a leak",
    body: r#"## What it does
Finds out-of-memory errors preceded by memory readings the job printed (`memory_allocated`,
`mem: 12.3G`, an `nvidia-smi` log, bare `step bytes` pairs) that climbed steadily, and kept climbing in the second
half of the run, rather than levelling off after warm-up.

It also reports PyTorch out-of-memory errors raised inside an evaluation function of the
training script (`validate`, `validation_step`, `evaluate`, `evaluation_loop`: the Python
traceback names it) when the numbers point to no other cause, with less confidence.

## Why is this bad?
A training step should need the same memory every time. Memory that grows every step is kept
alive by something: a loss tensor accumulated with its graph (`total += loss`), outputs stored
in a list, a cache that never evicts. A smaller batch only postpones the OOM.

## Example
```
step 0 mem: 0.13 GB
step 10 mem: 0.47 GB
...
step 50 mem: 1.81 GB
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ...
```

## How to fix
1. Accumulate Python numbers, not tensors: `total_loss += loss.item()`.
2. Store `.detach().cpu()` copies of anything kept across steps; run evaluation under
   `torch.no_grad()` (an evaluation without it keeps every batch's graph alive as long as
   its outputs are kept).
3. Find what holds the memory: record the allocator history and read it with
   `gpu-doctor snapshot`:
   `torch.cuda.memory._record_memory_history(max_entries=100000)` …
   `torch.cuda.memory._dump_snapshot("leak.pickle")`.
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let Some(a) = &input.oom else {
        return Vec::new();
    };
    if a.cause != Cause::OomLeak {
        return Vec::new();
    }
    let Some(g) = &a.growth else {
        return a
            .info
            .during_evaluation
            .as_deref()
            .map(|function| vec![in_evaluation(a, function)])
            .unwrap_or_default();
    };
    let message = format!(
        "Out of memory after a leak: memory climbed from {} to {} over {} readings before the failure ({}).",
        size(g.first_bytes),
        size(g.last_bytes),
        g.readings,
        asked_phrase(a)
    );
    let mut f = Finding::new("GD503", Cause::OomLeak, Severity::Error, message)
        .confidence(0.75)
        .with_evidence(evidence(&g.first))
        .with_evidence(evidence(&g.last))
        .with_evidence(oom_evidence(a));
    if let Some(gpu) = a.info.gpu {
        f = f.on_gpu(GpuIndex(gpu));
    }
    for (action, command, detail) in leak_remedies(g) {
        f = f.with_remedy(action, command, detail);
    }
    vec![Hit {
        finding: f,
        seq: g.first.seq,
    }]
}

/// An OOM in an evaluation step with no readings around it: the evaluation-time leaks.
fn in_evaluation(a: &OomAnalysis, function: &str) -> Hit {
    let message = format!(
        "Out of memory during evaluation (in `{function}`): {}. Evaluation needs less memory than the training step, so this usually means autograd was left on or outputs were kept on the GPU from batch to batch.",
        asked_phrase(a)
    );
    let mut f = Finding::new("GD503", Cause::OomLeak, Severity::Error, message)
        .confidence(0.5)
        .with_evidence(oom_evidence(a))
        .with_remedy(
            "Evaluate without autograd, so no graph is kept per batch",
            Some(format!("with torch.no_grad():  # or @torch.inference_mode() on {function}()")),
            None,
        )
        .with_remedy(
            "Keep what you collect as CPU copies or numbers, not GPU tensors",
            Some("preds.append(out.detach().cpu()); total_loss += loss.item()".to_owned()),
            Some("Hugging Face Trainer: set eval_accumulation_steps so predictions move to the CPU as they come".to_owned()),
        )
        .with_remedy(
            "If the evaluation batch is larger than the training batch, lower it",
            Some("per_device_eval_batch_size=... or the validation DataLoader's batch_size".to_owned()),
            None,
        );
    if let Some(gpu) = a.info.gpu {
        f = f.on_gpu(GpuIndex(gpu));
    }
    Hit {
        finding: f,
        seq: a.primary.seq,
    }
}

/// Remedies for a climb, shared with GD570.
pub(crate) fn leak_remedies(g: &Growth) -> Vec<(String, Option<String>, Option<String>)> {
    let rate = g
        .per_step_bytes
        .map(|b| format!("about {} per step", size(b.round() as u64)));
    vec![
        (
            "Keep nothing from a step alive by accident: accumulate numbers, not tensors".to_owned(),
            Some("total_loss += loss.item()  # not: total_loss += loss".to_owned()),
            rate,
        ),
        (
            "Detach what you store across steps and evaluate without building graphs".to_owned(),
            Some("history.append(out.detach().cpu())  # and: with torch.no_grad(): evaluate()".to_owned()),
            None,
        ),
        (
            "Record the allocator's history and see which code holds the memory".to_owned(),
            Some("torch.cuda.memory._record_memory_history(max_entries=100000); ...; torch.cuda.memory._dump_snapshot(\"leak.pickle\")  # then: gpu-doctor snapshot leak.pickle".to_owned()),
            None,
        ),
    ]
}
