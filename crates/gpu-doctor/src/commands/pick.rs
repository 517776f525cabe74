//! `gpu-doctor pick`: chooses GPUs by health, free memory and utilisation and prints
//! `CUDA_VISIBLE_DEVICES=...`. Unless `--no-lock`, each chosen GPU is leased in the lock
//! directory for `--hold`, so two jobs started together get different GPUs (see
//! `gpu_doctor_fit::pick`). Exit status: 0 when `--count` GPUs qualified, 1 when fewer did.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::Style;
use clap::Args;
use gpu_doctor_fit::pick::{Candidate, LeaseDir, PickRequest, rank};
use gpu_doctor_fit::plan::{human_bytes, parse_bytes};
use gpu_doctor_model::SCHEMA_VERSION;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

// Independent switches of a command line, not a state machine.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Args)]
pub struct PickArgs {
    /// Least free memory a GPU must have (20GiB, 512MiB, 40GB).
    #[arg(long, default_value = "0", value_name = "SIZE")]
    pub min_free: String,
    /// Highest utilisation accepted, in percent.
    #[arg(long, value_name = "PERCENT")]
    pub max_util: Option<u32>,
    /// How many GPUs to pick.
    #[arg(long, default_value_t = 1)]
    pub count: usize,
    /// Print `export CUDA_VISIBLE_DEVICES=...` for a shell's eval.
    #[arg(long)]
    pub export: bool,
    /// Print NVML indices instead of UUIDs (pair them with CUDA_DEVICE_ORDER=PCI_BUS_ID).
    #[arg(long)]
    pub indices: bool,
    /// Where leases live [default: $XDG_RUNTIME_DIR/gpu-doctor/locks or /tmp/gpu-doctor-locks].
    #[arg(long, value_name = "DIR")]
    pub lock_dir: Option<PathBuf>,
    /// How long a picked GPU stays reserved for the job (30s, 2m).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub hold: String,
    /// Pick without taking leases.
    #[arg(long)]
    pub no_lock: bool,
    /// Print JSON (see docs/fit.md).
    #[arg(long)]
    pub json: bool,
}

fn parse_duration_ms(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    let mult = match unit {
        "ms" => 1.0,
        "" | "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return None,
    };
    let ms = v * mult;
    (ms.is_finite() && (0.0..1e12).contains(&ms)).then_some(ms as u64)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

pub fn run(ctx: &Context, args: PickArgs) -> anyhow::Result<ExitStatus> {
    let min_free = parse_bytes(&args.min_free).ok_or_else(|| {
        Hinted::new(
            format!("--min-free: `{}` is not a size", args.min_free),
            "write it like 20GiB, 512MiB or 40GB",
        )
    })?;
    let hold_ms = parse_duration_ms(&args.hold).ok_or_else(|| {
        Hinted::new(
            format!("--hold: `{}` is not a duration", args.hold),
            "write it like 60s, 2m or 500ms",
        )
    })?;
    if args.count == 0 {
        return Err(Hinted::new(
            "--count must be at least 1",
            "e.g. `--count 2`",
        ));
    }
    let req = PickRequest {
        min_free_bytes: min_free,
        max_util_percent: args.max_util,
        count: args.count,
    };
    let mut source = ctx.open_source()?;
    let inventory = source.inventory()?;
    let sample = source.sample()?;

    let pid = std::process::id();
    let choose = |leased: &dyn Fn(&str) -> Option<String>| {
        let ranked = rank(&inventory, &sample, &req, leased);
        let picked: Vec<Candidate> = ranked
            .iter()
            .filter(|c| c.rejected.is_none())
            .take(req.count)
            .cloned()
            .collect();
        (ranked, picked)
    };
    let lock_dir = args.lock_dir.clone().unwrap_or_else(LeaseDir::default_path);
    let (ranked, picked, lease_until) = if args.no_lock {
        let (r, p) = choose(&|_| None);
        (r, p, None)
    } else {
        let dir = LeaseDir::new(&lock_dir);
        let now = now_ms();
        dir.locked(now, |leases| {
            let (r, p) = choose(&|k| leases.holder(k));
            // Lease only when the request is met: a partial pick starts no job.
            if p.len() == req.count {
                for c in &p {
                    leases.take(&c.key(), pid, hold_ms)?;
                }
            }
            Ok((r, p, Some(now + hold_ms)))
        })
        .map_err(|e| {
            let hint = e.hint();
            Hinted::new(e.to_string(), hint)
        })?
    };
    let enough = picked.len() == req.count;
    let value = picked
        .iter()
        .map(|c| {
            if args.indices {
                c.index.to_string()
            } else {
                c.key()
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    let mut out = String::new();
    if args.json {
        let doc = serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "cuda_visible_devices": enough.then_some(&value),
            "picked": if enough { &picked[..] } else { &[] },
            "candidates": ranked,
            "lease": (!args.no_lock && enough).then(|| serde_json::json!({
                "dir": lock_dir.display().to_string(),
                "pid": pid,
                "until_ms": lease_until,
            })),
        });
        out = serde_json::to_string_pretty(&doc)?;
        out.push('\n');
    } else {
        // The table goes to stderr so that `eval "$(gpu-doctor pick --export)"` sees only
        // the assignment.
        eprint!(
            "{}",
            candidates_text(&ranked, &picked, Style { color: false })
        );
        if enough {
            let prefix = if args.export { "export " } else { "" };
            let order = if args.indices {
                format!("{prefix}CUDA_DEVICE_ORDER=PCI_BUS_ID\n")
            } else {
                String::new()
            };
            let _ = writeln!(out, "{order}{prefix}CUDA_VISIBLE_DEVICES={value}");
        } else {
            eprintln!(
                "error: {} of {} GPUs qualify{}",
                picked.len(),
                req.count,
                if ranked.is_empty() { " (no GPUs)" } else { "" }
            );
        }
    }
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(if enough {
        ExitStatus::Success
    } else {
        ExitStatus::Findings
    })
}

fn candidates_text(ranked: &[Candidate], picked: &[Candidate], style: Style) -> String {
    let mut out = String::new();
    for c in ranked {
        let chosen = picked.iter().any(|p| p.index == c.index);
        let mark = if chosen {
            style.green("*")
        } else {
            " ".to_owned()
        };
        let free = c
            .memory_free_bytes
            .map_or_else(|| "?".to_owned(), |b| format!("{} free", human_bytes(b)));
        let util = c
            .utilization_gpu_percent
            .map_or_else(|| "?".to_owned(), |u| format!("{u} %"));
        let why = c.rejected.as_deref().unwrap_or("ok");
        let _ = writeln!(
            out,
            "{mark} GPU {:<3} {:<14} {free:>16} {util:>6}  {why}",
            c.index,
            c.name.as_deref().unwrap_or("?"),
        );
    }
    out
}
