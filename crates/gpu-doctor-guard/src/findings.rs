//! The findings of memory budgets, GD590–GD599.
//!
//! | code | cause | severity | when |
//! |---|---|---|---|
//! | GD590 | `oom_capacity` | warn | `run --memory-limit`: the job holds more than its budget on a GPU |
//! | GD591 | `oom_capacity` | error | `run --memory-limit --enforce`: the job was stopped for it |
//! | GD592 | `oom_other_process` | warn | `guard`: a process is over its user's budget |
//! | GD593 | `oom_other_process` | error | `guard`: a process was stopped for it |
//!
//! Why two causes: for a job under `run`, going past its own budget is the job needing more
//! than it was given, the same as running out of a GPU's capacity (`oom_capacity`: lower the
//! batch, or ask for a bigger budget). For the guard, which watches everybody, an over-budget
//! process is the neighbour that takes the memory other jobs were promised: the cause other
//! jobs' out-of-memory errors will have (`oom_other_process`).

use crate::enforce::StopOutcome;
use crate::policy::Verdict;
use gpu_doctor_model::units::format_bytes;
use gpu_doctor_model::{Cause, Evidence, Finding, GpuIndex, Severity};
use std::collections::BTreeMap;

pub const BUDGET_EXCEEDED: &str = "GD590";
pub const JOB_STOPPED: &str = "GD591";
pub const NEIGHBOUR_OVER_BUDGET: &str = "GD592";
pub const NEIGHBOUR_STOPPED: &str = "GD593";

fn nvml(text: String, values: &[(&str, u64)]) -> Evidence {
    Evidence {
        source: "nvml".into(),
        line: None,
        text,
        values: values
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v as f64))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// `process 7` or `processes 7, 8`.
fn pid_list(pids: &[u32]) -> String {
    let list = pids
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if pids.len() == 1 {
        format!("process {list}")
    } else {
        format!("processes {list}")
    }
}

/// GD590: the job under `run --memory-limit` holds `used` on `gpu`, over `limit`.
pub fn budget_exceeded(gpu: GpuIndex, used: u64, limit: u64, pids: &[u32]) -> Finding {
    Finding::new(
        BUDGET_EXCEEDED,
        Cause::OomCapacity,
        Severity::Warn,
        format!(
            "the job holds {} on GPU {gpu}, over its budget of {}",
            format_bytes(used),
            format_bytes(limit)
        ),
    )
    .on_gpu(gpu)
    .with_evidence(nvml(
        format!(
            "{} of the job {} {} on GPU {gpu}; budget {}",
            pid_list(pids),
            if pids.len() == 1 { "holds" } else { "hold" },
            format_bytes(used),
            format_bytes(limit)
        ),
        &[("used_bytes", used), ("budget_bytes", limit)],
    ))
    .with_remedy(
        "Lower the batch size or sequence length so the job fits its budget",
        None,
        Some(format!(
            "it needs {} more than it was given",
            format_bytes(used.saturating_sub(limit))
        )),
    )
    .with_remedy(
        "Or give it a larger budget, if the GPU's other users can spare it",
        Some(format!(
            "gpu-doctor run --memory-limit {}GiB ...",
            used.div_ceil(1 << 30)
        )),
        None,
    )
}

/// GD591: the job was stopped for holding `used` on `gpu` against `limit`.
pub fn job_stopped(
    gpu: GpuIndex,
    used: u64,
    limit: u64,
    pids: &[u32],
    outcome: &StopOutcome,
) -> Finding {
    Finding::new(
        JOB_STOPPED,
        Cause::OomCapacity,
        Severity::Error,
        format!(
            "the job was stopped: it used {} on GPU {gpu} against a budget of {}",
            format_bytes(used),
            format_bytes(limit)
        ),
    )
    .on_gpu(gpu)
    .with_evidence(nvml(
        format!(
            "{} of the job held {} on GPU {gpu}; budget {}",
            pid_list(pids),
            format_bytes(used),
            format_bytes(limit)
        ),
        &[("used_bytes", used), ("budget_bytes", limit)],
    ))
    .with_evidence(Evidence {
        source: "gpu-doctor".into(),
        text: format!("the job {}", outcome.describe()),
        ..Evidence::default()
    })
    .with_remedy(
        "Lower the batch size or sequence length so the job fits its budget",
        None,
        Some(format!(
            "it needed at least {} more than it was given",
            format_bytes(used.saturating_sub(limit))
        )),
    )
    .with_remedy(
        "Or run it with a larger budget, if the GPU's other users can spare it",
        Some(format!(
            "gpu-doctor run --memory-limit {}GiB --enforce ...",
            used.div_ceil(1 << 30)
        )),
        None,
    )
}

