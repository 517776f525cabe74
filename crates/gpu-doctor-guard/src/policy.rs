//! The guard's decision, as a pure function: given the budget file, one sample of the GPUs,
//! who owns each process and who is asking, which processes are over budget and what to do.
//!
//! How a budget is counted: per user and per GPU. All of one user's processes on one GPU
//! are added up and compared with the budget of the first rule that names that user (or,
//! when no rule names the user, the first rule naming one of the process's groups) and
//! covers that GPU. A group budget is each member's own budget, not a pool the members
//! share. A `fraction` is of the GPU's memory, or of the MIG instance's when the process runs
//! in one. When a user is over, their largest processes on that GPU are picked until what is
//! left fits: the fewest processes that bring the user back within budget.
//!
//! What the guard never does, whatever the file says:
//! - touch a process of root (real or effective uid 0);
//! - touch a process no rule names (no budget, unknown owner, no memory figure);
//! - stop another user's process when the guard itself is not root: the caller's effective
//!   uid is an input, and a stop it may not carry out becomes a warning that says why. So a
//!   budget file naming another user's processes cannot make a non-root user stop them.

use crate::config::{Action, Budget, Config, Subject};
use crate::proc::{Accounts, ProcOwner};
use gpu_doctor_model::{GpuIndex, Pid, Sample};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// One decision about one process.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub pid: Pid,
    pub gpu: GpuIndex,
    /// The MIG GPU instance it runs in, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig_instance: Option<u32>,
    pub uid: u32,
    pub user: String,
    /// `user alice` or `group students`: the rule that applied.
    pub rule: String,
    /// Line of that rule's `[[budget]]` in the budget file.
    pub rule_line: usize,
    /// This process's memory on this GPU.
    pub process_bytes: u64,
    /// All of the user's processes on this GPU (what the budget is compared with).
    pub user_bytes: u64,
    pub budget_bytes: u64,
    /// What will be done.
    pub action: Action,
    /// Why a `stop` in the file became a warning, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    #[serde(rename = "grace_ms", serialize_with = "millis")]
    pub grace: Duration,
    /// With the pid, names the process for its whole life (see [`crate::enforce`]).
    pub start_time: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The rule that applies to a process on `gpu`: the first user rule naming its owner, else
/// the first group rule naming one of its groups.
fn rule_for<'a>(
    config: &'a Config,
    accounts: &Accounts,
    owner: &ProcOwner,
    gpu: u32,
) -> Option<(usize, &'a Budget)> {
    let applies = |b: &Budget| b.covers_gpu(gpu);
    config
        .budgets
        .iter()
        .enumerate()
        .find(|(_, b)| {
            applies(b)
                && matches!(&b.subject, Subject::User(name) if accounts.uid(name) == Some(owner.uid))
        })
        .or_else(|| {
            config.budgets.iter().enumerate().find(|(_, b)| {
                applies(b)
                    && matches!(&b.subject, Subject::Group(name)
                        if accounts.gid(name).is_some_and(|gid| owner.in_group(gid)))
            })
        })
}

