//! Memory budgets on shared GPUs.
//!
//! Several jobs on one GPU is where "another process took the memory" comes from, and
//! cgroups cannot limit GPU memory. This crate owns what gpu-doctor does about it:
//!
//! - [`config`]: the budget file of `gpu-doctor guard` (per user or group, per GPU).
//! - [`policy`]: the pure decision, `evaluate(config, sample, owners, accounts, euid)`:
//!   which processes are over their budget, and whether to warn or stop them. It never
//!   picks a process of root, one no rule names, or (for a guard that is not root) one of
//!   another user.
//! - [`enforce`]: stopping one process cleanly (SIGTERM, grace, SIGKILL), always re-checking
//!   that the pid is still the same process first.
//! - [`watch`]: the budget of `gpu-doctor run --memory-limit`: the job's own memory against
//!   its budget, and the finding when it is over.
//! - [`frameworks`]: the variables that tell `PyTorch`, JAX, `TensorFlow` and MPS the budget.
//! - [`mps`]: whether an MPS control daemon or server runs, and its limits.
//! - [`proc`]: owners, start times and job trees from `/proc`, and account names.
//! - [`findings`]: the GD590–GD599 findings.

pub mod config;
pub mod enforce;
pub mod findings;
pub mod frameworks;
pub mod mps;
pub mod policy;
pub mod proc;
pub mod watch;

pub use config::{Action, Budget, Config, ConfigError, Limit, Subject};
pub use enforce::{StopOutcome, stop_group, stop_process};
pub use frameworks::framework_env;
pub use mps::MpsStatus;
pub use policy::{Verdict, evaluate};
pub use proc::{Accounts, ProcOwner, ProcRoot};
pub use watch::{BudgetReport, BudgetThread, BudgetWatch, JobRoot, Step};
