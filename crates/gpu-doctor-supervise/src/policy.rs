//! The pure half of the supervisor: from what an attempt left behind (its findings, the
//! allocator state the hook saved, the GPU events and the GPUs' state now) to one
//! [`Decision`]. No clock, no process, no file: every branch is table-tested.
//!
//! [`classify`] settles the cause, preferring numbers over words: a hardware event on the
//! job's GPU beats whatever the job printed (an Xid 79 makes the job print "illegal
//! address" too); the allocator's own numbers turn an ambiguous OOM into fragmentation; memory
//! still held on the job's GPU after the job is gone means another process. [`decide`] then
//! picks the change that addresses that cause, or stops with the reason.

use crate::memstats::AllocatorFacts;
use gpu_doctor_model::{Cause, Finding, GpuEvent, GpuEventKind, GpuIndex};
use std::collections::BTreeSet;
use std::time::Duration;

/// Xids that mean the GPU itself is failing (NVIDIA's Xid catalog): 48 double-bit ECC,
/// 63/64 row remapping events/failure, 74 NVLink error, 79 fallen off the bus, 94/95
/// contained/uncontained ECC error.
pub const HARDWARE_XIDS: [u32; 7] = [48, 63, 64, 74, 79, 94, 95];

/// Memory other processes hold on the job's GPU after the job is gone is "another process"
/// when it is at least this share of the GPU...
const OTHER_PROCESS_SHARE: f64 = 0.05;
/// ...and at least this many bytes.
const OTHER_PROCESS_MIN_BYTES: u64 = 2 << 30;
/// When the memory the job needs is unknown, waiting ends when this share of the GPU is free.
const WAIT_FREE_SHARE: f64 = 0.9;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    /// The shell's convention: death by signal `s` is `128 + s`.
    pub fn code(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

/// One GPU as the policy sees it now.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuView {
    pub index: GpuIndex,
    /// The UUID, used for `CUDA_VISIBLE_DEVICES` because CUDA's own ordering can differ from
    /// NVML's index.
    pub uuid: Option<String>,
    pub total_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// Not answering, or with an uncorrectable ECC error pending.
    pub unhealthy: bool,
}

/// What the policy may do, from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyOptions {
    pub max_attempts: u32,
    /// Whether the batch can be lowered (`--batch-arg`, `{batch}` or `--batch-env`).
    pub batch_control: bool,
    pub batch_factor: f64,
    pub min_batch: u64,
    pub debug_rerun: bool,
    pub wait_timeout: Duration,
}

impl Default for PolicyOptions {
    fn default() -> Self {
        PolicyOptions {
            max_attempts: 5,
            batch_control: false,
            batch_factor: 0.5,
            min_batch: 1,
            debug_rerun: false,
            wait_timeout: Duration::from_secs(300),
        }
    }
}

/// What the run has done so far.
// Each flag is an independent fact about the run, not a state machine in disguise.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunState {
    /// Attempts finished, including the one being judged.
    pub attempts: u32,
    /// The batch the attempt ran with, when the batch is controlled.
    pub batch: Option<u64>,
    /// Expandable segments are on (set by the user or by an earlier decision).
    pub expandable_segments: bool,
    /// The allocator runs `backend:cudaMallocAsync`, where expandable segments do not apply.
    pub async_allocator: bool,
    pub debug_rerun_done: bool,
    /// The attempt being judged was the `CUDA_LAUNCH_BLOCKING=1` rerun.
    pub this_was_debug_rerun: bool,
    /// The GPUs the job ran on (NVML indices, CUDA order); empty when unknown.
    pub gpus: Vec<GpuIndex>,
    /// GPUs left out for the rest of the run after a hardware fault.
    pub excluded: BTreeSet<GpuIndex>,
    /// The user stopped the job (a signal was forwarded).
    pub interrupted: bool,
}

/// What one attempt left behind.
#[derive(Debug, Clone, Copy)]
pub struct AttemptFacts<'a> {
    pub exit: Exit,
    /// From the explain engine, primary root cause first.
    pub findings: &'a [Finding],
    /// What the hook saved at the OOM, newest first.
    pub allocator: &'a [AllocatorFacts],
    /// GPU events seen while the attempt ran.
    pub events: &'a [GpuEvent],
    /// The GPUs now, after the job is gone; empty when there is no GPU source.
    pub gpus: &'a [GpuView],
}

