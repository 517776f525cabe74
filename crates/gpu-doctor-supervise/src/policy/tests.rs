//! Table tests of the policy: one row per situation, on constructed findings.

use super::*;
use gpu_doctor_model::{Evidence, Severity};

const GIB: u64 = 1 << 30;

fn finding(cause: Cause, values: &[(&str, f64)]) -> Finding {
    let mut e = Evidence {
        source: "stderr".into(),
        text: "…".into(),
        ..Evidence::default()
    };
    for (k, v) in values {
        e.values.insert((*k).into(), *v);
    }
    Finding::new("GD500", cause, Severity::Error, "test").with_evidence(e)
}

fn gpu(index: u32, total_gib: u64, free_gib: u64) -> GpuView {
    GpuView {
        index: GpuIndex(index),
        uuid: Some(format!("GPU-{index}")),
        total_bytes: Some(total_gib * GIB),
        free_bytes: Some(free_gib * GIB),
        unhealthy: false,
    }
}

fn state(batch: Option<u64>, gpus: &[u32]) -> RunState {
    RunState {
        attempts: 1,
        batch,
        gpus: gpus.iter().map(|g| GpuIndex(*g)).collect(),
        ..RunState::default()
    }
}

fn opts(batch_control: bool) -> PolicyOptions {
    PolicyOptions {
        batch_control,
        ..PolicyOptions::default()
    }
}

fn frag_stats() -> AllocatorFacts {
    // The numbers of testdata/h200/err-frag-oom-real.txt.
    AllocatorFacts {
        reserved_bytes: 138_512_695_296,
        allocated_bytes: 81_159_782_400,
        requested_bytes: Some(12 * GIB),
        ..AllocatorFacts::default()
    }
}

struct Case {
    name: &'static str,
    exit: Exit,
    findings: Vec<Finding>,
    allocator: Vec<AllocatorFacts>,
    events: Vec<GpuEvent>,
    gpus: Vec<GpuView>,
    state: RunState,
    opts: PolicyOptions,
    cause: Option<Cause>,
    /// The decision's action name and, for retries, the change.
    action: &'static str,
    change: Option<Change>,
}

fn base(name: &'static str) -> Case {
    Case {
        name,
        exit: Exit::Code(1),
        findings: Vec::new(),
        allocator: Vec::new(),
        events: Vec::new(),
        gpus: Vec::new(),
        state: state(Some(64), &[0]),
        opts: opts(true),
        cause: None,
        action: "stop",
        change: None,
    }
}

