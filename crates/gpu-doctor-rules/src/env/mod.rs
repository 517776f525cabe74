//! The environment rules behind `gpu-doctor check`: pure functions from [`EnvFacts`] to a
//! checklist of [`CheckResult`]s (`pass`, `warn`, `fail`, `skip`, each with a message and
//! the exact fix) and the [`Finding`]s behind every check that did not pass.
//!
//! Codes: GD400–GD499 environment (this module), `GD1xx` / `GD25x` / `GD3xx` GPU health (in
//! [`crate::health`], run here once per GPU). Check ids (`driver.version_mismatch`,
//! `torch.cuda_build`, `gpu0.ecc`, ...) are an interface: scripts gate on them.

mod checks;
mod docs;
mod driver;
mod frameworks;
pub mod knowledge;
mod variables;
mod xid;

pub use checks::{CheckResult, CheckStatus, Checklist};
pub use docs::RULES;
pub use knowledge::{DriverVerdict, Knowledge, Version, arch_runs_on, driver_runs};
pub use variables::parse_alloc_conf;

use gpu_doctor_env::EnvFacts;
use gpu_doctor_model::Finding;

/// The checklist and the findings of every check that did not pass, worst first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    pub checks: Vec<CheckResult>,
    pub findings: Vec<Finding>,
}

/// Runs every environment and GPU-health check over the facts.
pub fn evaluate(facts: &EnvFacts) -> Report {
    let mut list = Checklist::default();
    let ctx = driver::Context::new(facts);
    driver::check(facts, &ctx, &mut list);
    frameworks::check(facts, &ctx, &mut list);
    variables::check(facts, &ctx, &mut list);
    crate::health::gpu_checks(&facts.gpus, &mut list);
    crate::sharing::mig_checks(&facts.gpus, &mut list);
    crate::sharing::mps_check(facts, &mut list);
    xid::check(facts, &mut list);
    list.into_report()
}