/// The cause settled from every source of facts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Classification {
    pub cause: Option<Cause>,
    /// The GPU concerned (NVML index), when known.
    pub gpu: Option<GpuIndex>,
    pub xid: Option<u32>,
    /// The allocation that failed.
    pub requested_bytes: Option<u64>,
    /// What the job itself held at the failure.
    pub job_bytes: Option<u64>,
    /// Why the cause differs from what the job's output alone said, in words.
    pub refined: Option<String>,
}

/// The change an attempt is retried with.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Add `expandable_segments:True` to the allocator settings.
    ExpandableSegments,
    /// Run with this batch.
    LowerBatch { from: u64, to: u64 },
    /// Run on these GPUs; `exclude` is left out for the rest of the run.
    MoveGpus {
        to: Vec<GpuIndex>,
        exclude: Option<GpuIndex>,
    },
    /// Once, with `CUDA_LAUNCH_BLOCKING=1`, to find the kernel that failed.
    DebugRerun,
    /// The same again, after the backoff (nothing known would change the outcome, but the
    /// cause is transient).
    Same,
}

impl Change {
    /// The `action` name in the report.
    pub fn action(&self) -> &'static str {
        match self {
            Change::ExpandableSegments => "expandable_segments",
            Change::LowerBatch { .. } => "lower_batch",
            Change::MoveGpus {
                exclude: Some(_), ..
            } => "exclude_gpu",
            Change::MoveGpus { .. } => "move_gpu",
            Change::DebugRerun => "debug_rerun",
            Change::Same => "retry",
        }
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// It worked.
    Finished,
    Retry {
        change: Change,
        reason: String,
    },
    /// Wait until `gpu` has `need_free_bytes` free (at most `timeout`), then run again as is.
    Wait {
        gpu: GpuIndex,
        need_free_bytes: u64,
        timeout: Duration,
        reason: String,
    },
    Stop {
        reason: String,
        kind: StopKind,
    },
}

/// Why the run stopped, for the exit summary and the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopKind {
    /// The user stopped it.
    Interrupted,
    /// The environment is broken; `gpu-doctor check` says how.
    Environment,
    /// A fault that no setting fixes (sticky error, leak, unknown failure).
    NoFix,
    /// Every change available was tried.
    Exhausted,
}

impl Decision {
    /// The `action` name in the report.
    pub fn action(&self) -> &'static str {
        match self {
            Decision::Finished => "none",
            Decision::Retry { change, .. } => change.action(),
            Decision::Wait { .. } => "wait",
            Decision::Stop { .. } => "stop",
        }
    }
}

fn value(findings: &[Finding], keys: &[&str]) -> Option<f64> {
    findings.iter().find_map(|f| {
        f.evidence
            .iter()
            .find_map(|e| keys.iter().find_map(|k| e.values.get(*k).copied()))
    })
}

fn bytes(v: Option<f64>) -> Option<u64> {
    v.filter(|v| v.is_finite() && *v >= 0.0).map(|v| v as u64)
}

/// The job's GPU: the one a finding names (a CUDA ordinal among the job's GPUs) or the first.
fn job_gpu(state: &RunState, ordinal: Option<u32>) -> Option<GpuIndex> {
    ordinal
        .and_then(|o| state.gpus.get(o as usize).copied())
        .or_else(|| state.gpus.first().copied())
}

fn hardware_event(events: &[GpuEvent], state: &RunState) -> Option<(GpuIndex, Option<u32>)> {
    events.iter().find_map(|e| {
        let ours = state.gpus.is_empty() || state.gpus.contains(&e.gpu);
        if !ours {
            return None;
        }
        match &e.kind {
            GpuEventKind::Xid { xid, .. } if HARDWARE_XIDS.contains(xid) => {
                Some((e.gpu, Some(*xid)))
            }
            GpuEventKind::EccUncorrected | GpuEventKind::DeviceLost { .. } => Some((e.gpu, None)),
            _ => None,
        }
    })
}