fn cases() -> Vec<Case> {
    let oom = |cause| finding(cause, &[("requested_bytes", (2 * GIB) as f64)]);
    vec![
        Case {
            exit: Exit::Code(0),
            state: state(Some(64), &[0]),
            action: "none",
            ..base("success")
        },
        Case {
            findings: vec![oom(Cause::OomFragmentation)],
            cause: Some(Cause::OomFragmentation),
            action: "expandable_segments",
            change: Some(Change::ExpandableSegments),
            ..base("fragmentation from the text")
        },
        Case {
            findings: vec![oom(Cause::OomCapacity)],
            allocator: vec![frag_stats()],
            cause: Some(Cause::OomFragmentation),
            action: "expandable_segments",
            change: Some(Change::ExpandableSegments),
            ..base("capacity in the text, fragmentation in the hook's numbers")
        },
        Case {
            findings: vec![oom(Cause::OomFragmentation)],
            state: RunState {
                expandable_segments: true,
                ..state(Some(64), &[0])
            },
            cause: Some(Cause::OomFragmentation),
            action: "lower_batch",
            change: Some(Change::LowerBatch { from: 64, to: 32 }),
            ..base("fragmentation with expandable segments already on lowers the batch")
        },
        Case {
            findings: vec![oom(Cause::OomCapacity)],
            cause: Some(Cause::OomCapacity),
            action: "lower_batch",
            change: Some(Change::LowerBatch { from: 64, to: 32 }),
            ..base("capacity lowers the batch")
        },
        Case {
            findings: vec![oom(Cause::OomCapacity)],
            gpus: vec![gpu(0, 140, 139)],
            cause: Some(Cause::OomCapacity),
            action: "lower_batch",
            change: Some(Change::LowerBatch { from: 64, to: 32 }),
            ..base("capacity on a GPU that is empty afterwards")
        },
        Case {
            findings: vec![oom(Cause::OomCapacity)],
            state: state(Some(1), &[0]),
            cause: Some(Cause::OomCapacity),
            ..base("capacity at the smallest batch stops")
        },
        Case {
            findings: vec![oom(Cause::OomCapacity)],
            opts: opts(false),
            cause: Some(Cause::OomCapacity),
            ..base("capacity without batch control stops")
        },
        Case {
            findings: vec![oom(Cause::OomCapacity)],
            gpus: vec![gpu(0, 140, 10), gpu(1, 140, 139)],
            cause: Some(Cause::OomOtherProcess),
            action: "move_gpu",
            change: Some(Change::MoveGpus {
                to: vec![GpuIndex(1)],
                exclude: None,
            }),
            ..base("memory still held after the job exited: another process, move")
        },
        Case {
            // err-frag.txt: 67.64 GiB held + 80 GiB asked does not fit 139.8 GiB, whoever
            // else is on the GPU.
            findings: vec![finding(
                Cause::OomCapacity,
                &[
                    ("requested_bytes", (80 * GIB) as f64),
                    ("this_process_bytes", 67.64 * GIB as f64),
                ],
            )],
            gpus: vec![gpu(0, 140, 10), gpu(1, 140, 139)],
            cause: Some(Cause::OomCapacity),
            action: "lower_batch",
            change: Some(Change::LowerBatch { from: 64, to: 32 }),
            ..base("a job too big for the empty GPU is capacity, even with memory held")
        },
        Case {
            findings: vec![oom(Cause::OomOtherProcess)],
            gpus: vec![gpu(0, 140, 10), gpu(1, 140, 100)],
            cause: Some(Cause::OomOtherProcess),
            action: "move_gpu",
            change: Some(Change::MoveGpus {
                to: vec![GpuIndex(1)],
                exclude: None,
            }),
            ..base("other process: move to the GPU with the most free memory")
        },
        Case {
            findings: vec![oom(Cause::OomOtherProcess)],
            gpus: vec![gpu(0, 140, 10)],
            cause: Some(Cause::OomOtherProcess),
            action: "wait",
            ..base("other process on the only GPU: wait")
        },
        Case {
            findings: vec![finding(
                Cause::OomOtherProcess,
                &[
                    ("requested_bytes", (50 * GIB) as f64),
                    ("this_process_bytes", (40 * GIB) as f64),
                ],
            )],
            gpus: vec![gpu(0, 140, 10), gpu(1, 140, 60)],
            cause: Some(Cause::OomOtherProcess),
            action: "wait",
            ..base("other process: a GPU with too little free is no move")
        },
        Case {
            findings: vec![oom(Cause::OomOtherProcess)],
            cause: Some(Cause::OomOtherProcess),
            action: "retry",
            change: Some(Change::Same),
            ..base("other process without GPU state: plain retry after backoff")
        },
        Case {
            findings: vec![finding(Cause::IllegalAccess, &[])],
            events: vec![GpuEvent {
                timestamp_ms: 1,
                gpu: GpuIndex(0),
                kind: GpuEventKind::Xid {
                    xid: 79,
                    detail: None,
                },
            }],
            gpus: vec![gpu(0, 140, 140), gpu(1, 140, 140)],
            cause: Some(Cause::HwXid),
            action: "exclude_gpu",
            change: Some(Change::MoveGpus {
                to: vec![GpuIndex(1)],
                exclude: Some(GpuIndex(0)),
            }),
            ..base("Xid 79 during the run beats the illegal address the job printed")
        },
        Case {
            findings: vec![
                finding(Cause::IllegalAccess, &[]),
                finding(Cause::HwXid, &[("xid", 48.0)]),
            ],
            gpus: vec![gpu(0, 140, 140), gpu(1, 140, 140), gpu(2, 140, 140)],
            state: state(Some(64), &[0, 1]),
            cause: Some(Cause::HwXid),
            action: "exclude_gpu",
            change: Some(Change::MoveGpus {
                to: vec![GpuIndex(2), GpuIndex(1)],
                exclude: Some(GpuIndex(0)),
            }),
            ..base("a two-GPU job swaps only the faulty GPU")
        },
        Case {
            findings: vec![finding(Cause::HwXid, &[("xid", 13.0)])],
            gpus: vec![gpu(0, 140, 140), gpu(1, 140, 140)],
            cause: Some(Cause::HwXid),
            ..base("Xid 13 is the application's fault: no move")
        },
        Case {
            findings: vec![finding(Cause::HwXid, &[("xid", 94.0)])],
            gpus: vec![gpu(0, 140, 140)],
            cause: Some(Cause::HwXid),
            ..base("hardware fault with no spare GPU stops")
        },
        Case {
            events: vec![GpuEvent {
                timestamp_ms: 1,
                gpu: GpuIndex(1),
                kind: GpuEventKind::EccUncorrected,
            }],
            gpus: vec![gpu(0, 140, 140), gpu(1, 140, 140)],
            cause: Some(Cause::Other),
            ..base("an ECC error on a GPU the job does not use is not its cause")
        },
        Case {
            findings: vec![finding(Cause::IllegalAccess, &[])],
            cause: Some(Cause::IllegalAccess),
            ..base("sticky error without --debug-rerun stops")
        },
        Case {
            findings: vec![finding(Cause::DeviceAssert, &[])],
            opts: PolicyOptions {
                debug_rerun: true,
                ..opts(true)
            },
            cause: Some(Cause::DeviceAssert),
            action: "debug_rerun",
            change: Some(Change::DebugRerun),
            ..base("sticky error with --debug-rerun reruns once")
        },
        Case {
            findings: vec![finding(Cause::DeviceAssert, &[])],
            opts: PolicyOptions {
                debug_rerun: true,
                ..opts(true)
            },
            state: RunState {
                debug_rerun_done: true,
                this_was_debug_rerun: true,
                ..state(Some(64), &[0])
            },
            cause: Some(Cause::DeviceAssert),
            ..base("after the debug rerun: stop and report")
        },
        Case {
            findings: vec![finding(Cause::EnvDriverTooOld, &[])],
            cause: Some(Cause::EnvDriverTooOld),
            ..base("environment errors stop")
        },
        Case {
            findings: vec![finding(Cause::OomLeak, &[])],
            cause: Some(Cause::OomLeak),
            ..base("a leak stops")
        },
        Case {
            findings: vec![finding(Cause::NcclError, &[])],
            cause: Some(Cause::NcclError),
            ..base("NCCL errors stop")
        },
        Case {
            exit: Exit::Code(3),
            cause: Some(Cause::Other),
            ..base("an unknown failure is not retried blind")
        },
        Case {
            exit: Exit::Signal(15),
            findings: vec![oom(Cause::OomCapacity)],
            state: RunState {
                interrupted: true,
                ..state(Some(64), &[0])
            },
            cause: Some(Cause::OomCapacity),
            ..base("the user's signal stops the run")
        },
        Case {
            findings: vec![oom(Cause::OomCapacity)],
            state: RunState {
                attempts: 5,
                ..state(Some(64), &[0])
            },
            cause: Some(Cause::OomCapacity),
            ..base("max attempts reached")
        },
    ]
}