/// What the guard does now. `owners` maps a pid to what `/proc` says about it (a pid
/// missing there is left alone); `guard_euid` is the effective uid the guard runs as.
pub fn evaluate(
    config: &Config,
    sample: &Sample,
    owners: &BTreeMap<u32, ProcOwner>,
    accounts: &Accounts,
    guard_euid: u32,
) -> Vec<Verdict> {
    // (uid, gpu, rule index) → the processes counted together, with their bytes.
    struct Entry<'a> {
        pid: u32,
        bytes: u64,
        mig_instance: Option<u32>,
        owner: &'a ProcOwner,
        command: Option<&'a str>,
    }
    let mut groups: BTreeMap<(u32, u32, usize), Vec<Entry<'_>>> = BTreeMap::new();
    for p in &sample.processes {
        let (Some(owner), Some(bytes)) = (owners.get(&p.pid.0), p.used_memory_bytes.get()) else {
            continue;
        };
        if owner.is_root() {
            continue;
        }
        let Some((index, _)) = rule_for(config, accounts, owner, p.gpu.0) else {
            continue;
        };
        groups
            .entry((owner.uid, p.gpu.0, index))
            .or_default()
            .push(Entry {
                pid: p.pid.0,
                bytes,
                mig_instance: p.mig_instance,
                owner,
                command: p.command.as_deref(),
            });
    }

    let mut verdicts = Vec::new();
    for ((uid, gpu, index), mut entries) in groups {
        let budget = &config.budgets[index];
        let device = sample.devices.iter().find(|d| d.index.0 == gpu);
        // A fraction is of the MIG instance when every counted process is in the same one.
        let instance = entries
            .first()
            .and_then(|e| e.mig_instance)
            .filter(|gi| entries.iter().all(|e| e.mig_instance == Some(*gi)));
        let total_memory = match (instance, device) {
            (Some(gi), Some(d)) => d
                .mig_instances
                .iter()
                .find(|m| m.gpu_instance_id == gi)
                .and_then(|m| m.memory_total_bytes.get()),
            (None, Some(d)) => d.memory_total_bytes.get(),
            (_, None) => None,
        };
        let Some(budget_bytes) = budget.limit.bytes(total_memory) else {
            continue;
        };
        let user_bytes: u64 = entries.iter().map(|e| e.bytes).sum();
        if user_bytes <= budget_bytes {
            continue;
        }
        entries.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.pid.cmp(&b.pid)));
        let mut remaining = user_bytes;
        for e in entries {
            if remaining <= budget_bytes {
                break;
            }
            remaining -= e.bytes;
            let mine = e.owner.uid == guard_euid && e.owner.euid == guard_euid;
            let (action, refused) = match budget.action {
                Action::Stop if guard_euid != 0 && !mine => (
                    Action::Warn,
                    Some(format!(
                        "not stopped: the guard runs as uid {guard_euid} and the process belongs \
                         to uid {}; only root may stop another user's process",
                        e.owner.uid
                    )),
                ),
                a => (a, None),
            };
            verdicts.push(Verdict {
                pid: Pid(e.pid),
                gpu: GpuIndex(gpu),
                mig_instance: e.mig_instance,
                uid,
                user: accounts.user_name(uid),
                rule: budget.subject.to_string(),
                rule_line: budget.line,
                process_bytes: e.bytes,
                user_bytes,
                budget_bytes,
                action,
                refused,
                grace: budget.grace,
                start_time: e.owner.start_time,
                command: e.command.map(str::to_owned),
            });
        }
    }
    verdicts.sort_by_key(|v| (v.gpu, v.pid));
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;
    use gpu_doctor_model::{DeviceSample, GpuUuid, MigInstance, ProcessSample, Reading};

    const GIB: u64 = 1 << 30;

    fn accounts() -> Accounts {
        Accounts {
            users: [("root", 0), ("alice", 1000), ("bob", 1001), ("carol", 1002)]
                .into_iter()
                .map(|(n, u)| (n.to_owned(), u))
                .collect(),
            groups: [("students", 2000), ("staff", 2001)]
                .into_iter()
                .map(|(n, u)| (n.to_owned(), u))
                .collect(),
        }
    }

    fn owner(uid: u32, groups: &[u32]) -> ProcOwner {
        ProcOwner {
            uid,
            euid: uid,
            gid: uid,
            groups: groups.to_vec(),
            start_time: 1000 + u64::from(uid),
            state: 'S',
            ..ProcOwner::default()
        }
    }

    fn sample(procs: &[(u32, u32, u64)]) -> Sample {
        Sample {
            timestamp_ms: 0,
            devices: (0..2)
                .map(|i| DeviceSample {
                    index: GpuIndex(i),
                    memory_total_bytes: Reading::Value(100 * GIB),
                    ..DeviceSample::default()
                })
                .collect(),
            processes: procs
                .iter()
                .map(|&(pid, gpu, gib)| ProcessSample {
                    gpu: GpuIndex(gpu),
                    pid: Pid(pid),
                    used_memory_bytes: Reading::Value(gib * GIB),
                    ..ProcessSample::default()
                })
                .collect(),
        }
    }

    fn config(text: &str) -> Config {
        parse(text, "t.toml").unwrap()
    }

    fn picks(v: &[Verdict]) -> Vec<(u32, u32, Action)> {
        v.iter().map(|v| (v.pid.0, v.gpu.0, v.action)).collect()
    }

    #[test]
    fn over_budget_user_gets_the_fewest_largest_processes_picked() {
        let c = config("[[budget]]\nuser = \"alice\"\nlimit = \"40GiB\"\naction = \"stop\"\n");
        let owners = BTreeMap::from([
            (1, owner(1000, &[])),
            (2, owner(1000, &[])),
            (3, owner(1000, &[])),
            (4, owner(1001, &[])),
        ]);
        // alice: 30 + 20 + 5 = 55 GiB on GPU 0; dropping the 30 GiB one brings her to 25.
        let v = evaluate(
            &c,
            &sample(&[(1, 0, 30), (2, 0, 20), (3, 0, 5), (4, 0, 90)]),
            &owners,
            &accounts(),
            0,
        );
        assert_eq!(picks(&v), vec![(1, 0, Action::Stop)]);
        assert_eq!(
            (v[0].user_bytes, v[0].budget_bytes, v[0].process_bytes),
            (55 * GIB, 40 * GIB, 30 * GIB)
        );
        assert_eq!(v[0].user, "alice");
        assert_eq!(v[0].rule, "user alice");
        assert_eq!(v[0].start_time, 2000);
        // Within budget: nothing.
        assert!(
            evaluate(
                &c,
                &sample(&[(1, 0, 30), (3, 0, 5)]),
                &owners,
                &accounts(),
                0
            )
            .is_empty()
        );
    }

    #[test]
    fn budgets_are_per_gpu_and_respect_the_gpu_list() {
        let c = config("[[budget]]\nuser = \"alice\"\ngpu = [1]\nlimit = \"10GiB\"\n");
        let owners = BTreeMap::from([(1, owner(1000, &[])), (2, owner(1000, &[]))]);
        let v = evaluate(
            &c,
            &sample(&[(1, 0, 50), (2, 1, 11)]),
            &owners,
            &accounts(),
            0,
        );
        assert_eq!(picks(&v), vec![(2, 1, Action::Warn)]);
    }

    #[test]
    fn never_root_never_unnamed_never_unknown() {
        let c = config("[[budget]]\ngroup = \"students\"\nlimit = \"1GiB\"\naction = \"stop\"\n");
        let mut setuid_root = owner(1000, &[2000]);
        setuid_root.euid = 0;
        let owners = BTreeMap::from([
            (1, owner(0, &[2000])),    // root, even in the group
            (2, setuid_root),          // effective root
            (3, owner(1001, &[])),     // no rule names bob
            (5, owner(1002, &[2000])), // carol, a student
        ]);
        // pid 4 has no owner at all (another pid namespace).
        let v = evaluate(
            &c,
            &sample(&[(1, 0, 9), (2, 0, 9), (3, 0, 9), (4, 0, 9), (5, 0, 9)]),
            &owners,
            &accounts(),
            0,
        );
        assert_eq!(picks(&v), vec![(5, 0, Action::Stop)]);
        assert_eq!(v[0].rule, "group students");
    }

    #[test]
    fn a_user_rule_wins_over_a_group_rule() {
        let c = config(
            "[[budget]]\ngroup = \"students\"\nlimit = \"1GiB\"\n\n[[budget]]\nuser = \"carol\"\nlimit = \"50GiB\"\n",
        );
        let owners = BTreeMap::from([(5, owner(1002, &[2000]))]);
        assert!(evaluate(&c, &sample(&[(5, 0, 9)]), &owners, &accounts(), 0).is_empty());
    }

    #[test]
    fn a_non_root_guard_cannot_stop_another_users_process() {
        // The file is bob's, and names alice: bob's guard only warns about her process.
        let c = config(
            "[[budget]]\nuser = \"alice\"\nlimit = \"1GiB\"\naction = \"stop\"\n\n[[budget]]\nuser = \"bob\"\nlimit = \"1GiB\"\naction = \"stop\"\n",
        );
        let owners = BTreeMap::from([(1, owner(1000, &[])), (2, owner(1001, &[]))]);
        let v = evaluate(
            &c,
            &sample(&[(1, 0, 9), (2, 0, 9)]),
            &owners,
            &accounts(),
            1001,
        );
        assert_eq!(picks(&v), vec![(1, 0, Action::Warn), (2, 0, Action::Stop)]);
        assert!(
            v[0].refused
                .as_deref()
                .unwrap()
                .contains("only root may stop another user's process")
        );
        assert!(v[1].refused.is_none());
        // A process of bob's running setuid as alice is not his to stop either.
        let mut setuid = owner(1001, &[]);
        setuid.euid = 1000;
        let owners = BTreeMap::from([(2, setuid)]);
        let v = evaluate(&c, &sample(&[(2, 0, 9)]), &owners, &accounts(), 1001);
        assert_eq!(picks(&v), vec![(2, 0, Action::Warn)]);
    }

    #[test]
    fn fractions_are_of_the_gpu_or_the_mig_instance() {
        let c = config("[[budget]]\nuser = \"alice\"\nfraction = 0.5\n");
        let owners = BTreeMap::from([(1, owner(1000, &[]))]);
        let mut s = sample(&[(1, 0, 45)]);
        assert!(evaluate(&c, &s, &owners, &accounts(), 0).is_empty());
        s.processes[0].mig_instance = Some(2);
        s.devices[0].mig_instances = vec![MigInstance {
            gpu_instance_id: 2,
            compute_instance_id: 0,
            profile: "3g.71gb".into(),
            uuid: GpuUuid("MIG-x".into()),
            memory_total_bytes: Reading::Value(71 * GIB),
            memory_used_bytes: Reading::Value(45 * GIB),
        }];
        let v = evaluate(&c, &s, &owners, &accounts(), 0);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].budget_bytes, (71 * GIB) / 2);
        assert_eq!(v[0].mig_instance, Some(2));
        // An unknown total leaves a fraction undecidable: no verdict rather than a guess.
        s.devices[0].mig_instances[0].memory_total_bytes = Reading::Unsupported;
        assert!(evaluate(&c, &s, &owners, &accounts(), 0).is_empty());
    }

    #[test]
    fn a_process_without_a_memory_figure_is_left_alone() {
        let c = config("[[budget]]\nuser = \"alice\"\nlimit = \"1GiB\"\n");
        let owners = BTreeMap::from([(1, owner(1000, &[]))]);
        let mut s = sample(&[(1, 0, 9)]);
        s.processes[0].used_memory_bytes = Reading::Unsupported;
        assert!(evaluate(&c, &s, &owners, &accounts(), 0).is_empty());
    }
}
