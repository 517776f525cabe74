//! The budget of one job (`gpu-doctor run --memory-limit SIZE [--enforce]`): the job's own
//! memory, from NVML's per-process figures, against its budget on each GPU.
//!
//! The job is a process tree: its root (or, for `run`, every child of gpu-doctor itself),
//! everything below it, and everything in its process group, so a launcher that forks
//! workers or a `DataLoader`'s processes are counted. Memory is summed per GPU, as the
//! frameworks' own limits are per device. The first sample over budget on a GPU gives a
//! GD590 warning; with `enforce` the job's process groups are then stopped (SIGTERM, grace,
//! SIGKILL) and a GD591 finding says what it used against what it was allowed.
//!
//! [`job_usage`] and [`BudgetWatch::observe`] decide; only [`BudgetWatch::enforce_now`]
//! sends signals.

use crate::enforce::{StopOutcome, stop_group, stop_process};
use crate::findings;
use crate::proc::ProcRoot;
use gpu_doctor_model::{Finding, GpuIndex, Sample};
use gpu_doctor_source::{GpuSource, SourceError};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Whose memory counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobRoot {
    /// This process and its tree.
    Process(u32),
    /// Every process below this one, not itself: `run` watches its own children this way,
    /// so gpu-doctor's own (tiny) NVML context is never counted.
    ChildrenOf(u32),
}

/// The job's memory on each GPU, and which of its processes hold it.
pub fn job_usage(job: &BTreeSet<u32>, sample: &Sample) -> BTreeMap<GpuIndex, (u64, Vec<u32>)> {
    let mut usage: BTreeMap<GpuIndex, (u64, Vec<u32>)> = BTreeMap::new();
    for p in &sample.processes {
        if !job.contains(&p.pid.0) {
            continue;
        }
        if let Some(bytes) = p.used_memory_bytes.get() {
            let entry = usage.entry(p.gpu).or_default();
            entry.0 += bytes;
            entry.1.push(p.pid.0);
        }
    }
    usage
}

/// What one observation found.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Within budget everywhere (or no memory seen yet).
    Within,
    /// Over budget on `gpu`: the finding is new (GD590) unless it was given before.
    Over {
        gpu: GpuIndex,
        used: u64,
        pids: Vec<u32>,
        new_finding: Option<Finding>,
    },
}

/// Watches one job's memory against its budget.
#[derive(Debug)]
pub struct BudgetWatch {
    root: JobRoot,
    limit_bytes: u64,
    grace: Duration,
    proc: ProcRoot,
    /// (GPU, the lowest pid over budget there): one warning per GPU per attempt.
    warned: BTreeSet<(GpuIndex, u32)>,
    peak: BTreeMap<GpuIndex, u64>,
    findings: Vec<Finding>,
    /// Every pid a stop was sent for: a retried attempt has new pids and is held to the
    /// budget again, while the stopped one is not signalled twice.
    stopped_pids: BTreeSet<u32>,
}

impl BudgetWatch {
    /// A budget of `limit_bytes` per GPU; `grace` between SIGTERM and SIGKILL.
    pub fn new(root: JobRoot, limit_bytes: u64, grace: Duration) -> Self {
        BudgetWatch {
            root,
            limit_bytes,
            grace,
            proc: ProcRoot::default(),
            warned: BTreeSet::new(),
            peak: BTreeMap::new(),
            findings: Vec::new(),
            stopped_pids: BTreeSet::new(),
        }
    }

    /// Reads processes under another `/proc` (tests).
    #[must_use]
    pub fn with_proc(mut self, proc: ProcRoot) -> Self {
        self.proc = proc;
        self
    }

    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// The job's processes now.
    pub fn job_pids(&self) -> BTreeSet<u32> {
        match self.root {
            JobRoot::Process(pid) => self.proc.job_pids(pid),
            JobRoot::ChildrenOf(pid) => {
                let mut pids = self.proc.job_pids(pid);
                pids.remove(&pid);
                pids
            }
        }
    }

    /// Looks at one sample. Over budget on several GPUs, the one most over is reported.
    pub fn observe(&mut self, sample: &Sample) -> Step {
        let job = self.members(sample);
        self.observe_pids(&job, sample)
    }

