//! GPU state while the job runs: a background thread samples the GPU source at a fixed
//! interval and keeps, in memory, the latest sample, the events of the current attempt and
//! the peak memory of the job.
//!
//! The source is shared behind a mutex so the supervisor can also take a fresh sample at the
//! moment it decides (after the job is gone). A source that runs out (a recording played to
//! its end) keeps its last sample; one that fails keeps being retried at the interval.

use crate::policy::GpuView;
use gpu_doctor_model::{DeviceState, GpuEvent, GpuIndex, Inventory, Sample};
use gpu_doctor_source::{GpuSource, SourceError};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Events kept per attempt; a GPU that floods Xids must not grow memory.
const MAX_EVENTS: usize = 1024;

/// Peak memory seen while one attempt ran.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttemptGpuStats {
    /// The most the job's own processes held at once, summed over GPUs (NVML per-process
    /// figures for processes in the job's process group).
    pub peak_job_bytes: Option<u64>,
    /// The most memory in use on each of the job's GPUs (all processes).
    pub peak_device_used_bytes: BTreeMap<GpuIndex, u64>,
    pub events: Vec<GpuEvent>,
    pub samples: u64,
}

impl AttemptGpuStats {
    /// The figure reported as the attempt's peak: the job's own when NVML could attribute
    /// memory to its processes, else the busiest of its GPUs.
    pub fn peak_bytes(&self) -> Option<u64> {
        self.peak_job_bytes
            .or_else(|| self.peak_device_used_bytes.values().copied().max())
    }
}

#[derive(Default)]
struct Shared {
    latest: Option<Sample>,
    job_pgid: Option<i32>,
    job_gpus: Vec<GpuIndex>,
    stats: AttemptGpuStats,
    exhausted: bool,
    last_error: Option<String>,
}

/// The background sampler.
pub struct Monitor {
    source: Arc<Mutex<Box<dyn GpuSource>>>,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    inventory: Inventory,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in the sampler thread must not take the supervisor down with it.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The process group of `pid`, from `/proc` (`None` when it is gone or not visible).
fn pgrp_of(pid: u32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(3)?.parse().ok()
}

fn record(shared: &mut Shared, sample: Sample) {
    if let Some(pgid) = shared.job_pgid {
        let mut job_bytes = None;
        for p in &sample.processes {
            if pgrp_of(p.pid.0) == Some(pgid)
                && let Some(b) = p.used_memory_bytes.get()
            {
                job_bytes = Some(job_bytes.unwrap_or(0) + b);
            }
        }
        if let Some(b) = job_bytes {
            let peak = shared.stats.peak_job_bytes.get_or_insert(0);
            *peak = (*peak).max(b);
        }
        for d in &sample.devices {
            let ours = shared.job_gpus.is_empty() || shared.job_gpus.contains(&d.index);
            if let (true, Some(used)) = (ours, d.memory_used_bytes.get()) {
                let peak = shared
                    .stats
                    .peak_device_used_bytes
                    .entry(d.index)
                    .or_insert(0);
                *peak = (*peak).max(used);
            }
        }
        shared.stats.samples += 1;
    }
    shared.latest = Some(sample);
}

fn take_sample(source: &Mutex<Box<dyn GpuSource>>, shared: &Mutex<Shared>) -> bool {
    let mut src = lock(source);
    let result = src.sample();
    let events = src.drain_events();
    drop(src);
    let mut sh = lock(shared);
    if let Ok(events) = events {
        let room = MAX_EVENTS.saturating_sub(sh.stats.events.len());
        sh.stats.events.extend(events.into_iter().take(room));
    }
    match result {
        Ok(sample) => {
            record(&mut sh, sample);
            true
        }
        Err(SourceError::Exhausted) => {
            sh.exhausted = true;
            false
        }
        Err(e) => {
            sh.last_error = Some(e.to_string());
            true
        }
    }
}

impl Monitor {
    /// Reads the inventory and starts sampling every `interval`.
    pub fn start(mut source: Box<dyn GpuSource>, interval: Duration) -> Result<Self, SourceError> {
        let inventory = source.inventory()?;
        let source = Arc::new(Mutex::new(source));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let stop = Arc::new(AtomicBool::new(false));
        take_sample(&source, &shared);
        let thread = {
            let (source, shared, stop) = (source.clone(), shared.clone(), stop.clone());
            std::thread::Builder::new()
                .name("gpu-doctor-monitor".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(interval);
                        if !take_sample(&source, &shared) {
                            break;
                        }
                    }
                })
                .ok()
        };
        Ok(Monitor {
            source,
            shared,
            stop,
            thread,
            inventory,
        })
    }

    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// Starts counting for an attempt whose process group is `pgid`, on `gpus` (all when
    /// empty). Events seen since the last attempt ended are kept: a GPU that failed during
    /// the backoff is this attempt's problem too.
    pub fn begin_attempt(&self, pgid: i32, gpus: &[GpuIndex]) {
        let mut sh = lock(&self.shared);
        sh.job_pgid = Some(pgid);
        sh.job_gpus = gpus.to_vec();
        let events = std::mem::take(&mut sh.stats.events);
        sh.stats = AttemptGpuStats {
            events,
            ..AttemptGpuStats::default()
        };
    }

    /// Stops counting and returns what the attempt showed.
    pub fn end_attempt(&self) -> AttemptGpuStats {
        // One last look, so events raised as the job died are counted.
        if !lock(&self.shared).exhausted {
            take_sample(&self.source, &self.shared);
        }
        let mut sh = lock(&self.shared);
        sh.job_pgid = None;
        std::mem::take(&mut sh.stats)
    }

    /// A fresh view of every GPU (falls back to the latest sample when the source has run
    /// out).
    pub fn gpus_now(&self) -> Vec<GpuView> {
        if !lock(&self.shared).exhausted {
            take_sample(&self.source, &self.shared);
        }
        let sh = lock(&self.shared);
        sh.latest
            .as_ref()
            .map(|s| views(&self.inventory, s))
            .unwrap_or_default()
    }

    /// The latest view without sampling (for waiting loops).
    pub fn gpus_latest(&self) -> Vec<GpuView> {
        let sh = lock(&self.shared);
        sh.latest
            .as_ref()
            .map(|s| views(&self.inventory, s))
            .unwrap_or_default()
    }

    /// The latest sample, as it was taken.
    pub fn latest_sample(&self) -> Option<Sample> {
        lock(&self.shared).latest.clone()
    }

    /// The last error the source gave, if sampling is failing.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.shared).last_error.clone()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The policy's view of each GPU in a sample.
pub fn views(inventory: &Inventory, sample: &Sample) -> Vec<GpuView> {
    sample
        .devices
        .iter()
        .map(|d| {
            let info = inventory.devices.iter().find(|i| i.index == d.index);
            let ecc_bad = d
                .ecc_errors
                .get()
                .is_some_and(|e| e.volatile_uncorrected > 0);
            let remap_bad = d.remapped_rows.get().is_some_and(|r| r.failure);
            GpuView {
                index: d.index,
                uuid: info.map(|i| i.uuid.0.clone()),
                total_bytes: d
                    .memory_total_bytes
                    .get()
                    .or_else(|| info.and_then(|i| i.memory_total_bytes.get())),
                free_bytes: d.memory_free_bytes.get(),
                unhealthy: matches!(d.state, DeviceState::Lost { .. }) || ecc_bad || remap_bad,
            }
        })
        .collect()
}
