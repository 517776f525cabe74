//! Runs a job, finds out why it failed and decides how to bring it back.
//!
//! The crate has a pure half and a thin impure one:
//! - [`policy`]: from an attempt's findings, the allocator state, GPU events and GPU state to
//!   a [`policy::Decision`] (pure, table-tested);
//! - [`batch`], [`allocconf`]: the argv and environment rewrites a decision turns into (pure);
//! - [`checkpoint`]: the newest complete checkpoint to resume from;
//! - [`memstats`]: what the injected Python hook saved at an out-of-memory error;
//! - [`driver`]: one child in its own process group, output passed through with a bounded
//!   tail kept, signals forwarded, no orphans left;
//! - [`monitor`]: GPU samples on a background thread (peak memory, events, state for the
//!   policy);
//! - [`hook`]: the `sitecustomize` injected into Python jobs;
//! - [`supervisor`]: the loop that ties them together, and [`report`], what it writes.

// "PyTorch", "CuPy" and "NVML" in the docs are names, not code to put in backticks.
#![allow(clippy::doc_markdown)]

pub mod allocconf;
pub mod batch;
pub mod checkpoint;
pub mod driver;
pub mod hook;
pub mod memstats;
pub mod monitor;
pub mod policy;
pub mod report;
pub mod supervisor;
