//! Shared GPUs: MIG instances in `gpu-doctor check`, and the documentation of the memory
//! budget findings (GD590–GD595) for `gpu-doctor rule CODE`.
//!
//! `gpuN.mig_instances` (pure, over the GPU facts): a GPU in MIG mode with no instance
//! (GD595: CUDA sees no device there), and a MIG instance nearly full (GD594: a job in it runs
//! out of memory however free the rest of the GPU is). `gpus.mps`: an MPS server whose
//! clients have no memory limit (GD596). GD590–GD593 are produced by
//! `gpu-doctor run --memory-limit` and `gpu-doctor guard` (crate `gpu-doctor-guard`); only
//! their documentation is here, so `gpu-doctor rule GD591` explains them.

use crate::env::Checklist;
use gpu_doctor_env::{EnvFacts, GpuFacts, ProbeStatus};
use gpu_doctor_model::units::format_bytes;
use gpu_doctor_model::{Cause, Evidence, Finding, Severity};

/// A MIG instance at least this full (used over total) is a warning.
pub const MIG_FULL_FRACTION: f64 = 0.95;

crate::rule_docs! {
    GD590 = ("GD590", "job-over-memory-budget", OomCapacity, "`run --memory-limit`: sums the job's own NVML per-process memory on each GPU and compares it with its budget.", "A job over its budget takes memory its neighbours on a shared GPU were promised; they fail with out-of-memory errors that are not theirs.", "warn[GD590] oom_capacity [GPU 0]: the job holds 22.0 GiB on GPU 0, over its budget of 20.0 GiB", "Lower the batch size or sequence length, or run it with a larger `--memory-limit` if the other users can spare it. See docs/guard.md."),
    GD591 = ("GD591", "job-stopped-for-memory-budget", OomCapacity, "`run --memory-limit --enforce`: stops a job over its budget (SIGTERM, grace, SIGKILL) and says what it used against what it was allowed.", "The job was ended so that the other jobs on the GPU keep the memory they were promised.", "error[GD591] oom_capacity [GPU 0]: the job was stopped: it used 22.0 GiB on GPU 0 against a budget of 20.0 GiB", "Make the job fit its budget (smaller batch, activation checkpointing) or give it a larger one."),
    GD592 = ("GD592", "process-over-user-budget", OomOtherProcess, "`guard`: adds up each user's processes on each GPU and compares the total with the budget file's rule for that user or group.", "On a shared workstation, the user over budget is the neighbour whose memory makes other users' jobs fail.", "warn[GD592] oom_other_process [GPU 0]: pid 4242 of alice on GPU 0 is over budget: it holds 18.0 GiB and alice holds 24.0 GiB in all there, against a budget of 20.0 GiB (user alice, line 2)", "The user lowers the job's memory, or runs it under `gpu-doctor run --memory-limit`, which tells PyTorch and JAX the budget."),
    GD593 = ("GD593", "process-stopped-for-user-budget", OomOtherProcess, "`guard` with `action = \"stop\"`: stops the largest processes of a user over budget until the rest fits (SIGTERM, grace, SIGKILL; never root's processes, never another user's unless the guard is root).", "The process was ended to give the other users the memory the budget file promises them.", "error[GD593] oom_other_process [GPU 0]: stopped pid 4242 of alice on GPU 0: alice used 24.0 GiB there against a budget of 20.0 GiB; this process held 18.0 GiB", "Run the job within the budget (`gpu-doctor run --memory-limit 20GiB --enforce -- ...`), or ask the administrator for a larger one."),
    GD594 = ("GD594", "mig-instance-full", OomCapacity, "Compares each MIG instance's used memory with its size (warns at 95%).", "A MIG instance has its own memory: a job in a full instance runs out of memory however free the rest of the GPU is.", "gpu0.mig_instances: MIG instance 2 (3g.71gb) on GPU 0 is 97% full: 68.9 GiB of 71.0 GiB", "Move the job to a larger profile or a free instance (`CUDA_VISIBLE_DEVICES=MIG-...`), or lower its memory."),
    GD596 = ("GD596", "mps-without-memory-limit", OomOtherProcess, "Finds a running MPS control daemon or server (in /proc) whose environment sets no CUDA_MPS_PINNED_DEVICE_MEM_LIMIT.", "MPS clients share one GPU context's memory pool with no per-client limit: one client can take the memory of all the others.", "gpus.mps: an MPS server shares the GPUs with no memory limit", "Start the daemon with `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=40G` (per device), or run each job under `gpu-doctor run --memory-limit SIZE`, which sets it for the job."),
    GD595 = ("GD595", "mig-without-instances", EnvVisibleDevices, "Looks for a GPU in MIG mode with no MIG instance.", "With MIG on and no instance, CUDA sees no device on that GPU: jobs fail with `no CUDA-capable device`.", "gpu0.mig_instances: MIG is on for GPU 0 but it has no MIG instance", "Create instances (`sudo nvidia-smi mig -i 0 -cgi 3g.71gb -C`) or turn MIG off (`sudo nvidia-smi -i 0 -mig 0`, then reset the GPU)."),
}

