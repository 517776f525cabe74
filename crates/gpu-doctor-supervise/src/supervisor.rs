//! The supervision loop: run an attempt, diagnose it, let the policy decide, apply the change,
//! run again.
//!
//! Everything impure the loop needs comes in from outside: the diagnosis (the explain engine,
//! as a function of the output tail), the GPU monitor (absent without a driver), the user's
//! environment and the stream the decision lines go to. That keeps this crate free of the
//! rule engine and the terminal, and lets tests drive it with real child processes.

use crate::allocconf;
use crate::batch::{self, BatchError, BatchTarget};
use crate::checkpoint::{self, GlobError};
use crate::driver::{self, DriverError, DriverOptions, Job, Observer, SignalForwarder};
use crate::hook;
use crate::memstats::{self, AllocatorFacts};
use crate::monitor::{AttemptGpuStats, Monitor};
use crate::policy::{
    self, AttemptFacts, Change, Decision, Exit, GpuView, PolicyOptions, RunState, StopKind,
};
use crate::report::{AttemptReport, BatchReport, FindingRef, RunOutcome, RunReport};
use gpu_doctor_model::units::format_bytes;
use gpu_doctor_model::{Finding, GpuIndex, Inventory, SCHEMA_VERSION, Sample};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest pause between attempts, however many failed.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How the batch is controlled.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSpec {
    pub target: BatchTarget,
    /// `--batch N`: the starting batch when the command line does not hold it.
    pub start: Option<u64>,
}

/// How to resume from a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeSpec {
    /// e.g. `--resume {checkpoint}`.
    pub template: String,
    /// e.g. `ckpt/*.pt`.
    pub glob: String,
}

/// Everything fixed for the run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub argv: Vec<String>,
    pub batch: Option<BatchSpec>,
    pub accum_flag: Option<String>,
    pub resume: Option<ResumeSpec>,
    pub hook: bool,
    pub history_entries: u32,
    pub run_dir: PathBuf,
    pub policy: PolicyOptions,
    /// The pause before the second attempt; it doubles after each failure, up to a minute.
    pub backoff: Duration,
    pub driver: DriverOptions,
    /// How long a checkpoint's size must stay the same to count as complete.
    pub checkpoint_settle: Duration,
    /// How often free memory is looked at while waiting for it.
    pub wait_poll: Duration,
    /// Variables set for every attempt, after gpu-doctor's own (e.g. a memory budget's
    /// framework settings from `--memory-limit`).
    pub extra_env: Vec<(String, String)>,
}

/// Why the run could not start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Batch(#[from] BatchError),
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error("cannot create the run folder {path}: {source}")]
    RunDir {
        path: String,
        source: std::io::Error,
    },
}

impl SetupError {
    pub fn hint(&self) -> &'static str {
        match self {
            SetupError::Batch(e) => e.hint(),
            SetupError::Glob(e) => e.hint(),
            SetupError::Driver(e) => e.hint(),
            SetupError::RunDir { .. } => {
                "run from a folder you can write to, or choose one with --run-dir DIR"
            }
        }
    }
}

/// The result of a run: the report and the findings of the last failed attempt.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub report: RunReport,
    pub last_findings: Vec<Finding>,
    pub stop_kind: Option<StopKind>,
}

/// The diagnosis: the job's output tail and the latest GPU sample in, findings out.
pub type Diagnose = dyn Fn(&[u8], Option<&Sample>) -> Vec<Finding>;

/// What the supervisor needs from outside.
pub struct Supervisor<'a> {
    pub plan: Plan,
    /// The user's environment, as the job would see it without gpu-doctor.
    pub user_env: BTreeMap<String, String>,
    /// The explain engine: output tail and the GPUs as they are now (after the job is gone)
    /// in, findings out (primary root cause first).
    pub diagnose: &'a Diagnose,
    pub monitor: Option<Monitor>,
    /// Where the one-line decisions go (stderr in the binary).
    pub log: &'a mut dyn Write,
}

/// The job's GPUs from `CUDA_VISIBLE_DEVICES` (indices or UUIDs), or the first GPU when it is
/// unset (a single-GPU job uses CUDA device 0). Empty when unknown.
pub fn initial_gpus(visible: Option<&str>, inventory: Option<&Inventory>) -> Vec<GpuIndex> {
    let Some(inv) = inventory else {
        return Vec::new();
    };
    let Some(visible) = visible else {
        return inv
            .devices
            .first()
            .map(|d| vec![d.index])
            .unwrap_or_default();
    };
    let mut out = Vec::new();
    for entry in visible.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let found = if let Ok(i) = entry.parse::<u32>() {
            inv.devices.iter().find(|d| d.index.0 == i)
        } else {
            inv.devices
                .iter()
                .find(|d| d.uuid.0 == entry || d.uuid.0.starts_with(entry))
        };
        match found {
            Some(d) => out.push(d.index),
            // MIG instances and unknown entries: the job's GPUs cannot be told.
            None => return Vec::new(),
        }
    }
    out
}