    /// The sample's processes that belong to the job. Only the few processes on the GPUs
    /// are looked up (their ancestry, and their process group's leader's), not all of
    /// `/proc`, so watching costs the same on a machine with thousands of processes.
    pub fn members(&self, sample: &Sample) -> BTreeSet<u32> {
        sample
            .processes
            .iter()
            .map(|p| p.pid.0)
            .filter(|&pid| self.in_job(pid))
            .collect()
    }

    fn in_job(&self, pid: u32) -> bool {
        let (root, root_counts) = match self.root {
            JobRoot::Process(p) => (p, true),
            JobRoot::ChildrenOf(p) => (p, false),
        };
        if pid == root {
            return root_counts;
        }
        if self.descends_from(pid, root) {
            return true;
        }
        // Re-parented to init, but still in a process group the job leads.
        self.proc.stat(pid).is_some_and(|s| {
            s.pgrp != pid && ((s.pgrp == root && root_counts) || self.descends_from(s.pgrp, root))
        })
    }

    /// Whether `ancestor` is a parent, grandparent, ... of `pid`.
    fn descends_from(&self, mut pid: u32, ancestor: u32) -> bool {
        // Process trees are shallow; the bound only guards against a /proc that lies.
        for _ in 0..4096 {
            let Some(stat) = self.proc.stat(pid) else {
                return false;
            };
            if stat.ppid == ancestor {
                return true;
            }
            if stat.ppid <= 1 {
                return false;
            }
            pid = stat.ppid;
        }
        false
    }

    /// [`BudgetWatch::observe`] with the job's pids given (pure; for tests and callers that
    /// already know them).
    pub fn observe_pids(&mut self, job: &BTreeSet<u32>, sample: &Sample) -> Step {
        let usage = job_usage(job, sample);
        for (gpu, (used, _)) in &usage {
            let peak = self.peak.entry(*gpu).or_insert(0);
            *peak = (*peak).max(*used);
        }
        let Some((gpu, (used, pids))) = usage
            .into_iter()
            .filter(|(_, (used, _))| *used > self.limit_bytes)
            .max_by_key(|(_, (used, _))| *used)
        else {
            return Step::Within;
        };
        let first = pids.iter().copied().min().unwrap_or_default();
        let new_finding = self.warned.insert((gpu, first)).then(|| {
            let f = findings::budget_exceeded(gpu, used, self.limit_bytes, &pids);
            self.findings.push(f.clone());
            f
        });
        Step::Over {
            gpu,
            used,
            pids,
            new_finding,
        }
    }

    /// Whether a stop for these pids would be the first: none of them was stopped before.
    pub fn is_new(&self, pids: &[u32]) -> bool {
        pids.iter().any(|p| !self.stopped_pids.contains(p))
    }

    /// Stops the job, once per attempt: each process group it leads is sent SIGTERM, given
    /// the grace period, then SIGKILL. Returns the GD591 finding (`None` when these pids
    /// were already stopped).
    pub fn enforce_now(&mut self, gpu: GpuIndex, used: u64, pids: &[u32]) -> Option<Finding> {
        if !self.is_new(pids) {
            return None;
        }
        self.stopped_pids.extend(pids.iter().copied());
        let leaders: Vec<u32> = match self.root {
            JobRoot::Process(pid) => vec![pid],
            JobRoot::ChildrenOf(me) => self
                .proc
                .pids()
                .into_iter()
                .filter(|&p| self.proc.stat(p).is_some_and(|s| s.ppid == me))
                .collect(),
        };
        let mut outcome = StopOutcome::AlreadyGone;
        for leader in leaders {
            let Some(stat) = self.proc.stat(leader) else {
                continue;
            };
            outcome = if stat.pgrp == leader {
                stop_group(&self.proc, leader, stat.start_time, self.grace)
            } else {
                stop_process(&self.proc, leader, stat.start_time, self.grace)
            };
        }
        let f = findings::job_stopped(gpu, used, self.limit_bytes, pids, &outcome);
        self.findings.push(f.clone());
        Some(f)
    }

    /// Whether the job was stopped for its budget.
    pub fn stopped(&self) -> bool {
        !self.stopped_pids.is_empty()
    }

    /// The most the job held on each GPU while watched.
    pub fn peak(&self) -> &BTreeMap<GpuIndex, u64> {
        &self.peak
    }

    /// Every finding so far (GD590 per GPU, GD591 once).
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }
}

