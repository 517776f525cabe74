//! Planning against a memory budget: the named GPU models, the largest micro-batch that
//! fits ([`max_batch`]) and the memory-saving options that make a run fit ([`suggestions`]).

use crate::estimate::{Amp, Dtype, Mode, Optimizer, Settings, estimate};
use crate::model::ModelSpec;
use serde::Serialize;

const MIB: u64 = 1 << 20;

/// A GPU model and the memory NVML reports for it (`nvidia-smi`'s "Total"; a little under
/// the marketing size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GpuModel {
    pub name: &'static str,
    pub memory_total_bytes: u64,
}

/// Named GPUs for `--gpu-model`. Totals are what nvidia-smi shows on each part (H200:
/// 143771 MiB, seen in testdata/h200/smi.txt; the others from vendors' nvidia-smi output).
pub const GPU_MODELS: &[GpuModel] = &[
    GpuModel {
        name: "B200",
        memory_total_bytes: 183_359 * MIB,
    },
    GpuModel {
        name: "H200",
        memory_total_bytes: 143_771 * MIB,
    },
    GpuModel {
        name: "H100-NVL",
        memory_total_bytes: 95_830 * MIB,
    },
    GpuModel {
        name: "GH200",
        memory_total_bytes: 97_871 * MIB,
    },
    GpuModel {
        name: "H100-80GB",
        memory_total_bytes: 81_559 * MIB,
    },
    GpuModel {
        name: "A100-80GB",
        memory_total_bytes: 81_920 * MIB,
    },
    GpuModel {
        name: "A100-40GB",
        memory_total_bytes: 40_960 * MIB,
    },
    GpuModel {
        name: "L40S",
        memory_total_bytes: 46_068 * MIB,
    },
    GpuModel {
        name: "A6000",
        memory_total_bytes: 49_140 * MIB,
    },
    GpuModel {
        name: "L4",
        memory_total_bytes: 23_034 * MIB,
    },
    GpuModel {
        name: "A10",
        memory_total_bytes: 23_028 * MIB,
    },
    GpuModel {
        name: "T4",
        memory_total_bytes: 15_360 * MIB,
    },
    GpuModel {
        name: "V100-32GB",
        memory_total_bytes: 32_768 * MIB,
    },
    GpuModel {
        name: "V100-16GB",
        memory_total_bytes: 16_384 * MIB,
    },
    GpuModel {
        name: "RTX4090",
        memory_total_bytes: 24_564 * MIB,
    },
    GpuModel {
        name: "RTX3090",
        memory_total_bytes: 24_576 * MIB,
    },
];

impl GpuModel {
    /// Finds a model by name, ignoring case, spaces and dashes (`h100-80gb`, `A100 40GB`).
    pub fn find(name: &str) -> Option<GpuModel> {
        let norm = |s: &str| {
            s.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let want = norm(name);
        GPU_MODELS.iter().copied().find(|g| norm(g.name) == want)
    }

    pub fn names() -> Vec<&'static str> {
        GPU_MODELS.iter().map(|g| g.name).collect()
    }
}

/// The largest micro-batch (at most `limit`) whose whole footprint (reserved plus CUDA
/// context) fits in `budget_bytes`, or `None` when even one example does not.
///
/// Memory grows with the batch, so this is a binary search over [`estimate`]; the `run`
/// command's `--batch auto` starts from it.
pub fn max_batch(
    model: &ModelSpec,
    settings: &Settings,
    budget_bytes: u64,
    limit: u64,
) -> Option<u64> {
    let fits = |b: u64| {
        let s = Settings {
            batch: b,
            ..settings.clone()
        };
        estimate(model, &s).total_device_bytes <= budget_bytes
    };
    if limit == 0 || !fits(1) {
        return None;
    }
    let (mut lo, mut hi) = (1u64, limit);
    if fits(hi) {
        return Some(hi);
    }
    // Invariant: fits(lo), !fits(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// A memory-saving change to the run and what it does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suggestion {
    /// The flags that make the change (`--amp bf16`).
    pub flags: String,
    /// In words.
    pub description: String,
    /// Peak reserved bytes with the change.
    pub peak_reserved_bytes: u64,
    /// How much less the whole footprint needs than now (negative: more).
    pub saves_bytes: i64,
    /// Whether the requested batch then fits in the budget.
    pub fits: bool,
    /// The largest batch that then fits.
    pub max_batch: Option<u64>,
}