/// The `CUDA_VISIBLE_DEVICES` value for `gpus`: UUIDs, which CUDA's own device order cannot
/// renumber, when the inventory knows them.
fn visible_devices(gpus: &[GpuIndex], views: &[GpuView]) -> String {
    gpus.iter()
        .map(|g| {
            views
                .iter()
                .find(|v| v.index == *g)
                .and_then(|v| v.uuid.clone())
                .unwrap_or_else(|| g.0.to_string())
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Mutable run state beyond what the policy sees.
struct Progress {
    state: RunState,
    start_batch: Option<u64>,
    effective_batch: Option<u64>,
    accum_start: Option<u64>,
    accum: Option<u64>,
    env_changes: BTreeMap<String, String>,
    debug_next: bool,
}

impl Supervisor<'_> {
    fn say(&mut self, line: &str) {
        let _ = writeln!(self.log, "gpu-doctor: {line}");
        let _ = self.log.flush();
    }

    fn start_batch(&self) -> Result<Option<u64>, BatchError> {
        let Some(spec) = &self.plan.batch else {
            return Ok(None);
        };
        let argv = &self.plan.argv;
        let start = match &spec.target {
            BatchTarget::Flag(flag) => match batch::flag_number(argv, flag)? {
                Some(n) => Some(n),
                None => Some(
                    spec.start
                        .ok_or(BatchError::FlagMissing { flag: flag.clone() })?,
                ),
            },
            BatchTarget::Placeholder => {
                if !batch::has_placeholder(argv) {
                    return Err(BatchError::NoPlaceholder);
                }
                Some(spec.start.ok_or(BatchError::NoStartingBatch)?)
            }
            BatchTarget::Env(name) => {
                let from_env = self.user_env.get(name).and_then(|v| v.trim().parse().ok());
                Some(spec.start.or(from_env).ok_or(BatchError::NoStartingBatch)?)
            }
        };
        Ok(start)
    }

    /// The command and environment of the next attempt.
    fn job(
        &self,
        p: &Progress,
        resume_from: Option<&Path>,
    ) -> (Vec<String>, BTreeMap<String, String>) {
        let mut argv = self.plan.argv.clone();
        let mut env = p.env_changes.clone();
        if let (Some(spec), Some(b)) = (&self.plan.batch, p.state.batch) {
            match &spec.target {
                BatchTarget::Flag(flag) => argv = batch::set_flag(&argv, flag, &b.to_string()),
                BatchTarget::Placeholder => argv = batch::fill_placeholder(&argv, b),
                BatchTarget::Env(name) => {
                    env.insert(name.clone(), b.to_string());
                }
            }
        }
        if let (Some(flag), Some(a)) = (&self.plan.accum_flag, p.accum)
            && p.accum != p.accum_start
        {
            argv = batch::set_flag(&argv, flag, &a.to_string());
        }
        if let (Some(spec), Some(ckpt)) = (&self.plan.resume, resume_from) {
            argv = batch::apply_resume(&argv, &spec.template, &ckpt.display().to_string());
        }
        if p.debug_next {
            env.insert("CUDA_LAUNCH_BLOCKING".into(), "1".into());
        }
        (argv, env)
    }

    /// Checks the plan against the command line and environment before anything runs: the
    /// batch can be found, the checkpoint pattern parses, the accumulation is a number.
    /// Returns the starting batch and accumulation.
    pub fn validate(&self) -> Result<(Option<u64>, Option<u64>), SetupError> {
        if self.plan.argv.is_empty() {
            return Err(DriverError::EmptyCommand.into());
        }
        let start_batch = self.start_batch()?;
        if let Some(spec) = &self.plan.resume {
            checkpoint::validate(&spec.glob)?;
        }
        let accum_start = match &self.plan.accum_flag {
            Some(flag) => Some(batch::flag_number(&self.plan.argv, flag)?.unwrap_or(1)),
            None => None,
        };
        Ok((start_batch, accum_start))
    }

    /// Runs the job until it succeeds or the policy stops.
    pub fn run(mut self, signals: &SignalForwarder) -> Result<RunResult, SetupError> {
        let started = Instant::now();
        let (start_batch, accum_start) = self.validate()?;
        std::fs::create_dir_all(&self.plan.run_dir).map_err(|source| SetupError::RunDir {
            path: self.plan.run_dir.display().to_string(),
            source,
        })?;
        let hook_dir = if self.plan.hook {
            Some(
                hook::install(&self.plan.run_dir).map_err(|source| SetupError::RunDir {
                    path: self.plan.run_dir.display().to_string(),
                    source,
                })?,
            )
        } else {
            None
        };
        driver::adopt_orphans();

        let user_conf = |name: &str| self.user_env.get(name).map(String::as_str);
        let conf_text = format!(
            "{},{}",
            user_conf("PYTORCH_CUDA_ALLOC_CONF").unwrap_or(""),
            user_conf("PYTORCH_ALLOC_CONF").unwrap_or("")
        );
        let mut p = Progress {
            state: RunState {
                batch: start_batch,
                expandable_segments: allocconf::has_expandable_segments(&conf_text),
                async_allocator: allocconf::uses_async_backend(&conf_text),
                gpus: initial_gpus(
                    user_conf("CUDA_VISIBLE_DEVICES"),
                    self.monitor.as_ref().map(Monitor::inventory),
                ),
                ..RunState::default()
            },
            start_batch,
            effective_batch: start_batch.map(|b| b * accum_start.unwrap_or(1)),
            accum_start,
            accum: accum_start,
            env_changes: BTreeMap::new(),
            debug_next: false,
        };
        let mut policy_opts = self.plan.policy.clone();
        policy_opts.batch_control = start_batch.is_some();

        let mut attempts: Vec<AttemptReport> = Vec::new();
        let mut resume_from: Option<PathBuf> = None;
        let mut backoff = self.plan.backoff;
        let mut last_findings = Vec::new();
        let (outcome, stop_reason, stop_kind, exit_code) = loop {
            let n = attempts.len() as u32 + 1;
            let (argv, env) = self.job(&p, resume_from.as_deref());
            let incident = self.plan.run_dir.join(format!("attempt-{n}"));
            let _ = std::fs::create_dir_all(&incident);
            let mut full_env = env.clone();
            if let Some(dir) = &hook_dir {
                full_env.extend(hook::env(
                    dir,
                    &incident,
                    self.user_env.get("PYTHONPATH").map(String::as_str),
                    self.plan.history_entries,
                ));
            }
            full_env.extend(self.plan.extra_env.iter().cloned());
            let job = Job {
                argv: argv.clone(),
                env: full_env,
            };
            let mut observer = AttemptObserver {
                monitor: self.monitor.as_ref(),
                gpus: &p.state.gpus,
            };
            let outcome = driver::run(&job, &self.plan.driver, signals, &mut observer)?;
            let gpu_stats = self
                .monitor
                .as_ref()
                .map(Monitor::end_attempt)
                .unwrap_or_default();
            let _ = std::fs::write(incident.join("output-tail.txt"), &outcome.tail);

            // A fresh look at the GPUs first, so the diagnosis sees who holds them now.
            let gpus_now = match (&self.monitor, outcome.exit.success()) {
                (Some(m), false) => m.gpus_now(),
                _ => Vec::new(),
            };
            let findings = if outcome.exit.success() {
                Vec::new()
            } else {
                let live = self.monitor.as_ref().and_then(Monitor::latest_sample);
                (self.diagnose)(&outcome.tail, live.as_ref())
            };
            let allocator = if outcome.exit.success() {
                Vec::new()
            } else {
                memstats::read_incident_dir(&incident)
            };
            p.state.attempts = n;
            p.state.interrupted = outcome.interrupted_by.is_some();
            p.state.this_was_debug_rerun = p.debug_next;
            let facts = AttemptFacts {
                exit: outcome.exit,
                findings: &findings,
                allocator: &allocator,
                events: &gpu_stats.events,
                gpus: &gpus_now,
            };
            let class = policy::classify(&facts, &p.state);
            let decision = policy::decide(&facts, &class, &p.state, &policy_opts);

            let mut report = AttemptReport {
                attempt: n,
                argv,
                env_changes: env,
                batch: p.state.batch,
                accumulation: p.accum,
                resumed_from: resume_from.as_ref().map(|c| c.display().to_string()),
                exit_code: outcome.exit.code(),
                signal: match outcome.exit {
                    Exit::Signal(s) => Some(s),
                    Exit::Code(_) => None,
                },
                cause: class.cause,
                cause_detail: class.refined.clone(),
                finding: findings.first().map(|f| FindingRef {
                    code: f.code.0.clone(),
                    message: f.message.clone(),
                }),
                action: decision.action().to_owned(),
                reason: String::new(),
                duration_seconds: outcome.duration.as_secs_f64(),
                peak_gpu_memory_bytes: gpu_stats.peak_bytes(),
                peak_gpu_memory_source: peak_source(&gpu_stats),
                incident_dir: incident.display().to_string(),
                hook_files: hook_files(&allocator),
                gpu_events: gpu_stats.events.clone(),
            };
            if !outcome.exit.success() {
                last_findings.clone_from(&findings);
            }
            let head = format!(
                "attempt {n}/{} exited with {}",
                policy_opts.max_attempts,
                outcome.exit.code()
            );
            let cause = class
                .cause
                .map(|c| match &class.refined {
                    Some(why) => format!("{c} ({why})"),
                    None => c.to_string(),
                })
                .unwrap_or_default();
            p.debug_next = false;
            match decision {
                Decision::Finished => {
                    report.reason = "finished".into();
                    attempts.push(report);
                    if n > 1 {
                        let line = self.fitted_line(&p, n, policy_opts.max_attempts);
                        self.say(&line);
                    }
                    break (RunOutcome::Succeeded, None, None, 0);
                }
                Decision::Stop { reason, kind } => {
                    self.say(&format!("{head}: {cause}: {reason}; stopping"));
                    report.reason.clone_from(&reason);
                    attempts.push(report);
                    let outcome = if kind == StopKind::Interrupted {
                        RunOutcome::Interrupted
                    } else {
                        RunOutcome::Stopped
                    };
                    break (
                        outcome,
                        Some(reason),
                        Some(kind),
                        outcome_code(outcome, &attempts),
                    );
                }
                Decision::Retry { change, reason } => {
                    let what = self.apply(&mut p, &change, &gpus_now);
                    resume_from = self.find_checkpoint();
                    let resume = resume_from
                        .as_ref()
                        .map(|c| format!(", resuming from {}", c.display()))
                        .unwrap_or_default();
                    let wait = if backoff.is_zero() {
                        String::new()
                    } else {
                        format!(" in {backoff:.0?}")
                    };
                    self.say(&format!(
                        "{head}: {cause}: {reason}; retrying{wait} with {what}{resume}"
                    ));
                    report.reason = reason;
                    attempts.push(report);
                    if let Some(sig) = signals.recv_timeout(backoff) {
                        let reason =
                            format!("stopped by the user (signal {sig}) before the next attempt");
                        self.say(&reason);
                        break (
                            RunOutcome::Interrupted,
                            Some(reason),
                            Some(StopKind::Interrupted),
                            128 + sig,
                        );
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                Decision::Wait {
                    gpu,
                    need_free_bytes,
                    timeout,
                    reason,
                } => {
                    self.say(&format!(
                        "{head}: {cause}: {reason} (at most {timeout:.0?})"
                    ));
                    report.reason.clone_from(&reason);
                    attempts.push(report);
                    match self.wait_for_memory(gpu, need_free_bytes, timeout, signals) {
                        Ok(free) => {
                            resume_from = self.find_checkpoint();
                            self.say(&format!(
                                "GPU {gpu} has {} free again: retrying{}",
                                format_bytes(free),
                                resume_from
                                    .as_ref()
                                    .map(|c| format!(", resuming from {}", c.display()))
                                    .unwrap_or_default()
                            ));
                        }
                        Err(WaitEnd::Timeout) => {
                            let reason = format!(
                                "GPU {gpu} did not get {} free within {:.0?}",
                                format_bytes(need_free_bytes),
                                timeout
                            );
                            self.say(&format!("{reason}; stopping"));
                            break (
                                RunOutcome::Stopped,
                                Some(reason),
                                Some(StopKind::Exhausted),
                                outcome_code(RunOutcome::Stopped, &attempts),
                            );
                        }
                        Err(WaitEnd::Signal(sig)) => {
                            let reason = format!(
                                "stopped by the user (signal {sig}) while waiting for memory"
                            );
                            self.say(&reason);
                            break (
                                RunOutcome::Interrupted,
                                Some(reason),
                                Some(StopKind::Interrupted),
                                128 + sig,
                            );
                        }
                    }
                }
            }
        };

        let report = RunReport {
            schema_version: SCHEMA_VERSION,
            command: self.plan.argv.clone(),
            outcome,
            exit_code,
            stop_reason,
            run_dir: self.plan.run_dir.display().to_string(),
            batch: self.batch_report(&p),
            excluded_gpus: p.state.excluded.iter().map(|g| g.0).collect(),
            duration_seconds: started.elapsed().as_secs_f64(),
            attempts,
        };
        Ok(RunResult {
            report,
            last_findings,
            stop_kind,
        })
    }

    fn batch_report(&self, p: &Progress) -> Option<BatchReport> {
        let spec = self.plan.batch.as_ref()?;
        Some(BatchReport {
            target: spec.target.to_string(),
            start: p.start_batch?,
            last: p.state.batch?,
            accumulation_start: p.accum_start,
            accumulation_final: p.accum,
        })
    }

    fn fitted_line(&self, p: &Progress, n: u32, max: u32) -> String {
        let mut parts = Vec::new();
        if let (Some(spec), Some(start), Some(b)) = (&self.plan.batch, p.start_batch, p.state.batch)
            && start != b
        {
            let accum = match (&self.plan.accum_flag, p.accum, p.effective_batch) {
                (Some(flag), Some(a), Some(eff)) if b * a == eff => {
                    format!("; {flag} {a} keeps the effective batch at {eff}")
                }
                (Some(flag), Some(a), Some(eff)) => format!(
                    "; {flag} {a} makes the effective batch {} (was {eff})",
                    b * a
                ),
                _ => String::new(),
            };
            parts.push(format!(
                "batch {b} fitted ({} started at {start}{accum})",
                spec.target
            ));
        }
        for (k, v) in &p.env_changes {
            if Some(k.as_str())
                != self.plan.batch.as_ref().and_then(|s| match &s.target {
                    BatchTarget::Env(name) => Some(name.as_str()),
                    _ => None,
                })
            {
                parts.push(format!("{k}={v}"));
            }
        }
        if parts.is_empty() {
            format!("attempt {n}/{max} succeeded")
        } else {
            format!("attempt {n}/{max} succeeded with {}", parts.join(", "))
        }
    }

    /// Applies a change to the run; returns it in words for the decision line.
    fn apply(&self, p: &mut Progress, change: &Change, gpus: &[GpuView]) -> String {
        match change {
            Change::ExpandableSegments => {
                let merged = allocconf::with_expandable_segments(
                    self.user_env
                        .get("PYTORCH_CUDA_ALLOC_CONF")
                        .map(String::as_str),
                    self.user_env.get("PYTORCH_ALLOC_CONF").map(String::as_str),
                );
                for var in allocconf::ALLOC_CONF_VARS {
                    p.env_changes.insert(var.into(), merged.clone());
                }
                p.state.expandable_segments = true;
                format!("PYTORCH_CUDA_ALLOC_CONF and PYTORCH_ALLOC_CONF={merged}")
            }
            Change::LowerBatch { from, to } => {
                p.state.batch = Some(*to);
                let target = self
                    .plan
                    .batch
                    .as_ref()
                    .map(|s| s.target.to_string())
                    .unwrap_or_default();
                let mut what = format!("batch {from} -> {to} ({target})");
                if let (Some(flag), Some(eff), Some(old)) =
                    (&self.plan.accum_flag, p.effective_batch, p.accum)
                {
                    let a = batch::accumulation_for(eff, *to);
                    p.accum = Some(a);
                    let _ = write!(what, ", {flag} {old} -> {a}");
                }
                what
            }
            Change::MoveGpus { to, exclude } => {
                if let Some(bad) = exclude {
                    p.state.excluded.insert(*bad);
                }
                p.state.gpus.clone_from(to);
                let value = visible_devices(to, gpus);
                p.env_changes
                    .insert("CUDA_VISIBLE_DEVICES".into(), value.clone());
                let list: Vec<String> = to.iter().map(|g| g.0.to_string()).collect();
                format!("GPU {} (CUDA_VISIBLE_DEVICES={value})", list.join(","))
            }
            Change::DebugRerun => {
                p.debug_next = true;
                p.state.debug_rerun_done = true;
                "CUDA_LAUNCH_BLOCKING=1, once, to locate the failing kernel".into()
            }
            Change::Same => "no change".into(),
        }
    }

    fn find_checkpoint(&mut self) -> Option<PathBuf> {
        let spec = self.plan.resume.clone()?;
        match checkpoint::newest_complete(&spec.glob, self.plan.checkpoint_settle) {
            Ok(choice) => {
                for (path, why) in &choice.skipped {
                    self.say(&format!(
                        "passing over checkpoint {}: it {}",
                        path.display(),
                        why.describe()
                    ));
                }
                if choice.chosen.is_none() {
                    self.say(&format!(
                        "no complete checkpoint matches `{}`: starting from the beginning",
                        spec.glob
                    ));
                }
                choice.chosen
            }
            Err(e) => {
                self.say(&e.to_string());
                None
            }
        }
    }

    fn wait_for_memory(
        &self,
        gpu: GpuIndex,
        need: u64,
        timeout: Duration,
        signals: &SignalForwarder,
    ) -> Result<u64, WaitEnd> {
        let deadline = Instant::now() + timeout;
        loop {
            let free = self
                .monitor
                .as_ref()
                .map(Monitor::gpus_latest)
                .unwrap_or_default()
                .into_iter()
                .find(|v| v.index == gpu)
                .and_then(|v| v.free_bytes);
            if let Some(free) = free
                && free >= need
            {
                return Ok(free);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(WaitEnd::Timeout);
            }
            if let Some(sig) = signals.recv_timeout(self.plan.wait_poll.min(left)) {
                return Err(WaitEnd::Signal(sig));
            }
        }
    }
}

enum WaitEnd {
    Timeout,
    Signal(i32),
}

/// The exit status of a run that did not succeed: the last attempt's own status, or 1 when
/// that was 0 (it cannot be: only failures stop).
fn outcome_code(_outcome: RunOutcome, attempts: &[AttemptReport]) -> i32 {
    attempts
        .last()
        .map(|a| a.exit_code)
        .filter(|c| *c != 0)
        .unwrap_or(1)
}

fn peak_source(stats: &AttemptGpuStats) -> Option<&'static str> {
    if stats.peak_job_bytes.is_some() {
        Some("process")
    } else if stats.peak_device_used_bytes.is_empty() {
        None
    } else {
        Some("device")
    }
}

fn hook_files(allocator: &[AllocatorFacts]) -> Vec<String> {
    let mut out = Vec::new();
    for a in allocator {
        out.push(a.file.display().to_string());
        if let Some(s) = &a.snapshot {
            out.push(s.display().to_string());
        }
    }
    out
}

struct AttemptObserver<'a> {
    monitor: Option<&'a Monitor>,
    gpus: &'a [GpuIndex],
}

impl Observer for AttemptObserver<'_> {
    fn started(&mut self, pgid: i32) {
        if let Some(m) = self.monitor {
            m.begin_attempt(pgid, self.gpus);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::{DeviceInfo, GpuUuid, Reading};

    fn inventory(n: u32) -> Inventory {
        Inventory {
            devices: (0..n)
                .map(|i| DeviceInfo {
                    index: GpuIndex(i),
                    uuid: GpuUuid(format!("GPU-aaaa{i}")),
                    name: "NVIDIA H200".into(),
                    pci_bus_id: Reading::Unsupported,
                    compute_capability: Reading::Unsupported,
                    memory_total_bytes: Reading::Unsupported,
                    temperature_slowdown_celsius: Reading::Unsupported,
                    temperature_shutdown_celsius: Reading::Unsupported,
                    pcie_max_link: Reading::Unsupported,
                    serial: Reading::Unsupported,
                })
                .collect(),
            ..Inventory::default()
        }
    }

    #[test]
    fn initial_gpus_table() {
        let inv = inventory(4);
        let cases: &[(Option<&str>, &[u32])] = &[
            (None, &[0]),
            (Some("2"), &[2]),
            (Some("3,1"), &[3, 1]),
            (Some("GPU-aaaa2"), &[2]),
            (Some("MIG-xyz"), &[]),
            (Some("7"), &[]),
        ];
        for (visible, want) in cases {
            let got: Vec<u32> = initial_gpus(*visible, Some(&inv))
                .iter()
                .map(|g| g.0)
                .collect();
            assert_eq!(got, *want, "{visible:?}");
        }
        assert!(initial_gpus(Some("0"), None).is_empty());
    }

    #[test]
    fn visible_devices_prefers_uuids() {
        let views = vec![GpuView {
            index: GpuIndex(1),
            uuid: Some("GPU-b".into()),
            ..GpuView::default()
        }];
        assert_eq!(
            visible_devices(&[GpuIndex(1), GpuIndex(2)], &views),
            "GPU-b,2"
        );
    }
}
