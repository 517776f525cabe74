//! Telling a job's framework its memory budget, through the environment it starts with.
//!
//! The fractions are of the budget less [`CONTEXT_ALLOWANCE_BYTES`] (what NVML counts beyond
//! the allocators); the MPS limit is the whole budget.
//!
//! | framework | how | what it does |
//! |---|---|---|
//! | `PyTorch` | `GPU_DOCTOR_MEMORY_FRACTION`, read by gpu-doctor's Python hook, which calls `torch.cuda.set_per_process_memory_fraction(f, d)` for every visible device | the caching allocator raises an out-of-memory error past the budget |
//! | JAX | `XLA_PYTHON_CLIENT_MEM_FRACTION` and `XLA_PYTHON_CLIENT_PREALLOCATE=false` | the BFC allocator's limit is the fraction; without preallocation the job holds only what it uses, up to it |
//! | `TensorFlow` | `TF_FORCE_GPU_ALLOW_GROWTH=true` | TF has no variable for a hard limit (`tf.config.set_logical_device_configuration(..., memory_limit=...)` is code); growth keeps it from taking the whole GPU at start, and the watch enforces the rest |
//! | MPS | `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=40G,1=40G` (only when an MPS server runs) | the MPS server refuses allocations past the limit, for any framework |
//!
//! JAX renamed its variable to `XLA_CLIENT_MEM_FRACTION`, and having both set is an error in
//! its CUDA plugin, which then falls back to the CPU: when the job's environment already has
//! one spelling, that one is used (see [`adapt`]). A budget never loosens a tighter fraction
//! the user set.

use gpu_doctor_model::units::GIB;

/// Read by gpu-doctor's Python hook (`sitecustomize.py`), which calls
/// `torch.cuda.set_per_process_memory_fraction` with it.
pub const TORCH_FRACTION_VAR: &str = "GPU_DOCTOR_MEMORY_FRACTION";
/// JAX's memory fraction, by the name every JAX version reads.
pub const JAX_FRACTION_VAR: &str = "XLA_PYTHON_CLIENT_MEM_FRACTION";
/// JAX's newer name for the same thing.
pub const JAX_FRACTION_VAR_NEW: &str = "XLA_CLIENT_MEM_FRACTION";
pub const JAX_PREALLOCATE_VAR: &str = "XLA_PYTHON_CLIENT_PREALLOCATE";
pub const TF_GROWTH_VAR: &str = "TF_FORCE_GPU_ALLOW_GROWTH";
pub const MPS_LIMIT_VAR: &str = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT";

/// What NVML counts for a process beyond its framework's allocator: the CUDA context, and
/// cuBLAS/cuDNN handles. On an H200 with PyTorch 2.11 a process with 120.00 GiB allocated
/// holds 120.51 GiB (`testdata/h200/err-oom.txt`); 768 MiB leaves room for the libraries'
/// handles. The allocators are given the budget less this, so a job that keeps to its
/// allocator's limit also keeps to its budget as NVML (and the watch) counts it.
pub const CONTEXT_ALLOWANCE_BYTES: u64 = 768 << 20;

/// The budget as a fraction of a GPU for the frameworks' allocators: the budget less the
/// context allowance (at most a quarter of a small budget), rounded down to three decimals
/// so that a framework that rounds it does not end up above the budget. `None` when the
/// total is unknown.
pub fn fraction(limit_bytes: u64, gpu_total_bytes: Option<u64>) -> Option<f64> {
    let total = gpu_total_bytes.filter(|&t| t > 0)?;
    let allocator = limit_bytes - CONTEXT_ALLOWANCE_BYTES.min(limit_bytes / 4);
    let f = (allocator as f64 / total as f64).min(1.0);
    Some(((f * 1000.0).floor() / 1000.0).max(0.001))
}

/// An MPS limit value: whole GiB as `40G`, else MiB as `40960M` (rounded down).
pub fn mps_size(bytes: u64) -> String {
    if bytes % (1 << 30) == 0 {
        format!("{}G", bytes >> 30)
    } else {
        format!("{}M", (bytes >> 20).max(1))
    }
}

/// The variables that tell each framework a budget of `limit_bytes` per GPU on GPUs of
/// `gpu_total_bytes`; `mps_devices` is how many devices the job sees when an MPS server
/// runs (`None`: no MPS). Without a known total only the byte-based settings are given.
pub fn framework_env(
    limit_bytes: u64,
    gpu_total_bytes: Option<u64>,
    mps_devices: Option<usize>,
) -> Vec<(String, String)> {
    let mut vars = Vec::new();
    if let Some(f) = fraction(limit_bytes, gpu_total_bytes) {
        vars.push((TORCH_FRACTION_VAR.to_owned(), format!("{f:.3}")));
        vars.push((JAX_FRACTION_VAR.to_owned(), format!("{f:.3}")));
    }
    vars.push((JAX_PREALLOCATE_VAR.to_owned(), "false".to_owned()));
    vars.push((TF_GROWTH_VAR.to_owned(), "true".to_owned()));
    if let Some(n) = mps_devices {
        let size = mps_size(limit_bytes);
        let value: Vec<String> = (0..n.clamp(1, 64)).map(|d| format!("{d}={size}")).collect();
        vars.push((MPS_LIMIT_VAR.to_owned(), value.join(",")));
    }
    vars
}

