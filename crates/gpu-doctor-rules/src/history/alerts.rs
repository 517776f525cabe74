//! Findings over a window of history: leaks per process and per device, headroom, and the
//! GPU events (Xid, ECC, lost GPUs) in the window. Shared by `report`, `watch` and `serve`.

use super::headroom::headroom_finding;
use super::leak::{LeakConfig, LeakSubject, Point, detect_leak, leak_finding};
use crate::explain::xid::{XidClass, lookup};
use gpu_doctor_model::history::History;
use gpu_doctor_model::{Cause, Evidence, Finding, GpuEvent, GpuEventKind, GpuIndex, Severity};

/// Below this fraction of free memory at the end of the window, GD580 fires.
const MIN_FREE_FRACTION: f64 = 0.05;

/// A leak finding with the time it was first detectable, for marking charts.
pub struct Alert {
    pub finding: Finding,
    pub t_ms: Option<u64>,
}

/// Every finding the window supports, most severe first.
pub fn history_alerts(history: &History, config: &LeakConfig) -> Vec<Alert> {
    let mut alerts = Vec::new();
    for series in &history.processes {
        let points: Vec<Point> = series
            .points
            .iter()
            .map(|&(t_ms, bytes)| Point { t_ms, bytes })
            .collect();
        let headroom = headroom_at_end(history, series.gpu);
        if let Some(verdict) = detect_leak(&points, headroom, config) {
            let subject = LeakSubject {
                gpu: series.gpu,
                pid: Some(series.pid),
                command: series.command.clone(),
            };
            alerts.push(Alert {
                finding: leak_finding(&subject, &verdict),
                t_ms: first_detection(&points, headroom, config),
            });
        }
    }
    for (&gpu, points) in &history.devices {
        let series: Vec<Point> = points
            .iter()
            .filter_map(|p| {
                Some(Point {
                    t_ms: p.t_ms,
                    bytes: p.memory_used_bytes?,
                })
            })
            .collect();
        let already = alerts.iter().any(|a| a.finding.gpu == Some(gpu));
        // A device-level leak is reported only when no process on it explains it (processes
        // may be invisible from inside a container).
        if !already
            && let Some(verdict) = detect_leak(&series, headroom_at_end(history, gpu), config)
        {
            let subject = LeakSubject {
                gpu,
                pid: None,
                command: None,
            };
            alerts.push(Alert {
                finding: leak_finding(&subject, &verdict),
                t_ms: first_detection(&series, headroom_at_end(history, gpu), config),
            });
        }
        if let Some(last) = points.last()
            && let (Some(used), Some(total)) = (last.memory_used_bytes, last.memory_total_bytes)
        {
            let device = gpu_doctor_model::DeviceSample {
                index: gpu,
                memory_used_bytes: gpu_doctor_model::Reading::Value(used),
                memory_total_bytes: gpu_doctor_model::Reading::Value(total),
                ..Default::default()
            };
            if let Some(finding) = headroom_finding(&device, MIN_FREE_FRACTION) {
                alerts.push(Alert {
                    finding,
                    t_ms: Some(last.t_ms),
                });
            }
        }
    }
    for event in &history.events {
        if let Some(finding) = event_finding(event) {
            alerts.push(Alert {
                finding,
                t_ms: Some(event.timestamp_ms),
            });
        }
    }
    alerts.sort_by(|a, b| {
        b.finding
            .severity
            .cmp(&a.finding.severity)
            .then(a.t_ms.cmp(&b.t_ms))
    });
    alerts
}

/// Free memory on `gpu` at the end of the window.
fn headroom_at_end(history: &History, gpu: GpuIndex) -> Option<u64> {
    let last = history.devices.get(&gpu)?.last()?;
    Some(
        last.memory_total_bytes?
            .saturating_sub(last.memory_used_bytes?),
    )
}