/// GD592 or GD593: what the guard found (and did) about one process.
pub fn guard_finding(v: &Verdict, outcome: Option<&StopOutcome>) -> Finding {
    let stopped = matches!(
        outcome,
        Some(StopOutcome::Terminated { .. } | StopOutcome::Killed)
    );
    let who = format!(
        "pid {} of {} on GPU {}{}",
        v.pid,
        v.user,
        v.gpu,
        v.mig_instance
            .map(|gi| format!(" (MIG GPU instance {gi})"))
            .unwrap_or_default()
    );
    let over = format!(
        "{} holds {} in all there, against a budget of {} ({}, line {})",
        v.user,
        format_bytes(v.user_bytes),
        format_bytes(v.budget_bytes),
        v.rule,
        v.rule_line
    );
    let (code, severity, message) = if stopped {
        (
            NEIGHBOUR_STOPPED,
            Severity::Error,
            format!(
                "stopped {who}: {} used {} there against a budget of {}; this process held {}",
                v.user,
                format_bytes(v.user_bytes),
                format_bytes(v.budget_bytes),
                format_bytes(v.process_bytes)
            ),
        )
    } else {
        (
            NEIGHBOUR_OVER_BUDGET,
            Severity::Warn,
            format!(
                "{who} is over budget: it holds {} and {over}",
                format_bytes(v.process_bytes)
            ),
        )
    };
    let mut f = Finding::new(code, Cause::OomOtherProcess, severity, message)
        .on_gpu(v.gpu)
        .with_evidence(nvml(
            format!(
                "pid {} holds {}; {over}{}",
                v.pid,
                format_bytes(v.process_bytes),
                v.command
                    .as_deref()
                    .map(|c| format!("; command: {c}"))
                    .unwrap_or_default()
            ),
            &[
                ("process_bytes", v.process_bytes),
                ("user_bytes", v.user_bytes),
                ("budget_bytes", v.budget_bytes),
            ],
        ));
    if let Some(reason) = &v.refused {
        f = f.with_evidence(Evidence {
            source: "gpu-doctor".into(),
            text: reason.clone(),
            ..Evidence::default()
        });
    }
    if let Some(outcome) = outcome {
        f = f.with_evidence(Evidence {
            source: "gpu-doctor".into(),
            text: format!("the process {}", outcome.describe()),
            ..Evidence::default()
        });
    }
    f.with_remedy(
        format!(
            "{} should lower the job's memory, or run it under a budget it keeps to",
            v.user
        ),
        Some(format!(
            "gpu-doctor run --memory-limit {}GiB --enforce -- ...",
            (v.budget_bytes >> 30).max(1)
        )),
        Some("the budget is passed to PyTorch and JAX, so the job fails inside its own budget instead of taking other jobs' memory".into()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Action;
    use gpu_doctor_model::Pid;
    use std::time::Duration;

    #[test]
    fn job_findings_say_used_against_budget() {
        let f = budget_exceeded(GpuIndex(0), 25 << 30, 20 << 30, &[4242, 4243]);
        assert_eq!(f.code.0, "GD590");
        assert_eq!(f.cause, Cause::OomCapacity);
        assert_eq!(
            f.message,
            "the job holds 25.0 GiB on GPU 0, over its budget of 20.0 GiB"
        );
        assert_eq!(
            f.remedies[1].command.as_deref(),
            Some("gpu-doctor run --memory-limit 25GiB ...")
        );
        let f = job_stopped(
            GpuIndex(1),
            22 << 30,
            20 << 30,
            &[7],
            &StopOutcome::Terminated { after_ms: 120 },
        );
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.message,
            "the job was stopped: it used 22.0 GiB on GPU 1 against a budget of 20.0 GiB"
        );
        assert_eq!(f.evidence[1].text, "the job exited 120 ms after SIGTERM");
    }

    #[test]
    fn guard_findings() {
        let v = Verdict {
            pid: Pid(8100),
            gpu: GpuIndex(0),
            mig_instance: Some(2),
            uid: 1000,
            user: "alice".into(),
            rule: "user alice".into(),
            rule_line: 3,
            process_bytes: 20 << 30,
            user_bytes: 30 << 30,
            budget_bytes: 16 << 30,
            action: Action::Warn,
            refused: Some("not stopped: ...".into()),
            grace: Duration::from_secs(1),
            start_time: 1,
            command: Some("python train.py".into()),
        };
        let f = guard_finding(&v, None);
        assert_eq!(f.code.0, "GD592");
        assert_eq!(f.cause, Cause::OomOtherProcess);
        assert_eq!(
            f.message,
            "pid 8100 of alice on GPU 0 (MIG GPU instance 2) is over budget: it holds 20.0 GiB and alice holds 30.0 GiB in all there, against a budget of 16.0 GiB (user alice, line 3)"
        );
        assert_eq!(f.evidence[1].text, "not stopped: ...");
        let f = guard_finding(&v, Some(&StopOutcome::Killed));
        assert_eq!(f.code.0, "GD593");
        assert_eq!(
            f.message,
            "stopped pid 8100 of alice on GPU 0 (MIG GPU instance 2): alice used 30.0 GiB there against a budget of 16.0 GiB; this process held 20.0 GiB"
        );
        // A stop that did not happen is not reported as one.
        let f = guard_finding(&v, Some(&StopOutcome::PidReused));
        assert_eq!(f.code.0, "GD592");
    }
}
