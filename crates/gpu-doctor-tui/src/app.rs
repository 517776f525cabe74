//! The monitor's state: what has been seen, what is selected, how processes are sorted.
//! Pure: samples and keys in, state out, so frames can be tested without a terminal.

use gpu_doctor_model::history::History;
use gpu_doctor_model::{GpuEvent, Inventory, ProcessSample, Sample};
use gpu_doctor_rules::history::{Alert, LeakConfig, history_alerts};

/// How long the charts look back.
pub const WINDOW_MS: u64 = 5 * 60 * 1000;
/// Recomputing alerts every sample at 10 Hz would be wasted work: the leak test needs tens
/// of seconds of data to change its mind.
const ALERT_PERIOD_MS: u64 = 2000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Memory,
    Trend,
    Pid,
    User,
    Command,
}

impl SortKey {
    fn next(self) -> SortKey {
        match self {
            SortKey::Memory => SortKey::Trend,
            SortKey::Trend => SortKey::Pid,
            SortKey::Pid => SortKey::User,
            SortKey::User => SortKey::Command,
            SortKey::Command => SortKey::Memory,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortKey::Memory => "memory",
            SortKey::Trend => "trend",
            SortKey::Pid => "pid",
            SortKey::User => "user",
            SortKey::Command => "command",
        }
    }
}

/// A key the monitor understands (decoupled from the terminal library for tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Quit,
    Up,
    Down,
    Sort,
    Help,
    Pause,
    Other,
}

pub struct App {
    pub inventory: Inventory,
    pub source_label: String,
    pub interval_ms: u64,
    pub latest: Option<Sample>,
    pub history: History,
    pub alerts: Vec<Alert>,
    pub selected: usize,
    pub sort: SortKey,
    pub show_help: bool,
    pub paused: bool,
    /// The source has no more samples (end of a recording) or failed; the message says which.
    pub ended: Option<String>,
    last_alerts_ms: u64,
    leak_config: LeakConfig,
}

impl App {
    pub fn new(inventory: Inventory, source_label: String, interval_ms: u64) -> App {
        App {
            inventory,
            source_label,
            interval_ms,
            latest: None,
            history: History::default(),
            alerts: Vec::new(),
            selected: 0,
            sort: SortKey::Memory,
            show_help: false,
            paused: false,
            ended: None,
            last_alerts_ms: 0,
            leak_config: LeakConfig::default(),
        }
    }

    /// Takes a new sample and the events before it.
    pub fn push(&mut self, sample: Sample, events: Vec<GpuEvent>) {
        if self.paused {
            return;
        }
        self.history.events.extend(events);
        self.history.push(&sample);
        let t = sample.timestamp_ms;
        self.history.trim_before(t.saturating_sub(WINDOW_MS));
        self.latest = Some(sample);
        if t.saturating_sub(self.last_alerts_ms) >= ALERT_PERIOD_MS {
            self.alerts = history_alerts(&self.history, &self.leak_config);
            self.last_alerts_ms = t;
        }
        let gpus = self.latest.as_ref().map_or(0, |s| s.devices.len());
        self.selected = self.selected.min(gpus.saturating_sub(1));
    }

    /// Applies a key; returns false when the monitor should quit.
    pub fn key(&mut self, key: Key) -> bool {
        let gpus = self.latest.as_ref().map_or(0, |s| s.devices.len());
        match key {
            Key::Quit => return false,
            Key::Up => self.selected = self.selected.saturating_sub(1),
            Key::Down => self.selected = (self.selected + 1).min(gpus.saturating_sub(1)),
            Key::Sort => self.sort = self.sort.next(),
            Key::Help => self.show_help = !self.show_help,
            Key::Pause => self.paused = !self.paused,
            Key::Other => {}
        }
        true
    }

    /// Memory trend of a process over the last 30 s, in bytes per minute.
    pub fn trend_bytes_per_min(&self, p: &ProcessSample) -> Option<f64> {
        let series = self
            .history
            .processes
            .iter()
            .find(|s| s.gpu == p.gpu && s.pid == p.pid)?;
        let (t_last, b_last) = *series.points.last()?;
        let (t_first, b_first) = *series.points.iter().find(|(t, _)| *t + 30_000 >= t_last)?;
        let dt = t_last.saturating_sub(t_first);
        (dt >= 5_000).then(|| (b_last as f64 - b_first as f64) / dt as f64 * 60_000.0)
    }

    /// The latest sample's processes, sorted by the chosen key.
    pub fn sorted_processes(&self) -> Vec<&ProcessSample> {
        let Some(sample) = &self.latest else {
            return Vec::new();
        };
        let mut processes: Vec<&ProcessSample> = sample.processes.iter().collect();
        match self.sort {
            SortKey::Memory => {
                processes
                    .sort_by_key(|p| std::cmp::Reverse(p.used_memory_bytes.get().unwrap_or(0)));
            }
            SortKey::Trend => processes.sort_by(|a, b| {
                let ta = self.trend_bytes_per_min(a).unwrap_or(f64::MIN);
                let tb = self.trend_bytes_per_min(b).unwrap_or(f64::MIN);
                tb.total_cmp(&ta)
            }),
            SortKey::Pid => processes.sort_by_key(|p| p.pid),
            SortKey::User => processes.sort_by(|a, b| a.user.cmp(&b.user)),
            SortKey::Command => processes.sort_by(|a, b| a.command.cmp(&b.command)),
        }
        processes
    }
}