/// Settles the cause of a failed attempt.
pub fn classify(facts: &AttemptFacts<'_>, state: &RunState) -> Classification {
    let findings = facts.findings;
    let mut class = Classification {
        requested_bytes: bytes(value(findings, &["requested_bytes"])),
        job_bytes: bytes(value(findings, &["this_process_bytes", "process_bytes"])),
        ..Classification::default()
    };
    let ordinal = bytes(value(findings, &["gpu", "device"])).map(|g| g as u32);

    // 1. The GPU itself reported a fault while the job ran.
    if let Some((gpu, xid)) = hardware_event(facts.events, state) {
        class.cause = Some(Cause::HwXid);
        class.gpu = Some(gpu);
        class.xid = xid;
        class.refined = Some(match xid {
            Some(x) => format!("the driver reported Xid {x} on GPU {gpu} while the job ran"),
            None => format!("GPU {gpu} reported an uncorrectable error while the job ran"),
        });
        return class;
    }
    // 2. A hardware finding anywhere in the output outranks the errors it causes in the job.
    if let Some(hw) = findings.iter().find(|f| {
        f.cause == Cause::HwXid
            && f.evidence
                .iter()
                .find_map(|e| e.values.get("xid"))
                .is_none_or(|x| HARDWARE_XIDS.contains(&(*x as u32)))
    }) {
        class.cause = Some(Cause::HwXid);
        class.xid = hw
            .evidence
            .iter()
            .find_map(|e| e.values.get("xid"))
            .map(|x| *x as u32);
        class.gpu = hw.gpu.or_else(|| job_gpu(state, ordinal));
        return class;
    }
    let Some(primary) = findings.first() else {
        class.cause = (!facts.exit.success()).then_some(Cause::Other);
        return class;
    };
    class.cause = Some(primary.cause);
    class.gpu = primary.gpu.or_else(|| job_gpu(state, ordinal));
    class.xid = bytes(value(findings, &["xid"])).map(|x| x as u32);
    if !primary.cause.is_oom() {
        return class;
    }

    // 3. The allocator's own numbers at the OOM.
    if let Some(alloc) = facts.allocator.first() {
        class.requested_bytes = class.requested_bytes.or(alloc.requested_bytes);
        class.job_bytes = class.job_bytes.or(Some(alloc.reserved_bytes));
        if alloc.looks_fragmented() && primary.cause != Cause::OomFragmentation {
            class.cause = Some(Cause::OomFragmentation);
            class.refined = Some(format!(
                "the hook saw {} reserved by PyTorch but unallocated at the OOM",
                gpu_doctor_model::units::format_bytes(alloc.reserved_unallocated_bytes())
            ));
            return class;
        }
    }
    // 4. Memory still held on the job's GPU after the job is gone belongs to someone else.
    if primary.cause == Cause::OomCapacity
        && let Some(gpu) = class.gpu
        && let Some(view) = facts.gpus.iter().find(|g| g.index == gpu)
        && let (Some(total), Some(free)) = (view.total_bytes, view.free_bytes)
    {
        let held = total.saturating_sub(free);
        // Only when the job would have fitted on the empty GPU: otherwise it is capacity,
        // whoever else is there.
        let need = class
            .requested_bytes
            .map(|r| r.saturating_add(class.job_bytes.unwrap_or(0)));
        if need.is_none_or(|n| n <= total)
            && held >= OTHER_PROCESS_MIN_BYTES
            && held as f64 >= total as f64 * OTHER_PROCESS_SHARE
        {
            class.cause = Some(Cause::OomOtherProcess);
            class.refined = Some(format!(
                "{} is still in use on GPU {gpu} after the job exited",
                gpu_doctor_model::units::format_bytes(held)
            ));
        }
    }
    class
}

/// The healthiest GPU with the most free memory, outside `avoid`.
fn best_gpu<'a>(gpus: &'a [GpuView], avoid: &BTreeSet<GpuIndex>) -> Option<&'a GpuView> {
    gpus.iter()
        .filter(|g| !g.unhealthy && !avoid.contains(&g.index))
        .max_by_key(|g| (g.free_bytes.unwrap_or(0), std::cmp::Reverse(g.index)))
}

