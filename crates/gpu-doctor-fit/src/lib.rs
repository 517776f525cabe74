//! Predicts the peak GPU memory of training and inference, and picks GPUs that fit.
//!
//! * [`model`]: a model's shape ([`ModelSpec`]) from a Hugging Face config.json or numbers,
//!   and its parameter count.
//! * [`estimate`](mod@estimate): the memory model, phase by phase ([`estimate()`]).
//! * [`plan`]: GPU memory budgets (live or a named model), the largest micro-batch that fits
//!   ([`max_batch`]) and which memory-saving options make a run fit ([`suggestions`]).
//! * [`pick`]: choosing GPUs by free memory, utilisation and health, with leases
//!   ([`pick::LeaseDir`]) so that jobs started together do not take the same GPU.
//!
//! Everything but the lease directory is pure: no driver, no clock.

// The docs name products (PyTorch, ViT, DeepSpeed ZeRO), not code items.
#![allow(clippy::doc_markdown)]

mod error;
pub mod estimate;
pub mod model;
pub mod pick;
pub mod plan;

pub use error::FitError;
pub use estimate::{
    Amp, Breakdown, CUDA_CONTEXT_BYTES, Dtype, Estimate, Mode, Optimizer, Phase, Settings, estimate,
};
pub use model::{Family, ModelSpec, ShapeArgs, parse_count};
pub use plan::{GpuModel, Suggestion, max_batch, suggestions};
