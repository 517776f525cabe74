//! `gpu-doctor guard --config FILE [--dry-run] [--once] [--interval 5s] [--json]`: memory
//! budgets per user or group on shared GPUs.
//!
//! Each round samples the GPUs through the chosen source, reads who owns each GPU process
//! from `/proc`, asks `gpu_doctor_guard::evaluate` what to do, and does it: a warning (one
//! line on stderr and a finding), or, where the budget file says `action = "stop"`, a clean
//! stop (SIGTERM, grace, SIGKILL) on its own thread so the next round is not held up. The
//! decisions are all in the `gpu-doctor-guard` crate; this file wires the source, `/proc`,
//! the accounts and the printer.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::{Style, findings_json, findings_text};
use clap::Args;
use gpu_doctor_guard::config::{self, Action};
use gpu_doctor_guard::findings::guard_finding;
use gpu_doctor_guard::{
    Accounts, Config, ProcOwner, ProcRoot, StopOutcome, Verdict, evaluate, mps, stop_process,
};
use gpu_doctor_model::units::{format_bytes, parse_duration};
use gpu_doctor_model::{Finding, Sample};
use gpu_doctor_source::SourceError;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = "Example budget file: contrib/guard.example.toml; see docs/guard.md.")]
pub struct GuardArgs {
    /// The budget file (TOML): `[[budget]]` tables with `user` or `group`, `limit` or
    /// `fraction`, `action`, `grace`, optional `gpu`.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Say what would be done, and do nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Evaluate once and exit (1 when something is over budget), for tests and cron.
    #[arg(long)]
    pub once: bool,
    /// How often to sample (overrides `interval` in the budget file).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub interval: Option<Duration>,
    /// Print findings as JSON (one document with --once, one line per round otherwise).
    #[arg(long)]
    pub json: bool,
    /// Read processes under DIR instead of /proc (tests; a host /proc in a container).
    #[arg(long, value_name = "DIR", hide = true, default_value = "/proc")]
    pub proc_root: PathBuf,
    /// User names from FILE instead of /etc/passwd.
    #[arg(long, value_name = "FILE", hide = true, default_value = "/etc/passwd")]
    pub passwd: PathBuf,
    /// Group names from FILE instead of /etc/group.
    #[arg(long, value_name = "FILE", hide = true, default_value = "/etc/group")]
    pub group: PathBuf,
    /// Decide as if running as UID (root only: to see what a user's own guard may do).
    #[arg(long, value_name = "UID", hide = true)]
    pub as_uid: Option<u32>,
}

/// A stop running on its own thread: the verdict, and where its outcome will arrive.
struct InFlight {
    verdict: Verdict,
    done: mpsc::Receiver<StopOutcome>,
}