/// `gpus.mps`, while an MPS control daemon or server runs: whether its clients have a
/// memory limit (GD596 when they have none: any one client can take every other's memory).
pub fn mps_check(facts: &EnvFacts, list: &mut Checklist) {
    const ID: &str = "gpus.mps";
    // No line at all without MPS, as `gpuN.mig_instances` has none without MIG: most
    // machines never run it, and a checklist is read for what is there.
    let Some(mps) = facts.mps.as_ref().filter(|m| m.running()) else {
        return;
    };
    if !mps.environ_readable {
        list.pass(
            ID,
            format!("{} (run check as root to read its limits)", mps.summary()),
        );
        return;
    }
    if mps.pinned_device_mem_limit.is_some() {
        list.pass(ID, mps.summary());
        return;
    }
    let f = Finding::new(
        "GD596",
        Cause::OomOtherProcess,
        Severity::Warn,
        "an MPS server shares the GPUs with no memory limit: any one client can take the memory of all the others",
    )
    .with_evidence(Evidence {
        source: "/proc".into(),
        text: mps.summary(),
        ..Evidence::default()
    })
    .with_remedy(
        "Start the MPS control daemon with a per-client memory limit, or give each job a budget",
        Some("export CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=40G; nvidia-cuda-mps-control -d".into()),
        Some("or per job: gpu-doctor run --memory-limit 40GiB --enforce -- ... (sets the MPS limit too)".into()),
    );
    list.problem(ID, f);
}