#[test]
fn policy_table() {
    let mut failures = Vec::new();
    for case in cases() {
        let facts = AttemptFacts {
            exit: case.exit,
            findings: &case.findings,
            allocator: &case.allocator,
            events: &case.events,
            gpus: &case.gpus,
        };
        let class = classify(&facts, &case.state);
        let decision = decide(&facts, &class, &case.state, &case.opts);
        let change = match &decision {
            Decision::Retry { change, .. } => Some(change.clone()),
            _ => None,
        };
        if class.cause != case.cause || decision.action() != case.action || change != case.change {
            failures.push(format!(
                "{}: got cause {:?}, {decision:?}; want cause {:?}, {} {:?}",
                case.name, class.cause, case.cause, case.action, case.change
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn reasons_name_the_numbers() {
    let findings = vec![finding(Cause::OomOtherProcess, &[])];
    let gpus = vec![gpu(0, 140, 10), gpu(1, 140, 100)];
    let facts = AttemptFacts {
        exit: Exit::Code(1),
        findings: &findings,
        allocator: &[],
        events: &[],
        gpus: &gpus,
    };
    let st = state(None, &[0]);
    let class = classify(&facts, &st);
    let Decision::Retry { reason, .. } = decide(&facts, &class, &st, &opts(false)) else {
        panic!("expected a move");
    };
    assert_eq!(
        reason,
        "another process holds the memory of GPU 0; GPU 1 has 100.0 GiB free"
    );

    let only = vec![gpu(0, 140, 10)];
    let facts = AttemptFacts {
        gpus: &only,
        ..facts
    };
    let Decision::Wait {
        need_free_bytes,
        gpu: g,
        ..
    } = decide(&facts, &class, &st, &opts(false))
    else {
        panic!("expected a wait");
    };
    assert_eq!(g, GpuIndex(0));
    assert_eq!(need_free_bytes, (140.0 * GIB as f64 * 0.9) as u64);
}

#[test]
fn exit_codes_follow_the_shell() {
    assert_eq!(Exit::Signal(9).code(), 137);
    assert_eq!(Exit::Code(3).code(), 3);
    assert!(!Exit::Signal(0).success());
}