/// The earliest time at which the leak test on a prefix of the series already fired, found
/// by bisection (the test is monotone enough in practice for a chart marker).
fn first_detection(points: &[Point], headroom: Option<u64>, config: &LeakConfig) -> Option<u64> {
    let (mut lo, mut hi) = (1usize, points.len());
    detect_leak(points, headroom, config)?;
    while lo < hi {
        let mid = usize::midpoint(lo, hi);
        if detect_leak(&points[..mid], headroom, config).is_some() {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    points.get(lo.saturating_sub(1)).map(|p| p.t_ms)
}

/// Xid, ECC and lost-GPU events as findings, with the codes and the Xid catalog that
/// `explain` uses for the same events in a kernel log.
pub fn event_finding(event: &GpuEvent) -> Option<Finding> {
    let at = Evidence {
        source: "event".into(),
        line: None,
        text: format!("{} at {} ms", event_label(&event.kind), event.timestamp_ms),
        values: std::collections::BTreeMap::new(),
    };
    let finding = match &event.kind {
        GpuEventKind::Xid { xid, detail } => {
            let entry = lookup(*xid);
            let (code, cause, severity) = match entry.map(|e| e.class) {
                Some(XidClass::App) => ("GD201", Cause::IllegalAccess, Severity::Warn),
                Some(XidClass::Bus) => ("GD202", Cause::HwXid, Severity::Error),
                Some(XidClass::Ecc) => ("GD203", Cause::HwXid, Severity::Error),
                Some(XidClass::Power) => ("GD205", Cause::HwThermalPower, Severity::Error),
                _ => ("GD200", Cause::HwXid, Severity::Error),
            };
            let meaning = entry
                .map(|e| e.description.clone())
                .or_else(|| detail.clone())
                .unwrap_or_else(|| "not in the Xid catalog".into());
            let action = entry.map_or(
                "follow NVIDIA's workflow for this Xid",
                super::super::explain::xid::XidEntry::action_text,
            );
            Finding::new(
                code,
                cause,
                severity,
                format!("GPU {} reported Xid {xid}: {meaning}", event.gpu),
            )
            .with_remedy(
                format!("First action from NVIDIA's Xid catalog: {action}"),
                Some("gpu-doctor explain --kernel".into()),
                None,
            )
        }
        GpuEventKind::EccUncorrected => Finding::new(
            "GD203",
            Cause::HwXid,
            Severity::Error,
            format!("GPU {} had an uncorrectable ECC error", event.gpu),
        )
        .with_remedy(
            "Drain the GPU and check its remapped rows and retired pages",
            Some("gpu-doctor check".into()),
            None,
        ),
        GpuEventKind::DeviceLost { reason } => Finding::new(
            "GD202",
            Cause::HwXid,
            Severity::Error,
            format!("GPU {} stopped answering: {reason}", event.gpu),
        )
        .with_remedy(
            "Check the kernel log for Xid 79 (fallen off the bus); the GPU needs a reset or the node a reboot",
            Some("gpu-doctor explain --kernel".into()),
            None,
        ),
        GpuEventKind::EccCorrected
        | GpuEventKind::ProcessStarted { .. }
        | GpuEventKind::ProcessExited { .. } => return None,
    };
    Some(finding.on_gpu(event.gpu).with_evidence(at))
}

fn event_label(kind: &GpuEventKind) -> String {
    match kind {
        GpuEventKind::Xid { xid, .. } => format!("Xid {xid}"),
        GpuEventKind::EccCorrected => "corrected ECC error".into(),
        GpuEventKind::EccUncorrected => "uncorrectable ECC error".into(),
        GpuEventKind::DeviceLost { .. } => "GPU lost".into(),
        GpuEventKind::ProcessStarted { pid } => format!("process {pid} started"),
        GpuEventKind::ProcessExited { pid } => format!("process {pid} exited"),
    }
}

/// Peak memory of a process in the window, for the report's tables.
pub fn peak(points: &[(u64, u64)]) -> u64 {
    points.iter().map(|&(_, b)| b).max().unwrap_or(0)
}