fn replace(gpus: &[GpuIndex], old: Option<GpuIndex>, new: GpuIndex) -> Vec<GpuIndex> {
    match old {
        Some(old) if gpus.contains(&old) && gpus.len() > 1 => gpus
            .iter()
            .map(|g| if *g == old { new } else { *g })
            .collect(),
        _ => vec![new],
    }
}

/// Picks what to do after an attempt.
pub fn decide(
    facts: &AttemptFacts<'_>,
    class: &Classification,
    state: &RunState,
    opts: &PolicyOptions,
) -> Decision {
    if facts.exit.success() {
        return Decision::Finished;
    }
    if state.interrupted {
        return Decision::Stop {
            reason: format!("stopped by the user (exit {})", facts.exit.code()),
            kind: StopKind::Interrupted,
        };
    }
    let decision = plan(facts, class, state, opts);
    // Anything but a stop needs an attempt left.
    let reason = match &decision {
        Decision::Retry { reason, .. } | Decision::Wait { reason, .. } => reason,
        Decision::Finished | Decision::Stop { .. } => return decision,
    };
    if state.attempts >= opts.max_attempts {
        return Decision::Stop {
            reason: format!(
                "would retry ({reason}), but --max-attempts {} is reached",
                opts.max_attempts
            ),
            kind: StopKind::Exhausted,
        };
    }
    decision
}

fn no_fix(reason: String) -> Decision {
    Decision::Stop {
        reason,
        kind: StopKind::NoFix,
    }
}

fn plan(
    facts: &AttemptFacts<'_>,
    class: &Classification,
    state: &RunState,
    opts: &PolicyOptions,
) -> Decision {
    let Some(cause) = class.cause else {
        return no_fix(format!("exited with {}", facts.exit.code()));
    };
    match cause {
        Cause::OomFragmentation if !state.expandable_segments && !state.async_allocator => {
            Decision::Retry {
                change: Change::ExpandableSegments,
                reason: "memory is fragmented: PyTorch held enough but not in one piece".into(),
            }
        }
        Cause::OomFragmentation | Cause::OomCapacity => lower_batch(state, opts, cause),
        Cause::OomOtherProcess => other_process(facts, class, state, opts),
        Cause::OomLeak => no_fix(
            "memory grows every step (a leak): a smaller batch only delays it; \
             see the findings for where it grows"
                .into(),
        ),
        Cause::HwXid => hardware(facts, class, state),
        Cause::IllegalAccess | Cause::DeviceAssert => {
            if state.this_was_debug_rerun {
                no_fix(
                    "failed again under CUDA_LAUNCH_BLOCKING=1: the failing kernel is the one in \
                     the traceback above"
                        .into(),
                )
            } else if opts.debug_rerun && !state.debug_rerun_done {
                Decision::Retry {
                    change: Change::DebugRerun,
                    reason: "sticky (the CUDA context is lost): one rerun with \
                             CUDA_LAUNCH_BLOCKING=1 to find the kernel"
                        .into(),
                }
            } else {
                no_fix(
                    "a bug in the job or a kernel, and sticky: the same run would fail the same \
                     way (--debug-rerun reruns once with CUDA_LAUNCH_BLOCKING=1 to find the \
                     kernel)"
                        .into(),
                )
            }
        }
        c if c.is_environment() => Decision::Stop {
            reason: "the installation is broken, and a retry cannot fix it".into(),
            kind: StopKind::Environment,
        },
        _ => no_fix("no change gpu-doctor knows would fix it".into()),
    }
}

fn lower_batch(state: &RunState, opts: &PolicyOptions, cause: Cause) -> Decision {
    let why = if cause == Cause::OomFragmentation {
        "memory is fragmented even with expandable segments"
    } else {
        "the job needs more memory than the GPU has"
    };
    if !opts.batch_control {
        return Decision::Stop {
            reason: format!(
                "{why}, and there is no batch to lower (give --batch-arg FLAG, --batch-env NAME or \
                 a {{batch}} placeholder)"
            ),
            kind: StopKind::NoFix,
        };
    }
    let Some(current) = state.batch else {
        return no_fix(format!("{why}, and the current batch is unknown"));
    };
    match crate::batch::next_batch(current, opts.batch_factor, opts.min_batch) {
        Some(to) => Decision::Retry {
            change: Change::LowerBatch { from: current, to },
            reason: why.into(),
        },
        None => Decision::Stop {
            reason: format!("{why}, even at the smallest batch allowed ({current}, --min-batch)"),
            kind: StopKind::Exhausted,
        },
    }
}