/// `gpuN.mig_instances` for every GPU in MIG mode (GPUs with MIG off get no line: their
/// `gpuN.mig` says so).
pub fn mig_checks(gpus: &GpuFacts, list: &mut Checklist) {
    if let ProbeStatus::Unavailable { .. } = &gpus.status {
        return;
    }
    let Some(sample) = &gpus.sample else {
        return;
    };
    for d in &sample.devices {
        if d.mig_enabled.get() != Some(true) {
            continue;
        }
        let gpu = d.index;
        let id = format!("gpu{gpu}.mig_instances");
        if d.mig_instances.is_empty() {
            let f = Finding::new(
                "GD595",
                Cause::EnvVisibleDevices,
                Severity::Warn,
                format!("MIG is on for GPU {gpu} but it has no MIG instance: CUDA sees no device there"),
            )
            .on_gpu(gpu)
            .with_evidence(Evidence {
                source: "nvml".into(),
                text: format!("GPU {gpu}: MIG mode on, 0 MIG devices"),
                ..Evidence::default()
            })
            .with_remedy(
                "Create GPU and compute instances, or turn MIG off",
                Some(format!("sudo nvidia-smi mig -i {gpu} -lgip && sudo nvidia-smi mig -i {gpu} -cgi <profile> -C")),
                Some(format!("or: sudo nvidia-smi -i {gpu} -mig 0, then reset the GPU")),
            );
            list.problem(id, f);
            continue;
        }
        let processes_in = |gi: u32| {
            sample
                .processes
                .iter()
                .filter(|p| p.gpu == gpu && p.mig_instance == Some(gi))
                .count()
        };
        let full: Vec<_> = d
            .mig_instances
            .iter()
            .filter_map(|m| {
                let (used, total) = (m.memory_used_bytes.get()?, m.memory_total_bytes.get()?);
                (total > 0 && used as f64 >= MIG_FULL_FRACTION * total as f64)
                    .then_some((m, used, total))
            })
            .collect();
        if let Some(&(m, used, total)) = full
            .iter()
            .max_by(|a, b| (a.1 as f64 / a.2 as f64).total_cmp(&(b.1 as f64 / b.2 as f64)))
        {
            let mut f = Finding::new(
                "GD594",
                Cause::OomCapacity,
                Severity::Warn,
                format!(
                    "MIG instance {} ({}) on GPU {gpu} is {:.0}% full: {} of {}",
                    m.gpu_instance_id,
                    m.profile,
                    100.0 * used as f64 / total as f64,
                    format_bytes(used),
                    format_bytes(total)
                ),
            )
            .on_gpu(gpu);
            for &(m, used, total) in &full {
                f = f.with_evidence(Evidence {
                    source: "nvml".into(),
                    text: format!(
                        "{} (GPU instance {}, compute instance {}): {} of {} used, {} process(es)",
                        m.uuid,
                        m.gpu_instance_id,
                        m.compute_instance_id,
                        format_bytes(used),
                        format_bytes(total),
                        processes_in(m.gpu_instance_id)
                    ),
                    values: [
                        ("used_bytes".to_owned(), used as f64),
                        ("total_bytes".to_owned(), total as f64),
                    ]
                    .into_iter()
                    .collect(),
                    ..Evidence::default()
                });
            }
            let f = f.with_remedy(
                "Move the job to a larger profile or a free MIG instance, or lower its memory",
                Some(format!("CUDA_VISIBLE_DEVICES={} <job>", m.uuid)),
                Some("a MIG instance's memory is its own: free memory elsewhere on the GPU does not help".into()),
            );
            list.problem(id, f);
            continue;
        }
        let listed: Vec<String> = d
            .mig_instances
            .iter()
            .map(|m| {
                let memory = match (m.memory_used_bytes.get(), m.memory_total_bytes.get()) {
                    (Some(u), Some(t)) => format!("{}/{}", format_bytes(u), format_bytes(t)),
                    _ => "memory n/a".into(),
                };
                format!(
                    "{} (GI {}, {memory}, {} process(es))",
                    m.profile,
                    m.gpu_instance_id,
                    processes_in(m.gpu_instance_id)
                )
            })
            .collect();
        list.pass(
            id,
            format!(
                "{} MIG instance(s): {}",
                d.mig_instances.len(),
                listed.join("; ")
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::CheckStatus;
    use gpu_doctor_model::{
        DeviceSample, GpuIndex, GpuUuid, MigInstance, Pid, ProcessSample, Reading, Sample,
    };

    const GIB: u64 = 1 << 30;

    fn instance(gi: u32, profile: &str, used: u64, total: u64) -> MigInstance {
        MigInstance {
            gpu_instance_id: gi,
            compute_instance_id: 0,
            profile: profile.into(),
            uuid: GpuUuid(format!("MIG-{gi}")),
            memory_total_bytes: Reading::Value(total * GIB),
            memory_used_bytes: Reading::Value(used * GIB),
        }
    }

    fn facts(mig: Option<bool>, instances: Vec<MigInstance>) -> GpuFacts {
        GpuFacts {
            status: ProbeStatus::Ok,
            inventory: None,
            sample: Some(Sample {
                devices: vec![DeviceSample {
                    index: GpuIndex(0),
                    mig_enabled: mig.into(),
                    mig_instances: instances,
                    ..DeviceSample::default()
                }],
                processes: vec![ProcessSample {
                    gpu: GpuIndex(0),
                    pid: Pid(8100),
                    mig_instance: Some(2),
                    used_memory_bytes: Reading::Value(20 * GIB),
                    ..ProcessSample::default()
                }],
                ..Sample::default()
            }),
        }
    }

    fn run(f: &GpuFacts) -> Vec<crate::env::CheckResult> {
        let mut list = Checklist::default();
        mig_checks(f, &mut list);
        list.into_report().checks
    }

    #[test]
    fn instances_are_listed_when_healthy() {
        let checks = run(&facts(
            Some(true),
            vec![
                instance(2, "3g.71gb", 20, 71),
                instance(9, "1g.18gb", 0, 17),
            ],
        ));
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].id, "gpu0.mig_instances");
        assert_eq!(checks[0].status, CheckStatus::Pass);
        assert_eq!(
            checks[0].message,
            "2 MIG instance(s): 3g.71gb (GI 2, 20.0 GiB/71.0 GiB, 1 process(es)); 1g.18gb (GI 9, 0 B/17.0 GiB, 0 process(es))"
        );
    }

    #[test]
    fn a_full_instance_warns() {
        let mut list = Checklist::default();
        mig_checks(
            &facts(
                Some(true),
                vec![
                    instance(2, "3g.71gb", 69, 71),
                    instance(3, "2g.35gb", 1, 35),
                ],
            ),
            &mut list,
        );
        let report = list.into_report();
        assert_eq!(report.checks[0].status, CheckStatus::Warn);
        let f = &report.findings[0];
        assert_eq!(f.code.0, "GD594");
        assert_eq!(
            f.message,
            "MIG instance 2 (3g.71gb) on GPU 0 is 97% full: 69.0 GiB of 71.0 GiB"
        );
        assert_eq!(f.evidence.len(), 1);
        assert_eq!(
            report.checks[0].fix.as_deref(),
            Some("CUDA_VISIBLE_DEVICES=MIG-2 <job>")
        );
    }

    #[test]
    fn mig_on_without_instances_warns_and_mig_off_is_silent() {
        let mut list = Checklist::default();
        mig_checks(&facts(Some(true), vec![]), &mut list);
        let report = list.into_report();
        assert_eq!(report.findings[0].code.0, "GD595");
        assert_eq!(report.findings[0].cause, Cause::EnvVisibleDevices);
        assert!(run(&facts(Some(false), vec![])).is_empty());
        assert!(run(&facts(None, vec![])).is_empty());
    }

    #[test]
    fn mps_without_a_limit_warns() {
        use gpu_doctor_env::mps::MpsStatus;
        let check = |mps: Option<MpsStatus>| {
            let facts = EnvFacts {
                mps,
                ..EnvFacts::default()
            };
            let mut list = Checklist::default();
            mps_check(&facts, &mut list);
            list.into_report()
        };
        assert!(check(None).checks.is_empty());
        let mut mps = MpsStatus {
            control_pids: vec![812],
            environ_readable: true,
            ..MpsStatus::default()
        };
        let open = check(Some(mps.clone()));
        assert_eq!(open.checks[0].status, CheckStatus::Warn);
        assert_eq!(open.findings[0].code.0, "GD596");
        mps.pinned_device_mem_limit = Some("0=40G".into());
        let limited = check(Some(mps.clone()));
        assert_eq!(limited.checks[0].status, CheckStatus::Pass);
        assert!(
            limited.checks[0].message.contains("memory limit 0=40G"),
            "{}",
            limited.checks[0].message
        );
        mps.environ_readable = false;
        assert!(
            check(Some(mps)).checks[0]
                .message
                .ends_with("(run check as root to read its limits)")
        );
    }

    #[test]
    fn docs_are_complete_and_in_range() {
        for d in RULES {
            let n: u32 = d.code[2..].parse().unwrap();
            assert!((590..600).contains(&n), "{}", d.code);
            assert!(d.body.contains("## How to fix"));
        }
        assert_eq!(RULES.len(), 7);
    }
}