/// Fits the variables to the job's own environment (`existing` looks a name up there):
/// JAX's fraction goes under the spelling the job already uses, and a tighter fraction the
/// user set is kept rather than loosened.
pub fn adapt(
    vars: Vec<(String, String)>,
    existing: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let tighter = |name: &str, ours: &str| -> bool {
        match (
            existing(name).and_then(|v| v.trim().parse::<f64>().ok()),
            ours.parse::<f64>(),
        ) {
            (Some(theirs), Ok(ours)) => theirs > 0.0 && theirs <= ours,
            _ => false,
        }
    };
    vars.into_iter()
        .filter_map(|(name, value)| {
            if name == JAX_FRACTION_VAR {
                let spelling = if existing(JAX_FRACTION_VAR_NEW).is_some() {
                    JAX_FRACTION_VAR_NEW
                } else {
                    JAX_FRACTION_VAR
                };
                return (!tighter(spelling, &value)).then(|| (spelling.to_owned(), value));
            }
            if name == TORCH_FRACTION_VAR && tighter(TORCH_FRACTION_VAR, &value) {
                return None;
            }
            Some((name, value))
        })
        .collect()
}

/// `40.0 GiB` of `140.4 GiB` (28.5%): the budget in words, for messages.
pub fn describe(limit_bytes: u64, gpu_total_bytes: Option<u64>) -> String {
    match gpu_total_bytes.filter(|&t| t > 0) {
        Some(t) => format!(
            "{:.1} GiB of {:.1} GiB ({:.1}%)",
            limit_bytes as f64 / GIB,
            t as f64 / GIB,
            100.0 * limit_bytes as f64 / t as f64
        ),
        None => format!("{:.1} GiB", limit_bytes as f64 / GIB),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: u64 = 150_754_820_096;

    fn get<'a>(vars: &'a [(String, String)], name: &str) -> Option<&'a str> {
        vars.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_40_gib_budget_on_an_h200() {
        let vars = framework_env(40 << 30, Some(H200), None);
        // (40 GiB - 768 MiB) / 140.4 GiB, rounded down.
        assert_eq!(get(&vars, TORCH_FRACTION_VAR), Some("0.279"));
        assert_eq!(get(&vars, JAX_FRACTION_VAR), Some("0.279"));
        assert_eq!(get(&vars, JAX_PREALLOCATE_VAR), Some("false"));
        assert_eq!(get(&vars, TF_GROWTH_VAR), Some("true"));
        assert_eq!(get(&vars, MPS_LIMIT_VAR), None);
        // With the context on top, the allocator's limit stays within the budget.
        assert!(0.279 * H200 as f64 + CONTEXT_ALLOWANCE_BYTES as f64 <= (40u64 << 30) as f64);
        // A small budget keeps three quarters for the allocator.
        assert_eq!(fraction(1 << 30, Some(1 << 30)), Some(0.75));
    }

    #[test]
    fn mps_limits_cover_every_visible_device() {
        let vars = framework_env(40 << 30, Some(H200), Some(2));
        assert_eq!(get(&vars, MPS_LIMIT_VAR), Some("0=40G,1=40G"));
        assert_eq!(mps_size(1536 << 20), "1536M");
    }

    #[test]
    fn an_unknown_total_gives_no_fraction() {
        let vars = framework_env(40 << 30, None, None);
        assert_eq!(get(&vars, TORCH_FRACTION_VAR), None);
        assert_eq!(get(&vars, JAX_FRACTION_VAR), None);
        assert_eq!(fraction(400 << 30, Some(H200)), Some(1.0));
        assert_eq!(fraction(1, Some(H200)), Some(0.001));
    }

    #[test]
    fn adapt_uses_the_jobs_spelling_and_keeps_tighter_settings() {
        let vars = framework_env(40 << 30, Some(H200), None);
        let none = adapt(vars.clone(), |_| None);
        assert_eq!(get(&none, JAX_FRACTION_VAR), Some("0.279"));
        let renamed = adapt(vars.clone(), |n| {
            (n == JAX_FRACTION_VAR_NEW).then(|| "0.9".into())
        });
        assert_eq!(get(&renamed, JAX_FRACTION_VAR), None);
        assert_eq!(get(&renamed, JAX_FRACTION_VAR_NEW), Some("0.279"));
        let tighter = adapt(vars, |n| {
            (n == JAX_FRACTION_VAR || n == TORCH_FRACTION_VAR).then(|| "0.1".into())
        });
        assert_eq!(get(&tighter, JAX_FRACTION_VAR), None);
        assert_eq!(get(&tighter, TORCH_FRACTION_VAR), None);
        assert_eq!(get(&tighter, JAX_PREALLOCATE_VAR), Some("false"));
    }

    #[test]
    fn describe_budget() {
        assert_eq!(
            describe(40 << 30, Some(H200)),
            "40.0 GiB of 140.4 GiB (28.5%)"
        );
        assert_eq!(describe(40 << 30, None), "40.0 GiB");
    }
}