fn other_process(
    facts: &AttemptFacts<'_>,
    class: &Classification,
    state: &RunState,
    opts: &PolicyOptions,
) -> Decision {
    if facts.gpus.is_empty() {
        return Decision::Retry {
            change: Change::Same,
            reason: "another process holds the memory; no GPU state to check, so retrying after \
                     the backoff"
                .into(),
        };
    }
    let current = class.gpu.or_else(|| state.gpus.first().copied());
    let current_view = current.and_then(|c| facts.gpus.iter().find(|g| g.index == c));
    let need = match (class.job_bytes, class.requested_bytes) {
        (Some(job), Some(req)) => Some(job.saturating_add(req)),
        (None, Some(req)) => Some(req),
        _ => None,
    };
    let mut avoid = state.excluded.clone();
    avoid.extend(state.gpus.iter().copied());
    let current_free = current_view.and_then(|v| v.free_bytes).unwrap_or(0);
    if let Some(best) = best_gpu(facts.gpus, &avoid) {
        let free = best.free_bytes.unwrap_or(0);
        if free > current_free && need.is_none_or(|n| free >= n) {
            return Decision::Retry {
                change: Change::MoveGpus {
                    to: replace(&state.gpus, current, best.index),
                    exclude: None,
                },
                reason: format!(
                    "another process holds the memory of GPU {}; GPU {} has {} free",
                    current.map_or_else(|| "?".into(), |c| c.to_string()),
                    best.index,
                    gpu_doctor_model::units::format_bytes(free)
                ),
            };
        }
    }
    let Some(gpu) = current else {
        return no_fix("another process holds the memory, and the job's GPU is unknown".into());
    };
    let total = current_view.and_then(|v| v.total_bytes).unwrap_or(0);
    let need_free = need
        .filter(|n| total == 0 || *n <= total)
        .unwrap_or((total as f64 * WAIT_FREE_SHARE) as u64);
    Decision::Wait {
        gpu,
        need_free_bytes: need_free,
        timeout: opts.wait_timeout,
        reason: format!(
            "another process holds the memory of GPU {gpu} and no other GPU has more free: waiting \
             for {} free",
            gpu_doctor_model::units::format_bytes(need_free)
        ),
    }
}

fn hardware(facts: &AttemptFacts<'_>, class: &Classification, state: &RunState) -> Decision {
    if let Some(xid) = class.xid.filter(|x| !HARDWARE_XIDS.contains(x)) {
        return no_fix(format!(
            "Xid {xid} is raised by a fault in the job (not the GPU): moving would not help"
        ));
    }
    let bad = class.gpu.or_else(|| state.gpus.first().copied());
    let what = class.xid.map_or_else(
        || "an uncorrectable GPU error".to_owned(),
        |x| format!("Xid {x}"),
    );
    let Some(bad) = bad else {
        return no_fix(format!("{what}, on a GPU gpu-doctor cannot identify"));
    };
    let mut avoid = state.excluded.clone();
    avoid.insert(bad);
    avoid.extend(state.gpus.iter().copied().filter(|g| *g != bad));
    match best_gpu(facts.gpus, &avoid) {
        Some(spare) => Decision::Retry {
            change: Change::MoveGpus {
                to: replace(&state.gpus, Some(bad), spare.index),
                exclude: Some(bad),
            },
            reason: format!(
                "{what} on GPU {bad}: leaving it out for the rest of the run, moving to GPU {}",
                spare.index
            ),
        },
        None => no_fix(format!(
            "{what} on GPU {bad}, and no healthy GPU is left to move to"
        )),
    }
}

#[cfg(test)]
mod tests;
