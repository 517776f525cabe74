//! `gpu-doctor run [options] -- COMMAND...`: runs a job and, when it fails, finds out why
//! and runs it again with a change that addresses the cause (a lower batch, the allocator's
//! expandable segments, another GPU), from its last complete checkpoint.
//!
//! This module only wires things: clap options into a `gpu_doctor_supervise::supervisor::Plan`,
//! the explain engine as the diagnosis, the GPU source as the monitor, and the result into
//! the report file, the findings and the summary on stderr. The loop, the policy and the
//! process handling live in `gpu-doctor-supervise`.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::{self, Style};
use clap::Args;
use gpu_doctor_model::units::parse_duration;
use gpu_doctor_supervise::batch::BatchTarget;
use gpu_doctor_supervise::driver::{DriverOptions, SignalForwarder};
use gpu_doctor_supervise::hook::DEFAULT_HISTORY_ENTRIES;
use gpu_doctor_supervise::monitor::Monitor;
use gpu_doctor_supervise::policy::{PolicyOptions, StopKind};
use gpu_doctor_supervise::supervisor::{
    BatchSpec, Plan, ResumeSpec, RunResult, SetupError, Supervisor,
};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  gpu-doctor run --batch-arg --batch-size -- python train.py --batch-size 64\n  \
                  gpu-doctor run --batch-arg --batch-size --accum-arg --grad-accum \\\n      \
                  --resume-arg '--resume {checkpoint}' --checkpoint-glob 'ckpt/*.pt' \\\n      \
                  --report run.json -- python train.py --batch-size 64\n  \
                  gpu-doctor run --batch 64 -- python train.py --bs {batch}"
)]
pub struct RunArgs {
    /// Attempts in all, the first included.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub max_attempts: u32,
    /// Pause before the second attempt; doubles after each failure, up to a minute.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    pub backoff: Duration,
    /// The job's own flag for its batch size, rewritten on an out-of-memory error
    /// (`--batch-size 64` and `--batch-size=64` are both understood).
    #[arg(
        long,
        value_name = "FLAG",
        allow_hyphen_values = true,
        conflicts_with = "batch_env"
    )]
    pub batch_arg: Option<String>,
    /// An environment variable the job reads its batch size from.
    #[arg(long, value_name = "NAME")]
    pub batch_env: Option<String>,
    /// The starting batch, for a `{batch}` placeholder in the command, for --batch-env, or when
    /// the --batch-arg flag is not on the command line. `auto` (search for the largest batch
    /// that fits) is not available yet.
    #[arg(long, value_name = "N|auto")]
    pub batch: Option<String>,
    /// Each lowering multiplies the batch by this.
    #[arg(long, default_value_t = 0.5, value_name = "FACTOR")]
    pub batch_factor: f64,
    /// Never lower the batch below this.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub min_batch: u64,
    /// The job's flag for gradient accumulation, raised as the batch is lowered so that
    /// batch × accumulation stays at least what it was.
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    pub accum_arg: Option<String>,
    /// Arguments added on a retry to resume from the newest complete checkpoint, with
    /// `{checkpoint}` for its path, e.g. '--resume {checkpoint}'.
    #[arg(
        long,
        value_name = "TEMPLATE",
        allow_hyphen_values = true,
        requires = "checkpoint_glob"
    )]
    pub resume_arg: Option<String>,
    /// Where the job writes its checkpoints, e.g. 'ckpt/*.pt' (quoted, so the shell leaves it).
    #[arg(long, value_name = "GLOB", requires = "resume_arg")]
    pub checkpoint_glob: Option<String>,
    /// After an illegal memory access or a device-side assert, rerun once with
    /// `CUDA_LAUNCH_BLOCKING=1` to locate the failing kernel, then report.
    #[arg(long)]
    pub debug_rerun: bool,
    /// Do not inject the Python hook that saves the allocator's state at an out-of-memory error.
    #[arg(long)]
    pub no_hook: bool,
    /// Write the run's report (JSON, see docs/run.md) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// How long to wait for another process to free a GPU's memory.
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = parse_duration)]
    pub wait_timeout: Duration,
    /// After forwarding a signal, how long the job gets before its process group is killed.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    pub kill_timeout: Duration,
    /// The run's folder (hook, per-attempt output tails and allocator dumps).
    /// Default: .gpu-doctor/runs/<UTC time>-<pid>.
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// How much of the job's latest output (stdout and stderr) is kept for the diagnosis.
    #[arg(long, default_value_t = 256, value_name = "KIB")]
    pub tail_kb: usize,
    /// How often GPU memory is sampled while the job runs.
    #[arg(long, default_value = "500ms", value_name = "DURATION", value_parser = parse_duration)]
    pub sample_interval: Duration,
    /// Allocator history entries the hook records (0: none; the snapshot then holds only the
    /// memory layout).
    #[arg(long, default_value_t = DEFAULT_HISTORY_ENTRIES, value_name = "N")]
    pub memory_history: u32,
    /// How long a checkpoint's size must stay the same to count as complete.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    pub checkpoint_settle: Duration,
    /// The job's memory budget on each GPU (e.g. 40GiB): told to PyTorch (through the
    /// hook), JAX, TensorFlow and MPS, and watched in NVML; over it is a warning finding.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit)]
    pub memory_limit: Option<u64>,
    /// Stop the job when it holds more than --memory-limit (SIGTERM, --kill-timeout, SIGKILL).
    #[arg(long, requires = "memory_limit")]
    pub enforce: bool,
    /// The job: everything after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