// Every verb takes its arguments by value (`commands/mod.rs`).
#[allow(clippy::needless_pass_by_value)]
pub fn run(ctx: &Context, args: GuardArgs) -> anyhow::Result<ExitStatus> {
    let config = config::load(&args.config).map_err(|e| {
        let hint = e.hint();
        Hinted::new(e.to_string(), hint)
    })?;
    let euid = gpu_doctor_guard::proc::effective_uid();
    let deciding_uid = match args.as_uid {
        Some(uid) if euid != 0 && uid != euid => {
            return Err(Hinted::new(
                format!("--as-uid {uid}: only root may decide as another user"),
                "leave out --as-uid; the guard decides as the user it runs as",
            ));
        }
        Some(uid) => uid,
        None => euid,
    };
    let interval = args
        .interval
        .unwrap_or(config.interval)
        .max(config::MIN_INTERVAL);
    let proc = ProcRoot::new(&args.proc_root);
    let accounts = Accounts::load(&args.passwd, &args.group);
    let style = Style { color: ctx.color };
    warn_unknown_names(&config, &accounts);
    if config.budgets.is_empty() {
        eprintln!(
            "guard: {} has no [[budget]]: nothing to guard",
            args.config.display()
        );
    }
    let mps = mps::detect(&proc);
    if mps.running() {
        eprintln!("guard: {}", mps.summary());
    }

    let mut source = ctx.open_source()?;
    let mut guard = Guard {
        config: &config,
        proc: &proc,
        accounts: &accounts,
        deciding_uid,
        dry_run: args.dry_run,
        in_flight: BTreeMap::new(),
        warned: BTreeSet::new(),
        failed: BTreeSet::new(),
    };
    let mut first = true;
    loop {
        let sample = match source.sample() {
            Ok(s) => s,
            Err(SourceError::Exhausted) if !first => break,
            Err(e) => return Err(e.into()),
        };
        first = false;
        let (verdicts, findings) = guard.round(&sample, args.once);
        if args.once {
            print_once(&findings, &verdicts, &mps, &args, style)?;
            return Ok(if findings.is_empty() {
                ExitStatus::Success
            } else {
                ExitStatus::Findings
            });
        }
        if !findings.is_empty() {
            let mut out = std::io::stdout().lock();
            if args.json {
                let mut extra = serde_json::Map::new();
                extra.insert("timestamp_ms".into(), sample.timestamp_ms.into());
                extra.insert("dry_run".into(), args.dry_run.into());
                writeln!(out, "{}", findings_json(&findings, extra))?;
            } else {
                write!(out, "{}", findings_text(&findings, style))?;
            }
            out.flush()?;
        }
        std::thread::sleep(interval);
    }
    // A replay that has run out: finish the stops still under way.
    for f in guard.finish() {
        write!(std::io::stdout().lock(), "{}", findings_text(&[f], style))?;
    }
    Ok(ExitStatus::Success)
}

/// A rule naming a user or group this machine does not have matches nothing: say so once,
/// rather than let a typo leave someone without a budget.
fn warn_unknown_names(config: &Config, accounts: &Accounts) {
    for b in &config.budgets {
        let known = match &b.subject {
            config::Subject::User(u) => accounts.uid(u).is_some(),
            config::Subject::Group(g) => accounts.gid(g).is_some(),
        };
        if !known {
            eprintln!(
                "guard: warning: line {}: {} is not known on this machine; that budget matches nothing",
                b.line, b.subject
            );
        }
    }
}

struct Guard<'a> {
    config: &'a Config,
    proc: &'a ProcRoot,
    accounts: &'a Accounts,
    deciding_uid: u32,
    dry_run: bool,
    /// Stops under way, by (pid, start time).
    in_flight: BTreeMap<(u32, u64), InFlight>,
    /// Warnings already given, so a process over budget for an hour is one line, not 720.
    warned: BTreeSet<(u32, u64, u32)>,
    /// Stops that could not be carried out (no permission, a process stuck in the driver):
    /// not tried again every round.
    failed: BTreeSet<(u32, u64)>,
}

