//! GD556: memory that grew between two snapshots of the same program.

use super::torch_bytes;
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Evidence, Finding, Severity};

pub const CODE: &str = "GD556";

pub static DOC: RuleDoc = RuleDoc {
    code: CODE,
    name: "snapshot-growth",
    cause: Some(Cause::OomLeak),
    summary: "Allocated memory grew between two snapshots, and which sites grew",
    body: "## What it does
`gpu-doctor snapshot diff A B` compares the memory alive at the end of two snapshots, by
Python allocation site. Fires when allocated memory grew by at least 64 MiB and 10%.

## Why is this bad?
Two snapshots taken at the same point of different steps should hold the same memory. Growth
between them is memory kept alive by mistake, and it ends in an out-of-memory.

## Example
Snapshots at step 100 and step 400 of a loop that appends `loss` to a list: the forward
pass's sites hold three hundred more steps of activations.

## How to fix
Look at the sites that grew: accumulate `loss.item()`, `.detach()` what you log, clear caches
keyed by step.
",
};

/// One site's change between the snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteGrowth {
    pub site: String,
    pub before_bytes: u64,
    pub after_bytes: u64,
}

/// What `snapshot diff` measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GrowthFacts {
    pub source: String,
    pub allocated_before_bytes: u64,
    pub allocated_after_bytes: u64,
    /// Sites that grew, most first.
    pub grown: Vec<SiteGrowth>,
}

pub fn check(facts: &GrowthFacts) -> Option<Finding> {
    let before = facts.allocated_before_bytes;
    let after = facts.allocated_after_bytes;
    let grew = after.saturating_sub(before);
    if grew < (64 << 20) || grew.saturating_mul(10) < before {
        return None;
    }
    let mut f = Finding::new(
        CODE,
        Cause::OomLeak,
        Severity::Warn,
        format!(
            "Allocated memory grew by {} between the snapshots ({} to {})",
            torch_bytes(grew),
            torch_bytes(before),
            torch_bytes(after)
        ),
    )
    .confidence(0.6);
    for s in facts.grown.iter().take(3) {
        let mut values = std::collections::BTreeMap::new();
        values.insert("before_bytes".into(), s.before_bytes as f64);
        values.insert("after_bytes".into(), s.after_bytes as f64);
        f = f.with_evidence(Evidence {
            source: facts.source.clone(),
            line: None,
            text: format!(
                "{}: {} to {}",
                s.site,
                torch_bytes(s.before_bytes),
                torch_bytes(s.after_bytes)
            ),
            values,
        });
    }
    let site = facts
        .grown
        .first()
        .map_or("the sites listed", |s| s.site.as_str());
    Some(f.with_remedy(
        format!("Find what keeps the tensors from {site} alive between steps"),
        None,
        Some("accumulate `loss.item()`, `.detach()` what you log, clear lists of outputs".into()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_only_past_both_thresholds() {
        let mut facts = GrowthFacts {
            source: "b.pickle".into(),
            allocated_before_bytes: 1 << 30,
            allocated_after_bytes: (1 << 30) + (50 << 20),
            grown: vec![],
        };
        assert!(check(&facts).is_none(), "50 MiB is under 64 MiB");
        facts.allocated_after_bytes = 2 << 30;
        let f = check(&facts).expect("1 GiB growth");
        assert_eq!(f.code.0, CODE);
        assert_eq!(f.cause, Cause::OomLeak);
    }
}