/// `2026-11-29T20-13-05Z` for a time in seconds since the epoch (UTC, proleptic Gregorian).
fn utc_stamp(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}-{:02}-{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn parse_memory_limit(text: &str) -> Result<u64, String> {
    match gpu_doctor_model::units::parse_bytes(text)? {
        0 => Err("a budget of 0 bytes; give a size such as 40GiB".into()),
        bytes => Ok(bytes),
    }
}

/// `--memory-limit`: the framework variables for every attempt, and the watch that holds
/// the job to the budget (see `gpu-doctor-guard`); no watch when no GPU source opens.
fn memory_budget(
    ctx: &Context,
    limit: u64,
    enforce: bool,
    grace: Duration,
    interval: Duration,
    monitor: Option<&Monitor>,
) -> (
    Vec<(String, String)>,
    Option<gpu_doctor_guard::BudgetThread>,
) {
    use gpu_doctor_guard::{BudgetThread, BudgetWatch, JobRoot, ProcRoot, frameworks, mps};
    // The smallest GPU, so the fraction never allows more than the budget on any of them.
    let total = monitor.and_then(|m| {
        m.inventory()
            .devices
            .iter()
            .filter_map(|d| d.memory_total_bytes.get())
            .min()
    });
    let mps = mps::detect(&ProcRoot::default());
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok().map_or_else(
        || monitor.map_or(1, |m| m.inventory().devices.len()),
        |v| v.split(',').filter(|d| !d.trim().is_empty()).count(),
    );
    let vars = frameworks::adapt(
        frameworks::framework_env(limit, total, mps.running().then_some(visible)),
        |name| std::env::var(name).ok(),
    );
    eprintln!(
        "gpu-doctor: memory budget {} per GPU{}{}",
        frameworks::describe(limit, total),
        if enforce { ", enforced" } else { "" },
        if mps.running() {
            "; an MPS server runs: its limit is set too"
        } else {
            ""
        }
    );
    match ctx.open_source() {
        Ok(source) => {
            let watch = BudgetWatch::new(JobRoot::ChildrenOf(std::process::id()), limit, grace);
            (
                vars,
                Some(BudgetThread::start(source, watch, interval, enforce)),
            )
        }
        Err(e) => {
            eprintln!(
                "gpu-doctor: the budget cannot be watched ({e:#}); the frameworks are still told"
            );
            (vars, None)
        }
    }
}

/// When `--enforce` stopped the job, that is why its last attempt ended, whatever its output
/// said: the attempt and the run's stop reason say so, with the job's own peak (not the
/// whole GPU's, which other jobs share).
fn settle_budget_stop(
    report: &mut gpu_doctor_supervise::report::RunReport,
    budget: &gpu_doctor_guard::BudgetReport,
) {
    let peak = budget.peak_bytes.values().copied().max();
    if let Some(last) = report.attempts.last_mut() {
        last.cause = Some(gpu_doctor_model::Cause::OomCapacity);
        "stop".clone_into(&mut last.action);
        "stopped by --enforce: over its memory budget".clone_into(&mut last.reason);
        if peak.is_some() {
            last.peak_gpu_memory_bytes = peak;
            last.peak_gpu_memory_source = Some("process");
        }
    }
    report.stop_reason = Some(format!(
        "--enforce stopped it: it used {} against its budget of {} (see GD591)",
        peak.map_or_else(|| "more".to_owned(), gpu_doctor_model::units::format_bytes),
        gpu_doctor_model::units::format_bytes(budget.limit_bytes)
    ));
}

fn batch_spec(args: &RunArgs) -> anyhow::Result<Option<BatchSpec>> {
    let start = match args.batch.as_deref() {
        None => None,
        Some("auto") => {
            return Err(Hinted::new(
                "`--batch auto` is not available yet",
                "give the starting batch (`--batch 64`, or on the job's command line) and \
                 gpu-doctor lowers it on an out-of-memory error",
            ));
        }
        Some(n) => Some(n.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
            Hinted::new(
                format!("`--batch {n}` is not a positive whole number"),
                "give the starting batch, e.g. `--batch 64`",
            )
        })?),
    };
    let placeholder = gpu_doctor_supervise::batch::has_placeholder(&args.command);
    let target = match (&args.batch_arg, &args.batch_env) {
        (Some(flag), _) => BatchTarget::Flag(flag.clone()),
        (None, Some(name)) => BatchTarget::Env(name.clone()),
        (None, None) if placeholder => BatchTarget::Placeholder,
        (None, None) => {
            if start.is_some() {
                return Err(Hinted::new(
                    "`--batch` needs somewhere to put the batch",
                    "add `--batch-arg FLAG`, `--batch-env NAME`, or write `{batch}` in the job's \
                     command",
                ));
            }
            return Ok(None);
        }
    };
    if !(args.batch_factor > 0.0 && args.batch_factor < 1.0) {
        return Err(Hinted::new(
            format!(
                "`--batch-factor {}` must be between 0 and 1",
                args.batch_factor
            ),
            "use e.g. `--batch-factor 0.5` (halve) or `--batch-factor 0.9` (gentler)",
        ));
    }
    Ok(Some(BatchSpec { target, start }))
}

