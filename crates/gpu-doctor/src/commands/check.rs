//! `gpu-doctor check`: the driver, CUDA, Python frameworks, variables, kernel log and GPU
//! health in one checklist. Probes (`gpu-doctor-env`) gather the facts, the GPU source gives
//! the GPUs, the rules (`gpu-doctor-rules::env` and `::health`) judge; this file only wires
//! them and renders. `--fail-on` turns the verdict into an exit status for prologs and
//! readiness probes; `--export` writes the facts for `gpu-doctor env diff`.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::{Style, findings_json, findings_text};
use clap::{Args, ValueEnum};
use gpu_doctor_env::{EnvFacts, GpuFacts, Host, ProbeCache, ProbeStatus};
use gpu_doctor_rules::env::{CheckResult, CheckStatus, Report, evaluate};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object (`schema_version`, `checks`, `findings`) instead of the checklist.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when a check is at least this bad (`warn` or `error`); skipped checks never count.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Also write everything found to FILE as JSON, for `gpu-doctor env diff`.
    #[arg(long, value_name = "FILE")]
    pub export: Option<PathBuf>,
    /// The Python interpreter to probe (default: `python3` on PATH).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Probe every framework in a fresh interpreter, ignoring (and replacing) results kept
    /// from earlier runs. Without it, a framework that worked is reused while its wheels, the
    /// interpreter, the CUDA variables, the driver and the boot are unchanged, for at most a
    /// day.
    #[arg(long)]
    pub fresh: bool,
    /// Time limit for each framework probe, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 20.0)]
    pub timeout: f64,
    /// Read system paths (/proc, /dev, /sys, /usr/local, /etc) under DIR instead of /: for
    /// tests and for looking at a copied tree offline.
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<PathBuf>,
    /// Read `ldconfig -p` output from FILE instead of running ldconfig (tests, offline use).
    #[arg(long, value_name = "FILE", hide = true)]
    pub ldconfig_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// A failed check.
    Error,
    /// A warning or a failed check.
    Warn,
}

// Every verb takes its arguments by value (`commands/mod.rs`).
#[allow(clippy::needless_pass_by_value)]
pub fn run(ctx: &Context, args: CheckArgs) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    let host = host(&args)?;
    let facts = gpu_doctor_env::collect(&host, || gpu_facts(ctx));
    let report = evaluate(&facts);
    let elapsed = started.elapsed();
    if let Some(path) = &args.export {
        let text = serde_json::to_string_pretty(&facts)?;
        std::fs::write(path, text + "\n").map_err(|e| {
            Hinted::new(
                format!("cannot write {}: {e}", path.display()),
                "pass a writable path to --export",
            )
        })?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = check_json(&report, &facts, elapsed);
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        out.write_all(
            checklist_text(&report, &facts, elapsed, Style { color: ctx.color }).as_bytes(),
        )?;
    }
    out.flush()?;
    let worst_counts = |c: &CheckResult| match args.fail_on {
        FailOn::Error => c.status == CheckStatus::Fail,
        FailOn::Warn => matches!(c.status, CheckStatus::Fail | CheckStatus::Warn),
    };
    Ok(if report.checks.iter().any(worst_counts) {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    })
}

fn host(args: &CheckArgs) -> anyhow::Result<Host> {
    let mut host = Host::system();
    if let Some(root) = &args.root {
        host.root.clone_from(root);
    }
    if let Some(file) = &args.ldconfig_file {
        host.ldconfig = Some(std::fs::read_to_string(file).map_err(|e| {
            Hinted::new(
                format!("cannot read {}: {e}", file.display()),
                "--ldconfig-file takes a file holding `ldconfig -p` output",
            )
        })?);
    }
    host.python.clone_from(&args.python);
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 3600.0) {
        return Err(Hinted::new(
            format!(
                "--timeout {} is not a number of seconds between 0 and 3600",
                args.timeout
            ),
            "e.g. --timeout 30",
        ));
    }
    host.timeout = Duration::from_secs_f64(args.timeout);
    host.probe_cache = ProbeCache::default_dir(&host.env);
    host.fresh_probes = args.fresh;
    Ok(host)
}

