//! What the sampler has learnt so far, and the immutable [`Snapshot`] it publishes.
//!
//! [`State`] owns the latest sample, a bounded window of history (for the leak rule), the Xid
//! counters and the sampling counters. After every sample it derives the findings once, so a
//! scrape only encodes what is already there. Nothing here reads a clock, the driver or the
//! network: time comes in as arguments, which is how the tests drive it sample by sample.

use gpu_doctor_model::history::History;
use gpu_doctor_model::{Finding, GpuEvent, GpuEventKind, GpuIndex, Inventory, Pid, Sample};
use gpu_doctor_rules::health;
use gpu_doctor_rules::history::leak::{LeakSubject, leak_finding};
use gpu_doctor_rules::history::{LeakConfig, Point, detect_leak};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How much history the leak rule sees, and how many labels the Xid counters may grow.
#[derive(Debug, Clone, PartialEq)]
pub struct StateConfig {
    /// Samples older than this (by the source's timestamps) are dropped.
    pub history_window: Duration,
    pub leak: LeakConfig,
    /// Distinct `(gpu, xid)` counters kept; later ones are counted under `xid="other"`, so
    /// a driver that reports garbage Xids cannot grow the label set without bound.
    pub max_xid_series: usize,
    /// Process series kept in the history window; the ones seen longest ago go first.
    pub max_process_series: usize,
}

impl Default for StateConfig {
    fn default() -> Self {
        StateConfig {
            history_window: Duration::from_secs(30 * 60),
            leak: LeakConfig::default(),
            max_xid_series: 256,
            max_process_series: 1024,
        }
    }
}

/// The label of an Xid counter: a number, or `other` once the bound is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum XidLabel {
    Xid(u32),
    Other,
}

/// A memory series the leak rule flags.
#[derive(Debug, Clone, PartialEq)]
pub struct LeakSuspect {
    pub gpu: GpuIndex,
    /// `None` for the device as a whole (no visible process explains the growth).
    pub pid: Option<Pid>,
    pub slope_bytes_per_second: f64,
}

/// Everything a scrape needs, owned and immutable: published behind an `Arc` after every
/// sample, so a scrape never waits on the driver and never sees a half-updated state.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub inventory: Arc<Inventory>,
    /// The latest good sample.
    pub sample: Option<Sample>,
    /// When (exporter clock, ms since the epoch) the latest good sample was taken. Replays
    /// carry old timestamps in the sample itself, so freshness is measured on this one.
    pub sampled_at_ms: Option<u64>,
    /// Why the latest attempt failed; `None` when it worked.
    pub last_error: Option<String>,
    /// A replay ran out: the last sample stands for the rest of the run.
    pub source_finished: bool,
    pub findings: Vec<Finding>,
    pub leaks: Vec<LeakSuspect>,
    pub xids: BTreeMap<(GpuIndex, XidLabel), u64>,
    pub samples_total: u64,
    pub sample_errors_total: u64,
    /// How long the latest good sample took to read from the source.
    pub sample_duration: Option<Duration>,
}

/// Whether the exporter's data can be trusted right now (`/healthz`).
#[derive(Debug, Clone, PartialEq)]
pub enum Health {
    Fresh { age: Duration },
    NoSampleYet,
    Stale { age: Duration },
    SourceFailed { error: String },
}

impl Health {
    pub fn is_ok(&self) -> bool {
        matches!(self, Health::Fresh { .. })
    }

    /// One line for a person (the `/healthz` body).
    pub fn describe(&self) -> String {
        match self {
            Health::Fresh { age } => format!("ok: last sample {:.1}s ago", age.as_secs_f64()),
            Health::NoSampleYet => "starting: no sample yet".to_owned(),
            Health::Stale { age } => format!(
                "stale: last sample {:.1}s ago; the sampler is stuck or the driver hangs",
                age.as_secs_f64()
            ),
            Health::SourceFailed { error } => format!("source failed: {error}"),
        }
    }
}

impl Snapshot {
    /// Time since the latest good sample, at `now_ms`.
    pub fn age(&self, now_ms: u64) -> Option<Duration> {
        self.sampled_at_ms
            .map(|t| Duration::from_millis(now_ms.saturating_sub(t)))
    }

    /// Fresh, stale (older than `stale_after`), failed or not started.
    pub fn health(&self, now_ms: u64, stale_after: Duration) -> Health {
        if let Some(error) = &self.last_error {
            return Health::SourceFailed {
                error: error.clone(),
            };
        }
        match self.age(now_ms) {
            None => Health::NoSampleYet,
            Some(age) if age > stale_after => Health::Stale { age },
            Some(age) => Health::Fresh { age },
        }
    }
}

/// The sampler's memory between samples.
#[derive(Debug)]
pub struct State {
    config: StateConfig,
    snapshot: Snapshot,
    history: History,
}