fn open_monitor(ctx: &Context, interval: Duration) -> Option<Monitor> {
    let source = match ctx.open_source() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gpu-doctor: no GPU state ({e:#}): going on without it");
            return None;
        }
    };
    match Monitor::start(source, interval) {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!("gpu-doctor: no GPU state ({e}): going on without it");
            None
        }
    }
}

/// `gpu-doctor check`, run as a child, its verdict sent to stderr: what an environment error
/// needs, and the same checklist the user would get by running it.
fn run_check() {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    eprintln!("gpu-doctor: the environment is at fault; `gpu-doctor check` says:");
    let child = std::process::Command::new(exe)
        .arg("check")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn();
    let Ok(mut child) = child else {
        return;
    };
    // The check is bounded: a hung driver must not hang the report.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
    }
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::copy(&mut out, &mut std::io::stderr());
    }
}

pub fn run(ctx: &Context, args: RunArgs) -> anyhow::Result<ExitStatus> {
    let batch = batch_spec(&args)?;
    let resume = match (&args.resume_arg, &args.checkpoint_glob) {
        (Some(template), Some(glob)) => {
            if !template.contains("{checkpoint}") {
                return Err(Hinted::new(
                    format!("--resume-arg `{template}` has no `{{checkpoint}}`"),
                    "write where the path goes, e.g. --resume-arg '--resume {checkpoint}'",
                ));
            }
            Some(ResumeSpec {
                template: template.clone(),
                glob: glob.clone(),
            })
        }
        _ => None,
    };
    if args.max_attempts == 0 {
        return Err(Hinted::new(
            "`--max-attempts 0` would not run the job",
            "use --max-attempts 1 to run it once, with diagnosis but no retry",
        ));
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let run_dir = args.run_dir.clone().unwrap_or_else(|| {
        PathBuf::from(".gpu-doctor/runs").join(format!("{}-{}", utc_stamp(now), std::process::id()))
    });
    let plan = Plan {
        argv: args.command,
        batch,
        accum_flag: args.accum_arg.clone(),
        resume,
        hook: !args.no_hook,
        history_entries: args.memory_history,
        run_dir,
        policy: PolicyOptions {
            max_attempts: args.max_attempts,
            batch_control: false,
            batch_factor: args.batch_factor,
            min_batch: args.min_batch,
            debug_rerun: args.debug_rerun,
            wait_timeout: args.wait_timeout,
        },
        backoff: args.backoff,
        driver: DriverOptions {
            tail_bytes: args.tail_kb.clamp(1, 64 << 10) << 10,
            kill_timeout: args.kill_timeout,
        },
        checkpoint_settle: args.checkpoint_settle,
        wait_poll: args.sample_interval,
        extra_env: Vec::new(),
    };

    let setup = |e: SetupError| {
        let hint = e.hint();
        Hinted::new(e.to_string(), hint)
    };
    let signals = SignalForwarder::install().map_err(|e| {
        let hint = e.hint();
        Hinted::new(e.to_string(), hint)
    })?;
    // The explain engine on the output tail, with the GPUs as they are after the job exited
    // (so it can name another process that holds the memory).
    let diagnose = |tail: &[u8], live: Option<&gpu_doctor_model::Sample>| {
        let facts = gpu_doctor_scan::scan_bytes("job output", tail);
        gpu_doctor_rules::explain::diagnose(&facts, live)
    };
    let mut stderr = std::io::stderr();
    let mut supervisor = Supervisor {
        plan,
        user_env: std::env::vars().collect(),
        diagnose: &diagnose,
        monitor: None,
        log: &mut stderr,
    };
    // Usage problems are reported before the GPU is looked at.
    supervisor.validate().map_err(setup)?;
    supervisor.monitor = open_monitor(ctx, args.sample_interval);
    let budget = args.memory_limit.and_then(|limit| {
        let (vars, thread) = memory_budget(
            ctx,
            limit,
            args.enforce,
            args.kill_timeout,
            args.sample_interval,
            supervisor.monitor.as_ref(),
        );
        supervisor.plan.extra_env.extend(vars);
        thread
    });
    let mut result: RunResult = supervisor.run(&signals).map_err(setup)?;
    if let Some(report) = budget.map(gpu_doctor_guard::BudgetThread::finish) {
        if report.stopped {
            settle_budget_stop(&mut result.report, &report);
        }
        // The budget's findings come first: when the job was stopped for it, that is why it
        // ended, whatever its output says (the stop, GD591, before the warning, GD590).
        let mut findings = report.findings;
        findings.reverse();
        if result.report.outcome == gpu_doctor_supervise::report::RunOutcome::Succeeded
            && !findings.is_empty()
        {
            eprint!(
                "\n{}",
                printer::findings_text(&findings, Style { color: false })
            );
        }
        findings.append(&mut result.last_findings);
        result.last_findings = findings;
    }

    let style = Style { color: false };
    if result.report.outcome != gpu_doctor_supervise::report::RunOutcome::Succeeded
        && !result.last_findings.is_empty()
    {
        eprint!("\n{}", printer::findings_text(&result.last_findings, style));
    }
    if result.stop_kind == Some(StopKind::Environment) {
        run_check();
    }
    if let Some(path) = &args.report {
        let mut json = serde_json::to_value(&result.report)?;
        if let Some(obj) = json.as_object_mut() {
            obj.insert(
                "findings".into(),
                serde_json::to_value(&result.last_findings)?,
            );
        }
        let text = serde_json::to_string_pretty(&json)? + "\n";
        std::fs::write(path, text).map_err(|e| {
            Hinted::new(
                format!("cannot write the report to {}: {e}", path.display()),
                "choose a writable path with --report FILE",
            )
        })?;
    }
    eprint!("\n{}", result.report.summary_text());
    Ok(ExitStatus::Code(result.report.exit_code))
}

#[cfg(test)]
mod tests {
    use super::utc_stamp;

    #[test]
    fn stamps() {
        assert_eq!(utc_stamp(0), "1970-01-01T00-00-00Z");
        assert_eq!(utc_stamp(1_795_982_400), "2026-11-29T20-00-00Z");
        assert_eq!(utc_stamp(951_782_400), "2000-02-29T00-00-00Z");
    }
}