/// The GPUs through the chosen source; a source that cannot open is a reason, not an error:
/// `check` must work on a machine without a GPU or driver.
fn gpu_facts(ctx: &Context) -> GpuFacts {
    let opened = ctx.open_source().and_then(|mut source| {
        let inventory = source.inventory()?;
        let sample = source.sample()?;
        Ok((inventory, sample))
    });
    match opened {
        Ok((inventory, sample)) => GpuFacts {
            status: ProbeStatus::Ok,
            inventory: Some(inventory),
            sample: Some(sample),
        },
        Err(e) => GpuFacts {
            status: ProbeStatus::unavailable(format!("{e:#}")),
            inventory: None,
            sample: None,
        },
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `{"schema_version", "summary", "checks": [{id, status, message, fix, code?}], "findings", "timings_ms"}`.
pub fn check_json(report: &Report, facts: &EnvFacts, elapsed: Duration) -> serde_json::Value {
    let mut extra = serde_json::Map::new();
    extra.insert(
        "summary".into(),
        serde_json::to_value(counts(report)).unwrap_or_default(),
    );
    extra.insert(
        "checks".into(),
        serde_json::to_value(&report.checks).unwrap_or_default(),
    );
    let mut timings = facts.timings_ms.clone();
    timings.insert("total".into(), millis(elapsed));
    extra.insert(
        "timings_ms".into(),
        serde_json::to_value(timings).unwrap_or_default(),
    );
    findings_json(&report.findings, extra)
}

#[derive(serde::Serialize)]
struct Counts {
    pass: usize,
    warn: usize,
    fail: usize,
    skip: usize,
}

fn counts(report: &Report) -> Counts {
    let n = |s: CheckStatus| report.checks.iter().filter(|c| c.status == s).count();
    Counts {
        pass: n(CheckStatus::Pass),
        warn: n(CheckStatus::Warn),
        fail: n(CheckStatus::Fail),
        skip: n(CheckStatus::Skip),
    }
}

/// The section a check id belongs to.
fn section(id: &str) -> String {
    let head = id.split('.').next().unwrap_or(id);
    match head {
        "driver" => "Driver".into(),
        "cuda" => "CUDA".into(),
        "python" => "Python".into(),
        "torch" | "tensorflow" | "jax" | "cupy" => head.to_owned(),
        "env" => "Variables".into(),
        "kernel" => "Kernel log".into(),
        "gpus" => "GPUs".into(),
        g if g.starts_with("gpu") => format!("GPU {}", &g[3..]),
        other => other.to_owned(),
    }
}

/// Where a section goes in the checklist: the order a person debugs in.
fn section_rank(id: &str) -> u8 {
    match id.split('.').next().unwrap_or(id) {
        "driver" => 0,
        "gpus" => 1,
        g if g.starts_with("gpu") => 1,
        "cuda" => 2,
        "python" => 3,
        "torch" | "tensorflow" | "jax" | "cupy" => 4,
        "env" => 5,
        "kernel" => 6,
        _ => 7,
    }
}

/// The checklist as a person reads it.
pub fn checklist_text(
    report: &Report,
    facts: &EnvFacts,
    elapsed: Duration,
    style: Style,
) -> String {
    let mut out = String::new();
    let h = &facts.host;
    let about: Vec<&str> = [h.hostname.as_deref(), h.os.as_deref(), h.kernel.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let _ = writeln!(
        out,
        "{} {}",
        style.bold("gpu-doctor check"),
        style.dim(&about.join(", "))
    );
    let width = report.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut ordered: Vec<&CheckResult> = report.checks.iter().collect();
    ordered.sort_by_key(|c| section_rank(&c.id));
    let mut current = String::new();
    for c in ordered {
        let s = section(&c.id);
        if s != current {
            let _ = writeln!(out, "\n{}", style.bold(&s));
            current = s;
        }
        let tag = match c.status {
            CheckStatus::Pass => style.green("pass"),
            CheckStatus::Warn => style.yellow("warn"),
            CheckStatus::Fail => style.red("fail"),
            CheckStatus::Skip => style.dim("skip"),
        };
        let _ = writeln!(out, "  {tag}  {:<width$}  {}", c.id, c.message);
        if let Some(fix) = &c.fix {
            let _ = writeln!(
                out,
                "        {:<width$}  {} {}",
                "",
                style.dim("fix:"),
                style.green(fix)
            );
        }
    }
    let n = counts(report);
    let python_ms = facts.timings_ms.get("python").copied().unwrap_or(0);
    let _ = writeln!(
        out,
        "\n{} checks: {} pass, {} warn, {} fail, {} skip {}",
        report.checks.len(),
        n.pass,
        n.warn,
        n.fail,
        n.skip,
        style.dim(&format!(
            "(in {} ms; Python probes {python_ms} ms)",
            millis(elapsed)
        ))
    );
    if !report.findings.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Findings"));
        out.push_str(&findings_text(&report.findings, style));
    }
    out
}
