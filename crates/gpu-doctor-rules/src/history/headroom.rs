//! GD580: little GPU memory left.
//!
//! ## What it does
//! Flags a device whose free memory is below a threshold (default 5 % of its total).
//!
//! ## Why is this bad?
//! The next allocation that does not fit is an out-of-memory error; PyTorch's caching
//! allocator hides how close it is, since reserved memory looks used to the driver.
//!
//! ## How to fix
//! See which processes hold the memory (`gpu-doctor status`), and whether one of them is
//! growing (`gpu-doctor report`).

use gpu_doctor_model::{Cause, DeviceSample, Evidence, Finding, Severity, units::format_bytes};

pub const CODE: &str = "GD580";

pub(crate) static DOC: crate::registry::RuleDoc = crate::registry::RuleDoc {
    code: CODE,
    name: "little-headroom",
    cause: Some(Cause::OomCapacity),
    summary: "A GPU has under 5 % of its memory free",
    body: r"## What it does
Flags a device whose free memory is below 5 % of its total at the end of a window (`report`,
`watch`, `serve`).

## Why is this bad?
The next allocation that does not fit is an out-of-memory error; PyTorch's caching allocator
hides how close it is, since reserved memory looks used to the driver.

## Example
```
warn[GD580] oom_capacity [GPU 1]: GPU 1 has only 3.2 GiB free: the next large allocation will fail
```

## How to fix
See which processes hold the memory (`gpu-doctor status`), and whether one of them is growing
(`gpu-doctor report`).
",
};

/// A finding when `free / total` is below `min_free_fraction`.
pub fn headroom_finding(device: &DeviceSample, min_free_fraction: f64) -> Option<Finding> {
    let total = device.memory_total_bytes.get()?;
    let used = device.memory_used_bytes.get()?;
    let free = device
        .memory_free_bytes
        .get()
        .unwrap_or(total.saturating_sub(used));
    if total == 0 || free as f64 / total as f64 >= min_free_fraction {
        return None;
    }
    let mut evidence = Evidence {
        source: "nvml".into(),
        line: None,
        text: format!(
            "{} free of {} ({:.1} %)",
            format_bytes(free),
            format_bytes(total),
            free as f64 / total as f64 * 100.0
        ),
        values: std::collections::BTreeMap::new(),
    };
    evidence.values.insert("free_bytes".into(), free as f64);
    evidence.values.insert("total_bytes".into(), total as f64);
    Some(
        Finding::new(
            CODE,
            Cause::OomCapacity,
            Severity::Warn,
            format!(
                "GPU {} has only {} free: the next large allocation will fail",
                device.index,
                format_bytes(free)
            ),
        )
        .on_gpu(device.index)
        .confidence(0.5)
        .with_evidence(evidence)
        .with_remedy(
            "See which processes hold the memory and whether one is growing",
            Some(format!(
                "gpu-doctor status; gpu-doctor report --gpu {}",
                device.index
            )),
            None,
        ),
    )
}