/// What a [`BudgetThread`] saw, when it is finished.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BudgetReport {
    /// GD590 per GPU where the job went over, GD591 for each stop.
    pub findings: Vec<Finding>,
    /// Whether the job was stopped for its budget.
    pub stopped: bool,
    /// The most the job held on each GPU.
    pub peak_bytes: BTreeMap<GpuIndex, u64>,
    pub limit_bytes: u64,
}

/// A [`BudgetWatch`] on its own thread, sampling its own GPU source: `run` starts one beside
/// its supervisor and reads the report when the run is over.
pub struct BudgetThread {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<BudgetReport>>,
}

impl BudgetThread {
    /// Samples `source` every `interval`; over budget, logs one line to stderr and, with
    /// `enforce`, stops the job.
    pub fn start(
        mut source: Box<dyn GpuSource>,
        mut watch: BudgetWatch,
        interval: Duration,
        enforce: bool,
    ) -> BudgetThread {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let sample = match source.sample() {
                    Ok(s) => Some(s),
                    // A recording that ran out has nothing more to say; a live source that
                    // failed once may answer next time.
                    Err(SourceError::Exhausted) => break,
                    Err(_) => None,
                };
                let _ = source.drain_events();
                if let Some(sample) = sample {
                    if let Step::Over {
                        gpu,
                        used,
                        pids,
                        new_finding,
                    } = watch.observe(&sample)
                    {
                        if let Some(f) = new_finding {
                            eprintln!("gpu-doctor: over budget: {}", f.message);
                        }
                        if enforce && watch.is_new(&pids) {
                            eprintln!(
                                "gpu-doctor: stopping the job (SIGTERM, then SIGKILL after {} s)",
                                watch.grace.as_secs_f64()
                            );
                            if let Some(f) = watch.enforce_now(gpu, used, &pids) {
                                eprintln!("gpu-doctor: {}", f.message);
                            }
                        }
                    }
                }
                // Sleep in short steps so `finish` does not wait a whole interval.
                let until = std::time::Instant::now() + interval;
                while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20).min(interval));
                }
            }
            BudgetReport {
                findings: watch.findings.clone(),
                stopped: watch
                    .findings
                    .iter()
                    .any(|f| f.code.0 == findings::JOB_STOPPED),
                peak_bytes: watch.peak.clone(),
                limit_bytes: watch.limit_bytes,
            }
        });
        BudgetThread {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops the thread and returns what it saw.
    pub fn finish(mut self) -> BudgetReport {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for BudgetThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::{Pid, ProcessSample, Reading};

    const GIB: u64 = 1 << 30;

    fn sample(procs: &[(u32, u32, u64)]) -> Sample {
        Sample {
            processes: procs
                .iter()
                .map(|&(pid, gpu, gib)| ProcessSample {
                    gpu: GpuIndex(gpu),
                    pid: Pid(pid),
                    used_memory_bytes: Reading::Value(gib * GIB),
                    ..ProcessSample::default()
                })
                .collect(),
            ..Sample::default()
        }
    }

    #[test]
    fn only_the_jobs_processes_count_per_gpu() {
        let job = BTreeSet::from([10, 11]);
        let u = job_usage(
            &job,
            &sample(&[(10, 0, 5), (11, 0, 6), (12, 0, 50), (11, 1, 2)]),
        );
        assert_eq!(u[&GpuIndex(0)], (11 * GIB, vec![10, 11]));
        assert_eq!(u[&GpuIndex(1)], (2 * GIB, vec![11]));
    }

    #[test]
    fn members_are_found_by_ancestry_and_process_group() {
        let dir = tempfile::tempdir().unwrap();
        for (pid, ppid, pgrp) in [
            (10, 1, 10),
            (11, 10, 11),
            (12, 11, 11),
            (13, 1, 11),
            (20, 1, 20),
        ] {
            let d = dir.path().join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("stat"),
                format!("{pid} (x) S {ppid} {pgrp} 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {pid}00 0"),
            )
            .unwrap();
        }
        let s = sample(&[
            (10, 0, 1),
            (11, 0, 1),
            (12, 0, 1),
            (13, 0, 1),
            (20, 0, 1),
            (99, 0, 1),
        ]);
        let run = BudgetWatch::new(JobRoot::ChildrenOf(10), GIB, Duration::ZERO)
            .with_proc(ProcRoot::new(dir.path()));
        // The job's child, its grandchild, and a re-parented member of the child's group;
        // not gpu-doctor itself, nor an unrelated process, nor one /proc does not show.
        assert_eq!(run.members(&s), BTreeSet::from([11, 12, 13]));
        let tree = BudgetWatch::new(JobRoot::Process(11), GIB, Duration::ZERO)
            .with_proc(ProcRoot::new(dir.path()));
        assert_eq!(tree.members(&s), BTreeSet::from([11, 12, 13]));
    }

    #[test]
    fn over_budget_warns_once_per_gpu() {
        let mut w = BudgetWatch::new(JobRoot::Process(10), 20 * GIB, Duration::from_secs(1));
        let job = BTreeSet::from([10]);
        assert_eq!(
            w.observe_pids(&job, &sample(&[(10, 0, 19), (99, 0, 80)])),
            Step::Within
        );
        let Step::Over {
            gpu,
            used,
            new_finding,
            ..
        } = w.observe_pids(&job, &sample(&[(10, 0, 21)]))
        else {
            panic!("over budget not seen");
        };
        assert_eq!((gpu, used), (GpuIndex(0), 21 * GIB));
        assert_eq!(new_finding.unwrap().code.0, "GD590");
        let Step::Over { new_finding, .. } = w.observe_pids(&job, &sample(&[(10, 0, 23)])) else {
            panic!("still over");
        };
        assert!(new_finding.is_none());
        assert_eq!(w.findings().len(), 1);
        assert_eq!(w.peak()[&GpuIndex(0)], 23 * GIB);
        assert!(!w.stopped());
    }

    /// A source that repeats one sample.
    struct Repeat(Sample);

    impl GpuSource for Repeat {
        fn inventory(&mut self) -> Result<gpu_doctor_model::Inventory, SourceError> {
            Ok(gpu_doctor_model::Inventory::default())
        }
        fn sample(&mut self) -> Result<Sample, SourceError> {
            Ok(self.0.clone())
        }
        fn drain_events(&mut self) -> Result<Vec<gpu_doctor_model::GpuEvent>, SourceError> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn the_thread_stops_a_job_over_budget_and_reports_it() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let source = Box::new(Repeat(sample(&[(pid, 0, 25), (1, 0, 90)])));
        let watch = BudgetWatch::new(JobRoot::Process(pid), 20 * GIB, Duration::from_secs(5));
        let thread = BudgetThread::start(source, watch, Duration::from_millis(20), true);
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(15)
        );
        let report = thread.finish();
        assert!(report.stopped);
        let codes: Vec<&str> = report.findings.iter().map(|f| f.code.0.as_str()).collect();
        assert_eq!(codes, vec!["GD590", "GD591"]);
        assert_eq!(report.peak_bytes[&GpuIndex(0)], 25 * GIB);
    }

    #[test]
    fn without_enforce_the_thread_only_warns() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let source = Box::new(Repeat(sample(&[(pid, 0, 25)])));
        let watch = BudgetWatch::new(JobRoot::Process(pid), 20 * GIB, Duration::from_secs(5));
        let thread = BudgetThread::start(source, watch, Duration::from_millis(10), false);
        std::thread::sleep(Duration::from_millis(200));
        let report = thread.finish();
        assert!(
            child.try_wait().unwrap().is_none(),
            "a warning stopped the job"
        );
        assert!(!report.stopped);
        assert_eq!(report.findings.len(), 1);
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn enforce_stops_a_real_job_group() {
        use std::os::unix::process::CommandExt as _;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30; wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut w = BudgetWatch::new(JobRoot::Process(pid), 20 * GIB, Duration::from_secs(5));
        // The tree shows up as the shell starts its sleeps.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while w.job_pids().len() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(w.job_pids().len() >= 3, "{:?}", w.job_pids());
        let f = w.enforce_now(GpuIndex(0), 21 * GIB, &[pid]).unwrap();
        assert_eq!(f.code.0, "GD591");
        assert!(
            f.evidence[1].text.contains("after SIGTERM"),
            "{:?}",
            f.evidence
        );
        assert!(child.wait().unwrap().code().is_none());
        // Once only.
        assert!(w.enforce_now(GpuIndex(0), 21 * GIB, &[pid]).is_none());
    }
}
