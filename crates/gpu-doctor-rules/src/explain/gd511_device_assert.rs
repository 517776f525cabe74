//! GD511: a device-side assertion failed (CUDA 710).

use super::{Hit, Input, evidence, ranks_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};
use std::fmt::Write as _;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD511",
    name: "device-side-assert",
    cause: Some(Cause::DeviceAssert),
    summary: "A device-side assert failed (CUDA 710): usually an index or label out of range",
    body: r#"## What it does
Finds `device-side assert triggered` (CUDA error 710, or 59 in CUDA ≤ 9) and the kernel's own
assertion line (`Indexing.cu:1515: indexSelectSmallIndex: ... Assertion `srcIndex <
srcSelectDimSize` failed.`), and says what the assertion means.

## Why is this bad?
The kernel found bad data and stopped. The error is sticky: the process must restart, and
every CUDA error after it (cuBLAS, NCCL, "illegal memory access") is a knock-on. The
traceback's line is usually not the culprit, because kernel errors are reported late.

## Example
```
Indexing.cu:1515: indexSelectSmallIndex: block: [0,0,0], thread: [0,0,0] Assertion
`srcIndex < srcSelectDimSize` failed.
torch.AcceleratorError: CUDA error: device-side assert triggered
```
An embedding lookup got a token id ≥ the embedding's size.

## How to fix
1. `srcIndex < srcSelectDimSize`: a token id ≥ `num_embeddings`; resize the embeddings to the
   tokenizer (`model.resize_token_embeddings(len(tokenizer))`) or fix the vocabulary size.
2. `t >= 0 && t < n_classes`: a class label outside `[0, num_classes)`; check the labels and
   the model's output size.
3. `input_val >= zero && input_val <= one`: `BCELoss` got values outside [0, 1]; use
   `BCEWithLogitsLoss`.
4. Otherwise rerun on the CPU, or with `CUDA_LAUNCH_BLOCKING=1`, for a readable error at the
   right line.
"#,
};

/// What an assertion's condition usually means.
fn meaning(assertion: &str) -> Option<(&'static str, &'static str)> {
    let a = assertion;
    if a.contains("srcIndex < srcSelectDimSize") || a.contains("index out of bounds") {
        Some((
            "an index is at least the size of the dimension it indexes: typically a token id ≥ the embedding's num_embeddings (tokenizer and model vocabularies differ)",
            "assert int(input_ids.max()) < model.get_input_embeddings().num_embeddings  # fix: model.resize_token_embeddings(len(tokenizer))",
        ))
    } else if a.contains("n_classes") || a.contains("cur_target") || a.contains("target") {
        Some((
            "a class label is outside [0, num_classes): the labels and the model's output size disagree",
            "assert int(labels.min()) >= 0 and int(labels.max()) < num_classes",
        ))
    } else if a.contains("input_val >= zero") || a.contains("input_val <= one") {
        Some((
            "BCELoss got values outside [0, 1]",
            "loss_fn = torch.nn.BCEWithLogitsLoss()  # takes raw logits",
        ))
    } else if a.contains("index >= -sizes") || a.contains("idx_dim") || a.contains("index") {
        Some((
            "an index is out of bounds for the tensor it indexes",
            "assert int(index.max()) < tensor.shape[dim] and int(index.min()) >= -tensor.shape[dim]",
        ))
    } else {
        None
    }
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let obs = &input.facts.observations;
    let asserts: Vec<&Observation> = obs
        .iter()
        .filter(|o| matches!(o.kind, ObsKind::DeviceAssert { .. }))
        .collect();
    let errors: Vec<&Observation> = obs
        .iter()
        .filter(|o| matches!(&o.kind, ObsKind::CudaError(e) if e.code == Some(710)))
        .collect();
    let Some(first) = asserts.first().or(errors.first()) else {
        return Vec::new();
    };
    let (assertion, location) = match asserts.first().map(|o| &o.kind) {
        Some(ObsKind::DeviceAssert {
            assertion,
            location,
        }) => (Some(assertion.clone()), location.clone()),
        _ => (None, None),
    };
    let mut all = asserts.clone();
    all.extend(errors.iter());
    let mut message = String::from("A device-side assertion failed");
    if let Some(a) = &assertion {
        let _ = write!(message, ": `{a}`");
    }
    if let Some(l) = &location {
        let _ = write!(message, " in {l}");
    }
    message.push_str(&ranks_phrase(&all));
    let meaning = assertion.as_deref().and_then(meaning);
    match meaning {
        Some((m, _)) => {
            let _ = write!(message, "; {m}.");
        }
        None => message
            .push_str("; the kernel found invalid input (often an index or label out of range)."),
    }
    let mut f = Finding::new("GD511", Cause::DeviceAssert, Severity::Error, message)
        .confidence(if assertion.is_some() { 0.95 } else { 0.85 })
        .with_evidence(evidence(first));
    if let Some(e) = errors.first()
        && e.seq != first.seq
    {
        f = f.with_evidence(evidence(e));
    }
    if asserts.len() > 1 {
        f = f.with_evidence(gpu_doctor_model::Evidence {
            source: first.source.clone(),
            line: None,
            text: format!("{} assertion lines in all", asserts.len()),
            values: [("assertions".to_owned(), asserts.len() as f64)]
                .into_iter()
                .collect(),
        });
    }
    if let Some((_, check)) = meaning {
        f = f.with_remedy(
            "Check the data the assertion is about before it reaches the GPU",
            Some(check.to_owned()),
            None,
        );
    }
    f = f
        .with_remedy(
            "Rerun with synchronous launches (or on the CPU) to get the error at the right line",
            Some("CUDA_LAUNCH_BLOCKING=1 python train.py".to_owned()),
            Some(
                "on the CPU the same bug raises a plain IndexError with the offending value"
                    .to_owned(),
            ),
        )
        .with_remedy(
            "Restart the process: the CUDA context is unusable after a device-side assert",
            None,
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
