//! What a supervised run writes: the `--report` JSON (see `docs/run.md`; its field names are
//! an interface) and the human summary printed on stderr at the end.

use gpu_doctor_model::units::format_bytes;
use gpu_doctor_model::{Cause, GpuEvent};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// The last attempt exited 0.
    Succeeded,
    /// gpu-doctor stopped retrying (no fix, environment, attempts or batch exhausted).
    Stopped,
    /// The user stopped it with a signal.
    Interrupted,
}

/// The finding an attempt's decision rested on, in short.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingRef {
    pub code: String,
    pub message: String,
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptReport {
    /// 1-based.
    pub attempt: u32,
    /// The command exactly as run.
    pub argv: Vec<String>,
    /// Variables gpu-doctor set on top of the user's environment for this attempt (the hook's
    /// own plumbing, `PYTHONPATH` and `GPU_DOCTOR_*`, is not listed).
    pub env_changes: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accumulation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<String>,
    /// The exit status, `128 + signal` when a signal ended it.
    pub exit_code: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The root cause settled for a failed attempt (`null` when it succeeded).
    pub cause: Option<Cause>,
    /// Why the cause differs from what the job's output alone said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause_detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<FindingRef>,
    /// What was done next: `none`, `expandable_segments`, `lower_batch`, `move_gpu`,
    /// `exclude_gpu`, `wait`, `debug_rerun`, `retry` or `stop`.
    pub action: String,
    /// The decision, in a sentence.
    pub reason: String,
    pub duration_seconds: f64,
    /// The most GPU memory the job held while it ran (sampled); `null` without a GPU source.
    pub peak_gpu_memory_bytes: Option<u64>,
    /// `process` (the job's own processes, per NVML) or `device` (everything on its GPUs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_gpu_memory_source: Option<&'static str>,
    /// Where this attempt's output tail and the hook's files are.
    pub incident_dir: String,
    /// Files the Python hook wrote at an out-of-memory error.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hook_files: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_events: Vec<GpuEvent>,
}

/// What fitted after the batch was lowered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchReport {
    /// Where the batch goes: the flag, `{batch}` or `$NAME`.
    pub target: String,
    pub start: u64,
    #[serde(rename = "final")]
    pub last: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accumulation_start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accumulation_final: Option<u64>,
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub schema_version: u32,
    pub command: Vec<String>,
    pub outcome: RunOutcome,
    /// What `gpu-doctor run` exits with: the last attempt's status.
    pub exit_code: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    pub run_dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded_gpus: Vec<u32>,
    pub duration_seconds: f64,
    pub attempts: Vec<AttemptReport>,
}

impl RunReport {
    /// The human summary printed on stderr at the end.
    pub fn summary_text(&self) -> String {
        let mut out = String::new();
        let n = self.attempts.len();
        let plural = if n == 1 { "" } else { "s" };
        let head = match self.outcome {
            RunOutcome::Succeeded => "succeeded",
            RunOutcome::Stopped => "stopped",
            RunOutcome::Interrupted => "interrupted",
        };
        let _ = writeln!(
            out,
            "gpu-doctor run: {head} after {n} attempt{plural} in {:.1} s (exit {})",
            self.duration_seconds, self.exit_code
        );
        for a in &self.attempts {
            let cause = a.cause.map_or("-", Cause::as_str);
            // Whose peak: the job's own processes, or the whole GPU (shared with others).
            let peak = a.peak_gpu_memory_bytes.map_or_else(
                || "-".to_owned(),
                |b| match a.peak_gpu_memory_source {
                    Some("device") => format!("{} (GPU)", format_bytes(b)),
                    _ => format_bytes(b),
                },
            );
            let _ = writeln!(
                out,
                "  {:>2}. exit {:<3} {:<18} {:<19} {:>7.1} s  peak {peak}",
                a.attempt, a.exit_code, cause, a.action, a.duration_seconds
            );
        }
        if let Some(b) = &self.batch {
            let accum = match (b.accumulation_start, b.accumulation_final) {
                (Some(s), Some(f)) if s != f => format!(
                    "; accumulation {s} -> {f} keeps the effective batch at {}",
                    b.last * f
                ),
                _ => String::new(),
            };
            let verb = if self.outcome == RunOutcome::Succeeded {
                "fitted"
            } else {
                "was the last tried"
            };
            let _ = writeln!(
                out,
                "  batch ({}): {} {verb}, started at {}{accum}",
                b.target, b.last, b.start
            );
        }
        if !self.excluded_gpus.is_empty() {
            let gpus: Vec<String> = self.excluded_gpus.iter().map(u32::to_string).collect();
            let _ = writeln!(out, "  left out after a fault: GPU {}", gpus.join(", "));
        }
        if let Some(reason) = &self.stop_reason {
            let _ = writeln!(out, "  stopped because: {reason}");
        }
        let _ = writeln!(out, "  run folder: {}", self.run_dir);
        out
    }
}
