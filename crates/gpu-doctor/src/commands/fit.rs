//! `gpu-doctor fit`: the peak GPU memory of a training or inference run, its breakdown, the
//! largest micro-batch that fits on each local GPU (or a named model), and the options that
//! make it fit. The estimator is `gpu_doctor_fit`; this module gathers the GPUs' free memory
//! and renders. Exit status: 0 when the run fits on some GPU (or none was asked about),
//! 1 when it fits on none, 2 on bad input.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::Style;
use clap::{Args, ValueEnum};
use gpu_doctor_fit::plan::{GpuModel, human_bytes};
use gpu_doctor_fit::{
    Amp, Dtype, Estimate, FitError, Mode, ModelSpec, Optimizer, Settings, ShapeArgs, Suggestion,
    estimate, max_batch, parse_count, suggestions,
};
use gpu_doctor_model::SCHEMA_VERSION;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Largest batch the search considers.
const BATCH_LIMIT: u64 = 1 << 16;

#[derive(Debug, Args)]
pub struct FitArgs {
    /// A Hugging Face config.json (gpt2, llama, mistral, qwen2, bert, t5, vit).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Parameter count (7B, 350M, ...) when there is no config.json.
    #[arg(long, value_name = "COUNT", conflicts_with = "config")]
    pub params: Option<String>,
    #[arg(long, conflicts_with = "config")]
    pub layers: Option<u64>,
    #[arg(long, conflicts_with = "config")]
    pub hidden: Option<u64>,
    #[arg(long, conflicts_with = "config")]
    pub heads: Option<u64>,
    #[arg(long, conflicts_with = "config")]
    pub kv_heads: Option<u64>,
    #[arg(long, conflicts_with = "config")]
    pub vocab: Option<u64>,
    #[arg(long, conflicts_with = "config")]
    pub intermediate: Option<u64>,
    #[arg(long, value_enum, default_value_t = ModeArg::Train)]
    pub mode: ModeArg,
    /// Micro-batch per GPU.
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    /// Tokens per example (ignored by ViT, whose patches fix it).
    #[arg(long, default_value_t = 512)]
    pub seq: u64,
    /// Tokens to generate after the prompt, with a KV cache (inference).
    #[arg(long, default_value_t = 0)]
    pub new_tokens: u64,
    /// The weights' dtype.
    #[arg(long, value_enum, default_value_t = DtypeArg::Fp32)]
    pub dtype: DtypeArg,
    /// Autocast over fp32 weights.
    #[arg(long, value_enum)]
    pub amp: Option<AmpArg>,
    #[arg(long, value_enum, default_value_t = OptimizerArg::Adamw)]
    pub optimizer: OptimizerArg,
    /// Activation (gradient) checkpointing.
    #[arg(long)]
    pub checkpointing: bool,
    /// ZeRO stage (3 is also FSDP full sharding), over --gpus.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub zero: u8,
    /// GPUs the run is sharded over (with --zero).
    #[arg(long, default_value_t = 1)]
    pub gpus: u64,
    /// Check against a GPU model instead of the local GPUs (H200, H100-80GB, A100-40GB, ...).
    #[arg(long, value_name = "NAME")]
    pub gpu_model: Option<String>,
    /// Print JSON (see docs/fit.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Train,
    Infer,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DtypeArg {
    Fp32,
    Bf16,
    Fp16,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AmpArg {
    Bf16,
    Fp16,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OptimizerArg {
    Adamw,
    Adam,
    Sgd,
    Adamw8bit,
}

/// One GPU (or GPU model) the run was checked against.
#[derive(Debug, Clone, Serialize)]
struct Target {
    /// NVML index of a local GPU; absent for a named model.
    gpu: Option<u32>,
    name: String,
    /// `nvml` (free memory now) or `model` (the model's total memory).
    source: &'static str,
    budget_bytes: u64,
    fits: bool,
    headroom_bytes: i64,
    max_batch: Option<u64>,
}

/// A GPU to check against: (local index, name, where the figure came from, free bytes).
type GpuTarget = (Option<u32>, String, &'static str, u64);

fn fit_error(e: &FitError) -> anyhow::Error {
    let hint = e.hint();
    Hinted::new(e.to_string(), hint)
}

fn settings_of(args: &FitArgs) -> anyhow::Result<Settings> {
    if args.batch == 0 || args.seq == 0 || args.gpus == 0 {
        return Err(Hinted::new(
            "--batch, --seq and --gpus must be at least 1",
            "e.g. `--batch 8 --seq 1024`",
        ));
    }
    if args.batch > 1 << 24
        || args.seq > 1 << 24
        || args.new_tokens > 1 << 24
        || args.gpus > 1 << 16
    {
        return Err(Hinted::new(
            "--batch, --seq, --new-tokens or --gpus is implausibly large",
            "give the per-GPU micro-batch and the sequence length in tokens",
        ));
    }
    let mode = match args.mode {
        ModeArg::Train => Mode::Train,
        ModeArg::Infer => Mode::Infer,
    };
    if mode == Mode::Train && args.new_tokens > 0 {
        return Err(Hinted::new(
            "--new-tokens is for inference",
            "add `--mode infer`, or drop --new-tokens",
        ));
    }
    Ok(Settings {
        mode,
        batch: args.batch,
        seq: args.seq,
        new_tokens: args.new_tokens,
        dtype: match args.dtype {
            DtypeArg::Fp32 => Dtype::Fp32,
            DtypeArg::Bf16 => Dtype::Bf16,
            DtypeArg::Fp16 => Dtype::Fp16,
        },
        amp: args.amp.map(|a| match a {
            AmpArg::Bf16 => Amp::Bf16,
            AmpArg::Fp16 => Amp::Fp16,
        }),
        optimizer: match args.optimizer {
            OptimizerArg::Adamw => Optimizer::Adamw,
            OptimizerArg::Adam => Optimizer::Adam,
            OptimizerArg::Sgd => Optimizer::Sgd,
            OptimizerArg::Adamw8bit => Optimizer::Adamw8bit,
        },
        checkpointing: args.checkpointing,
        zero: args.zero,
        gpus: args.gpus,
    })
}

fn model_of(args: &FitArgs) -> anyhow::Result<ModelSpec> {
    if let Some(path) = &args.config {
        return ModelSpec::from_config_file(path).map_err(|e| fit_error(&e));
    }
    let params = args
        .params
        .as_deref()
        .map(parse_count)
        .transpose()
        .map_err(|e| fit_error(&e))?;
    ModelSpec::from_shape(&ShapeArgs {
        params,
        layers: args.layers,
        hidden: args.hidden,
        heads: args.heads,
        kv_heads: args.kv_heads,
        vocab: args.vocab,
        intermediate: args.intermediate,
    })
    .map_err(|e| fit_error(&e))
}

/// The budgets to check: the named model, else every local GPU's free memory. A missing
/// driver is not an error: the estimate still stands, and stderr says how to name a GPU.
fn budgets(ctx: &Context, args: &FitArgs) -> anyhow::Result<Vec<GpuTarget>> {
    if let Some(name) = &args.gpu_model {
        let Some(g) = GpuModel::find(name) else {
            return Err(Hinted::new(
                format!("unknown GPU model `{name}`"),
                format!("known: {}", GpuModel::names().join(", ")),
            ));
        };
        return Ok(vec![(
            None,
            g.name.to_owned(),
            "model",
            g.memory_total_bytes,
        )]);
    }
    let opened = ctx.open_source().and_then(|mut src| {
        let inv = src.inventory()?;
        let sample = src.sample()?;
        Ok((inv, sample))
    });
    match opened {
        Ok((inv, sample)) => Ok(sample
            .devices
            .iter()
            .filter_map(|d| {
                let free = d.memory_free_bytes.get()?;
                let name = inv
                    .devices
                    .iter()
                    .find(|i| i.index == d.index)
                    .map_or_else(|| "GPU".to_owned(), |i| i.name.clone());
                Some((Some(d.index.0), name, "nvml", free))
            })
            .collect()),
        Err(e) => {
            eprintln!(
                "note: no local GPU to check against ({e:#}); pass --gpu-model NAME (e.g. H100-80GB)"
            );
            Ok(Vec::new())
        }
    }
}

pub fn run(ctx: &Context, args: FitArgs) -> anyhow::Result<ExitStatus> {
    let settings = settings_of(&args)?;
    let model = model_of(&args)?;
    let est = estimate(&model, &settings);
    let targets: Vec<Target> = budgets(ctx, &args)?
        .into_iter()
        .map(|(gpu, name, source, budget)| Target {
            gpu,
            name,
            source,
            budget_bytes: budget,
            fits: est.total_device_bytes <= budget,
            headroom_bytes: i64::try_from(budget).unwrap_or(i64::MAX)
                - i64::try_from(est.total_device_bytes).unwrap_or(i64::MAX),
            max_batch: max_batch(&model, &settings, budget, BATCH_LIMIT),
        })
        .collect();
    // Suggestions are measured against the roomiest GPU: the one a fix helps first.
    let roomiest = targets
        .iter()
        .max_by_key(|t| (t.budget_bytes, std::cmp::Reverse(t.gpu)));
    let sugg = roomiest.map_or_else(Vec::new, |t| {
        suggestions(&model, &settings, t.budget_bytes, BATCH_LIMIT)
    });
    let best_batch = targets.iter().filter_map(|t| t.max_batch).max();
    let fits_somewhere = targets.is_empty() || targets.iter().any(|t| t.fits);

    let out = if args.json {
        let mut doc = serde_json::to_value(JsonOut {
            schema_version: SCHEMA_VERSION,
            model: &model,
            settings: &settings,
            peak_allocated_bytes: est.peak_allocated_bytes,
            peak_reserved_bytes: est.peak_reserved_bytes,
            total_device_bytes: est.total_device_bytes,
            peak_phase: est.peak_phase,
            breakdown: est.breakdown,
            phases: est
                .phases
                .iter()
                .map(|(p, b)| (serde_json::to_value(p).unwrap_or_default(), *b))
                .filter_map(|(p, b)| Some((p.as_str()?.to_owned(), b)))
                .collect(),
            fits: &targets,
            max_batch: best_batch,
            suggestions: &sugg,
        })?;
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("seq".into(), est.seq.into());
        }
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        render_text(
            &model,
            &settings,
            &est,
            &targets,
            &sugg,
            Style { color: ctx.color },
        )
    };
    std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes())?;
    Ok(if fits_somewhere {
        ExitStatus::Success
    } else {
        ExitStatus::Findings
    })
}

#[derive(Serialize)]
struct JsonOut<'a> {
    schema_version: u32,
    model: &'a ModelSpec,
    settings: &'a Settings,
    peak_allocated_bytes: u64,
    peak_reserved_bytes: u64,
    total_device_bytes: u64,
    peak_phase: gpu_doctor_fit::Phase,
    breakdown: gpu_doctor_fit::Breakdown,
    phases: std::collections::BTreeMap<String, u64>,
    fits: &'a [Target],
    max_batch: Option<u64>,
    suggestions: &'a [Suggestion],
}

fn describe_run(model: &ModelSpec, s: &Settings, seq: u64) -> String {
    let params = model.params as f64;
    let size = if params >= 1e9 {
        format!("{:.2} B", params / 1e9)
    } else {
        format!("{:.0} M", params / 1e6)
    };
    let precision = match (s.dtype, s.amp) {
        (Dtype::Fp32, Some(Amp::Bf16)) => "fp32 weights + bf16 autocast".to_owned(),
        (Dtype::Fp32, Some(Amp::Fp16)) => "fp32 weights + fp16 autocast".to_owned(),
        (d, _) => format!(
            "{} weights",
            serde_json::to_value(d)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
    };
    let mut line = format!(
        "{} ({size} parameters): {}, batch {} x {seq} tokens, {precision}",
        model.model_type,
        match s.mode {
            Mode::Train => "training",
            Mode::Infer => "inference",
        },
        s.batch,
    );
    if s.mode == Mode::Train {
        let opt = match s.optimizer {
            Optimizer::Adamw => "AdamW",
            Optimizer::Adam => "Adam",
            Optimizer::Sgd => "SGD with momentum",
            Optimizer::Adamw8bit => "8-bit AdamW",
        };
        let _ = write!(line, ", {opt}");
        if s.checkpointing {
            line.push_str(", checkpointing");
        }
        if s.zero > 0 {
            let _ = write!(line, ", ZeRO-{} over {} GPUs", s.zero, s.gpus);
        }
    } else if s.new_tokens > 0 {
        let _ = write!(line, ", generating {} tokens", s.new_tokens);
    }
    line
}

fn render_text(
    model: &ModelSpec,
    s: &Settings,
    est: &Estimate,
    targets: &[Target],
    sugg: &[Suggestion],
    style: Style,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", style.bold(&describe_run(model, s, est.seq)));
    let _ = writeln!(
        out,
        "peak allocated {} at the {}; reserved {}; with the CUDA context {}",
        style.bold(&human_bytes(est.peak_allocated_bytes)),
        est.peak_phase.describe(),
        human_bytes(est.peak_reserved_bytes),
        style.bold(&human_bytes(est.total_device_bytes)),
    );
    out.push('\n');
    for (name, bytes) in est.breakdown.parts() {
        if bytes == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "  {:<24}{:>12}",
            name.replace('_', " "),
            human_bytes(bytes)
        );
    }
    if !targets.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "{}", style.bold("fits:"));
        for t in targets {
            let label = match t.gpu {
                Some(i) => format!("GPU {i} {}", t.name),
                None => t.name.clone(),
            };
            let budget = match t.source {
                "nvml" => format!("{} free", human_bytes(t.budget_bytes)),
                _ => format!("{} total", human_bytes(t.budget_bytes)),
            };
            let verdict = if t.fits {
                style.green("fits")
            } else {
                style.red("does not fit")
            };
            let room = if t.headroom_bytes >= 0 {
                format!("{} to spare", human_bytes(t.headroom_bytes.unsigned_abs()))
            } else {
                format!("{} short", human_bytes(t.headroom_bytes.unsigned_abs()))
            };
            let batch = t.max_batch.map_or_else(
                || "no batch fits".to_owned(),
                |b| format!("largest batch {b}"),
            );
            let _ = writeln!(
                out,
                "  {label:<24}{budget:>18}   {verdict} ({room}), {batch}"
            );
        }
    }
    if !sugg.is_empty() {
        out.push('\n');
        let against = targets
            .iter()
            .max_by_key(|t| (t.budget_bytes, std::cmp::Reverse(t.gpu)))
            .map(|t| t.gpu.map_or_else(|| t.name.clone(), |i| format!("GPU {i}")))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}",
            style.bold(&format!("to save memory (checked against {against}):"))
        );
        for g in sugg {
            let fits = if g.fits {
                style.green(" fits")
            } else {
                String::new()
            };
            let batch = g.max_batch.map_or_else(
                || "no batch fits".to_owned(),
                |b| format!("largest batch {b}"),
            );
            let _ = writeln!(
                out,
                "  {:<28} saves {:>10}, {batch}{fits}",
                style.cyan(&g.flags),
                human_bytes(g.saves_bytes.unsigned_abs()),
            );
            let _ = writeln!(out, "  {:<28} {}", "", style.dim(&g.description));
        }
    }
    out
}