impl Guard<'_> {
    fn owners(&self, sample: &Sample) -> BTreeMap<u32, ProcOwner> {
        sample
            .processes
            .iter()
            .filter_map(|p| self.proc.owner(p.pid.0).map(|o| (p.pid.0, o)))
            .collect()
    }

    fn verdicts(&self, sample: &Sample) -> Vec<Verdict> {
        evaluate(
            self.config,
            sample,
            &self.owners(sample),
            self.accounts,
            self.deciding_uid,
        )
    }

    /// One round: decide, log each decision, start stops, collect what finished. With
    /// `wait`, stops started now are waited for (so `--once` reports how they ended).
    fn round(&mut self, sample: &Sample, wait: bool) -> (Vec<Verdict>, Vec<Finding>) {
        let verdicts = self.verdicts(sample);
        let mut findings = self.collect_finished(false);
        let live: BTreeSet<(u32, u64, u32)> = verdicts
            .iter()
            .map(|v| (v.pid.0, v.start_time, v.gpu.0))
            .collect();
        // A process back within budget may be warned about again later.
        self.warned.retain(|k| live.contains(k));
        for v in verdicts.iter().cloned() {
            let key = (v.pid.0, v.start_time);
            if self.in_flight.contains_key(&key) || self.failed.contains(&key) {
                continue;
            }
            log_decision(&v, self.dry_run);
            match (v.action, self.dry_run) {
                (Action::Stop, false) => {
                    let (tx, rx) = mpsc::channel();
                    let proc = self.proc.clone();
                    let (pid, start, grace) = (v.pid.0, v.start_time, v.grace);
                    std::thread::spawn(move || {
                        let _ = tx.send(stop_process(&proc, pid, start, grace));
                    });
                    self.in_flight.insert(
                        key,
                        InFlight {
                            verdict: v,
                            done: rx,
                        },
                    );
                }
                _ => {
                    if self.warned.insert((v.pid.0, v.start_time, v.gpu.0)) {
                        findings.push(guard_finding(&v, None));
                    }
                }
            }
        }
        if wait {
            findings.extend(self.collect_finished(true));
        }
        (verdicts, findings)
    }

    /// Findings of the stops that ended (all of them, waiting, with `block`).
    fn collect_finished(&mut self, block: bool) -> Vec<Finding> {
        let mut done = Vec::new();
        let mut findings = Vec::new();
        for (key, f) in &self.in_flight {
            let outcome = if block {
                f.done.recv().ok()
            } else {
                f.done.try_recv().ok()
            };
            if let Some(outcome) = outcome {
                eprintln!(
                    "guard: pid {} ({}, GPU {}) {}",
                    f.verdict.pid,
                    f.verdict.user,
                    f.verdict.gpu,
                    outcome.describe()
                );
                if matches!(outcome, StopOutcome::Failed { .. }) {
                    self.failed.insert(*key);
                }
                findings.push(guard_finding(&f.verdict, Some(&outcome)));
                done.push(*key);
            }
        }
        for key in done {
            self.in_flight.remove(&key);
        }
        findings
    }

    fn finish(&mut self) -> Vec<Finding> {
        self.collect_finished(true)
    }
}

/// One line per decision, on stderr.
fn log_decision(v: &Verdict, dry_run: bool) {
    let verb = match (v.action, dry_run) {
        (Action::Stop, true) => "would stop",
        (Action::Stop, false) => "stopping",
        (Action::Warn, true) => "would warn about",
        (Action::Warn, false) => "over budget:",
    };
    let grace = if v.action == Action::Stop {
        format!(" (SIGTERM, {}s grace, then SIGKILL)", v.grace.as_secs_f64())
    } else {
        String::new()
    };
    eprintln!(
        "guard: {verb} pid {} ({}, GPU {}): holds {}; {} holds {} against a budget of {} [{}, line {}]{grace}{}",
        v.pid,
        v.user,
        v.gpu,
        format_bytes(v.process_bytes),
        v.user,
        format_bytes(v.user_bytes),
        format_bytes(v.budget_bytes),
        v.rule,
        v.rule_line,
        v.refused
            .as_deref()
            .map(|r| format!(" — {r}"))
            .unwrap_or_default()
    );
}

fn print_once(
    findings: &[Finding],
    verdicts: &[Verdict],
    mps: &gpu_doctor_guard::MpsStatus,
    args: &GuardArgs,
    style: Style,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut extra = serde_json::Map::new();
        extra.insert("dry_run".into(), args.dry_run.into());
        extra.insert("config".into(), path_text(&args.config).into());
        extra.insert("verdicts".into(), serde_json::to_value(verdicts)?);
        extra.insert("mps".into(), serde_json::to_value(mps)?);
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&findings_json(findings, extra))?
        )?;
    } else if findings.is_empty() {
        writeln!(out, "Every process with a budget is within it.")?;
    } else {
        write!(out, "{}", findings_text(findings, style))?;
    }
    out.flush()?;
    Ok(())
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}
