//! Whether the CUDA Multi-Process Service runs here, and with which limits: the probe lives
//! in `gpu-doctor-env` (so `check` sees it too); this module applies it to a [`ProcRoot`].

use crate::proc::ProcRoot;
pub use gpu_doctor_env::mps::{MpsStatus, Role, classify};

/// Looks for MPS under `proc`.
pub fn detect(proc: &ProcRoot) -> MpsStatus {
    gpu_doctor_env::mps::detect(proc.path())
}