/// The memory-saving options that apply to `settings`, each alone and the strongest
/// combination, measured against `budget_bytes`; those that save most come first.
pub fn suggestions(
    model: &ModelSpec,
    settings: &Settings,
    budget_bytes: u64,
    limit: u64,
) -> Vec<Suggestion> {
    let base = estimate(model, settings).total_device_bytes;
    let train = settings.mode == Mode::Train;
    let mut variants: Vec<(String, String, Settings)> = Vec::new();
    let fp32 = settings.dtype == Dtype::Fp32;
    if fp32 && settings.amp.is_none() {
        variants.push((
            "--amp bf16".into(),
            "bf16 autocast over fp32 weights (torch.autocast(\"cuda\", dtype=torch.bfloat16))"
                .into(),
            Settings {
                amp: Some(Amp::Bf16),
                ..settings.clone()
            },
        ));
    }
    if fp32 {
        variants.push((
            "--dtype bf16".into(),
            "bf16 weights, gradients and optimizer states (model.to(torch.bfloat16))".into(),
            Settings {
                dtype: Dtype::Bf16,
                amp: None,
                ..settings.clone()
            },
        ));
    }
    if train && !settings.checkpointing {
        variants.push((
            "--checkpointing".into(),
            "activation checkpointing (model.gradient_checkpointing_enable())".into(),
            Settings {
                checkpointing: true,
                ..settings.clone()
            },
        ));
    }
    if train && matches!(settings.optimizer, Optimizer::Adamw | Optimizer::Adam) {
        variants.push((
            "--optimizer adamw8bit".into(),
            "8-bit AdamW states (bitsandbytes.optim.AdamW8bit)".into(),
            Settings {
                optimizer: Optimizer::Adamw8bit,
                ..settings.clone()
            },
        ));
    }
    if train && settings.gpus > 1 && settings.zero < 3 {
        for stage in (settings.zero + 1)..=3 {
            variants.push((
                format!("--zero {stage} --gpus {}", settings.gpus),
                match stage {
                    1 => "ZeRO-1: optimizer states sharded over the GPUs".to_owned(),
                    2 => "ZeRO-2: optimizer states and gradients sharded".to_owned(),
                    _ => "ZeRO-3 / FSDP full sharding: weights too".to_owned(),
                },
                Settings {
                    zero: stage,
                    ..settings.clone()
                },
            ));
        }
    }
    if train && !settings.checkpointing && fp32 && settings.amp.is_none() {
        variants.push((
            "--amp bf16 --checkpointing".into(),
            "bf16 autocast and activation checkpointing together".into(),
            Settings {
                amp: Some(Amp::Bf16),
                checkpointing: true,
                ..settings.clone()
            },
        ));
    }
    let mut out: Vec<Suggestion> = variants
        .into_iter()
        .map(|(flags, description, s)| {
            let e = estimate(model, &s);
            Suggestion {
                flags,
                description,
                peak_reserved_bytes: e.peak_reserved_bytes,
                saves_bytes: i64::try_from(base).unwrap_or(i64::MAX)
                    - i64::try_from(e.total_device_bytes).unwrap_or(i64::MAX),
                fits: e.total_device_bytes <= budget_bytes,
                max_batch: max_batch(model, &s, budget_bytes, limit),
            }
        })
        .filter(|s| s.saves_bytes > 0)
        .collect();
    out.sort_by(|a, b| {
        b.saves_bytes
            .cmp(&a.saves_bytes)
            .then_with(|| a.flags.cmp(&b.flags))
    });
    out
}

/// Bytes for a person: `1.5 GiB`, `512.0 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Parses a size such as `20GiB`, `20G`, `512MiB`, `1.5TB` (decimal units for `GB`/`TB`,
/// binary for `G`, `GiB`), or plain bytes.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" => 1024.0 * 1024.0,
        "mb" => 1e6,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "gb" => 1e9,
        "t" | "tib" => 1024.0f64.powi(4),
        "tb" => 1e12,
        _ => return None,
    };
    let bytes = v * mult;
    (0.0..1e18).contains(&bytes).then_some(bytes as u64)
}
