//! A window of GPU history as plain series: what `report`, `watch` and the leak rules read,
//! whether it came from the history store, a recording or live samples.

use crate::{DeviceSample, GpuEvent, GpuIndex, Pid, Sample};
use std::collections::BTreeMap;

/// One device at one time (a raw sample, or an aggregate bucket: maxima for memory and
/// temperature, means for utilisation and power).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DevicePoint {
    pub t_ms: u64,
    pub memory_used_bytes: Option<u64>,
    pub memory_total_bytes: Option<u64>,
    pub utilization_gpu_percent: Option<f64>,
    pub temperature_celsius: Option<f64>,
    pub power_draw_watts: Option<f64>,
}

/// A process's memory over time on one GPU.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProcessSeries {
    pub gpu: GpuIndex,
    pub pid: Pid,
    pub user: Option<String>,
    pub command: Option<String>,
    /// (t_ms, used bytes; the bucket's maximum for aggregates)
    pub points: Vec<(u64, u64)>,
}

/// A window of history, from the store or from a recording, ready for analysis and charts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub since_ms: u64,
    pub until_ms: u64,
    /// Per GPU, oldest first.
    pub devices: BTreeMap<GpuIndex, Vec<DevicePoint>>,
    pub processes: Vec<ProcessSeries>,
    pub events: Vec<GpuEvent>,
}

impl History {
    /// Adds one sample (for recordings and live monitoring).
    pub fn push(&mut self, sample: &Sample) {
        let t = sample.timestamp_ms;
        if self.devices.is_empty() && self.processes.is_empty() {
            self.since_ms = t;
        }
        self.until_ms = self.until_ms.max(t);
        for d in &sample.devices {
            self.devices
                .entry(d.index)
                .or_default()
                .push(device_point(t, d));
        }
        for p in &sample.processes {
            let Some(used) = p.used_memory_bytes.get() else {
                continue;
            };
            match self
                .processes
                .iter_mut()
                .find(|s| s.gpu == p.gpu && s.pid == p.pid)
            {
                Some(series) => series.points.push((t, used)),
                None => self.processes.push(ProcessSeries {
                    gpu: p.gpu,
                    pid: p.pid,
                    user: p.user.clone(),
                    command: p.command.clone(),
                    points: vec![(t, used)],
                }),
            }
        }
    }

    /// Keeps only what is at or after `since_ms`.
    pub fn trim_before(&mut self, since_ms: u64) {
        self.since_ms = self.since_ms.max(since_ms);
        for points in self.devices.values_mut() {
            points.retain(|p| p.t_ms >= since_ms);
        }
        for series in &mut self.processes {
            series.points.retain(|&(t, _)| t >= since_ms);
        }
        self.processes.retain(|s| !s.points.is_empty());
        self.events.retain(|e| e.timestamp_ms >= since_ms);
    }
}

/// The chartable readings of one device sample.
pub fn device_point(t: u64, d: &DeviceSample) -> DevicePoint {
    DevicePoint {
        t_ms: t,
        memory_used_bytes: d.memory_used_bytes.get(),
        memory_total_bytes: d.memory_total_bytes.get(),
        utilization_gpu_percent: d.utilization_gpu_percent.get().map(f64::from),
        temperature_celsius: d.temperature_celsius.get().map(f64::from),
        power_draw_watts: d
            .power_draw_milliwatts
            .get()
            .map(|mw| f64::from(mw) / 1000.0),
    }
}