impl State {
    pub fn new(inventory: Inventory, config: StateConfig) -> Self {
        State {
            config,
            snapshot: Snapshot {
                inventory: Arc::new(inventory),
                ..Snapshot::default()
            },
            history: History::default(),
        }
    }

    /// The current snapshot, to publish.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot.clone()
    }

    /// A good sample and the events drained with it, taken at `now_ms` in `took`.
    pub fn ingest(&mut self, sample: Sample, events: &[GpuEvent], now_ms: u64, took: Duration) {
        for event in events {
            if let GpuEventKind::Xid { xid, .. } = event.kind {
                self.count_xid(event.gpu, xid);
            }
        }
        self.history.push(&sample);
        let window_ms = u64::try_from(self.config.history_window.as_millis()).unwrap_or(u64::MAX);
        self.history
            .trim_before(sample.timestamp_ms.saturating_sub(window_ms));
        self.bound_process_series();

        let (leak_findings, leaks) = self.leaks();
        let mut findings = Vec::new();
        for device in &sample.devices {
            let info = self
                .snapshot
                .inventory
                .devices
                .iter()
                .find(|d| d.index == device.index);
            findings.extend(health::device_findings(info, device));
        }
        findings.extend(leak_findings);
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(a.gpu.cmp(&b.gpu))
                .then(a.code.cmp(&b.code))
        });

        let s = &mut self.snapshot;
        s.sample = Some(sample);
        s.sampled_at_ms = Some(now_ms);
        s.last_error = None;
        s.findings = findings;
        s.leaks = leaks;
        s.samples_total += 1;
        s.sample_duration = Some(took);
    }

    /// The source failed this time; the last good sample is kept but `/healthz` says so.
    pub fn record_error(&mut self, error: String) {
        self.snapshot.last_error = Some(error);
        self.snapshot.sample_errors_total += 1;
    }

    /// A replay ran out. Its world stands still at its last sample: that sample stays
    /// current (re-stamped), so a demo or a test on a recording does not turn stale.
    pub fn source_finished(&mut self, now_ms: u64) {
        self.snapshot.source_finished = true;
        if self.snapshot.sample.is_some() {
            self.snapshot.sampled_at_ms = Some(now_ms);
            self.snapshot.last_error = None;
        } else {
            self.record_error("the recording has no samples".to_owned());
        }
    }

    fn count_xid(&mut self, gpu: GpuIndex, xid: u32) {
        let xids = &mut self.snapshot.xids;
        let key = if xids.contains_key(&(gpu, XidLabel::Xid(xid)))
            || xids.len() < self.config.max_xid_series
        {
            (gpu, XidLabel::Xid(xid))
        } else {
            (gpu, XidLabel::Other)
        };
        *xids.entry(key).or_insert(0) += 1;
    }

    /// Drops the process series seen longest ago beyond the bound: a node that starts a
    /// new short-lived process every second must not grow the window without limit.
    fn bound_process_series(&mut self) {
        let max = self.config.max_process_series;
        let series = &mut self.history.processes;
        if series.len() > max {
            series.sort_by_key(|s| std::cmp::Reverse(s.points.last().map_or(0, |p| p.0)));
            series.truncate(max);
        }
    }

    /// Leak suspects per process, and per device where no process explains the growth
    /// (processes are invisible from inside some containers).
    fn leaks(&self) -> (Vec<Finding>, Vec<LeakSuspect>) {
        let mut findings = Vec::new();
        let mut suspects = Vec::new();
        let config = &self.config.leak;
        for series in &self.history.processes {
            let points: Vec<Point> = series
                .points
                .iter()
                .map(|&(t_ms, bytes)| Point { t_ms, bytes })
                .collect();
            if let Some(verdict) = detect_leak(&points, self.headroom(series.gpu), config) {
                let subject = LeakSubject {
                    gpu: series.gpu,
                    pid: Some(series.pid),
                    command: series.command.clone(),
                };
                findings.push(leak_finding(&subject, &verdict));
                suspects.push(LeakSuspect {
                    gpu: series.gpu,
                    pid: Some(series.pid),
                    slope_bytes_per_second: verdict.slope_bytes_per_s,
                });
            }
        }
        for (&gpu, points) in &self.history.devices {
            if suspects.iter().any(|s| s.gpu == gpu) {
                continue;
            }
            let series: Vec<Point> = points
                .iter()
                .filter_map(|p| {
                    Some(Point {
                        t_ms: p.t_ms,
                        bytes: p.memory_used_bytes?,
                    })
                })
                .collect();
            if let Some(verdict) = detect_leak(&series, self.headroom(gpu), config) {
                let subject = LeakSubject {
                    gpu,
                    pid: None,
                    command: None,
                };
                findings.push(leak_finding(&subject, &verdict));
                suspects.push(LeakSuspect {
                    gpu,
                    pid: None,
                    slope_bytes_per_second: verdict.slope_bytes_per_s,
                });
            }
        }
        (findings, suspects)
    }

    /// Free memory on `gpu` in the latest sample, for the time-to-OOM forecast.
    fn headroom(&self, gpu: GpuIndex) -> Option<u64> {
        let last = self.history.devices.get(&gpu)?.last()?;
        Some(
            last.memory_total_bytes?
                .saturating_sub(last.memory_used_bytes?),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::{DeviceSample, ProcessSample, Reading};

    fn sample(t_ms: u64, used: u64) -> Sample {
        Sample {
            timestamp_ms: t_ms,
            devices: vec![DeviceSample {
                index: GpuIndex(0),
                memory_total_bytes: Reading::Value(80 << 30),
                memory_used_bytes: Reading::Value(used),
                ..DeviceSample::default()
            }],
            processes: vec![ProcessSample {
                gpu: GpuIndex(0),
                pid: Pid(7),
                used_memory_bytes: Reading::Value(used),
                ..ProcessSample::default()
            }],
        }
    }

    #[test]
    fn a_steady_climb_becomes_a_leak_suspect_and_a_plateau_does_not() {
        let mut leaking = State::new(Inventory::default(), StateConfig::default());
        let mut flat = State::new(Inventory::default(), StateConfig::default());
        for i in 0..120u64 {
            let t = i * 1000;
            leaking.ingest(sample(t, (1 << 30) + i * (8 << 20)), &[], t, Duration::ZERO);
            flat.ingest(sample(t, 1 << 30), &[], t, Duration::ZERO);
        }
        let s = leaking.snapshot();
        assert_eq!(s.leaks.len(), 1, "{:?}", s.leaks);
        assert_eq!(s.leaks[0].pid, Some(Pid(7)));
        // 8 MiB per second, within the estimator's rounding.
        assert!((s.leaks[0].slope_bytes_per_second - 8.0 * 1_048_576.0).abs() < 1.0e5);
        assert!(s.findings.iter().any(|f| f.code.0 == "GD581"));
        assert!(flat.snapshot().leaks.is_empty());
    }

    #[test]
    fn xid_labels_stop_growing_at_the_bound() {
        let config = StateConfig {
            max_xid_series: 2,
            ..StateConfig::default()
        };
        let mut state = State::new(Inventory::default(), config);
        let events: Vec<GpuEvent> = [48, 63, 79, 48]
            .into_iter()
            .map(|xid| GpuEvent {
                timestamp_ms: 0,
                gpu: GpuIndex(0),
                kind: GpuEventKind::Xid { xid, detail: None },
            })
            .collect();
        state.ingest(sample(0, 1), &events, 0, Duration::ZERO);
        let xids = state.snapshot().xids;
        assert_eq!(xids.get(&(GpuIndex(0), XidLabel::Xid(48))), Some(&2));
        assert_eq!(xids.get(&(GpuIndex(0), XidLabel::Xid(63))), Some(&1));
        assert_eq!(xids.get(&(GpuIndex(0), XidLabel::Other)), Some(&1));
        assert_eq!(xids.len(), 3);
    }

    #[test]
    fn health_follows_age_and_errors() {
        let stale_after = Duration::from_secs(15);
        let mut state = State::new(Inventory::default(), StateConfig::default());
        assert_eq!(state.snapshot().health(0, stale_after), Health::NoSampleYet);
        state.ingest(sample(0, 1), &[], 1_000, Duration::ZERO);
        assert!(state.snapshot().health(10_000, stale_after).is_ok());
        assert!(matches!(
            state.snapshot().health(20_000, stale_after),
            Health::Stale { .. }
        ));
        state.record_error("NVML failed: GPU is lost".into());
        assert!(matches!(
            state.snapshot().health(2_000, stale_after),
            Health::SourceFailed { .. }
        ));
        // A replay that ran out keeps its last sample current.
        state.source_finished(50_000);
        assert!(state.snapshot().health(51_000, stale_after).is_ok());
        assert!(state.snapshot().sample.is_some());
    }

    #[test]
    fn process_series_are_bounded() {
        let config = StateConfig {
            max_process_series: 3,
            ..StateConfig::default()
        };
        let mut state = State::new(Inventory::default(), config);
        for pid in 0..10u32 {
            let mut s = sample(u64::from(pid) * 1000, 1);
            s.processes[0].pid = Pid(pid);
            state.ingest(s, &[], 0, Duration::ZERO);
        }
        assert_eq!(state.history.processes.len(), 3);
        let kept: Vec<u32> = state.history.processes.iter().map(|s| s.pid.0).collect();
        assert_eq!(kept, vec![9, 8, 7]);
    }
}
