//! `gpu-doctor report`: memory, utilisation, temperature and power over a window, per GPU
//! and per process, with the alerts (leaks, headroom, Xid/ECC events) marked.
//!
//! Reads the history store (`--store PATH`, default per user) or a recording
//! (`--source replay:FILE`). Prints a summary and the findings; `--json` one object
//! (docs/report.md); `--html FILE` a self-contained page; `--png FILE` a chart image.

use crate::commands::{Context, SourceSpec};
use crate::exit::{ExitStatus, Hinted};
use crate::printer::{Style, findings_json, findings_text};
use crate::report_chart;
use clap::Args;
use gpu_doctor_model::history::{DevicePoint, History};
use gpu_doctor_model::units::{format_bytes, parse_duration};
use gpu_doctor_model::{Clock, GpuIndex, Severity, SystemClock};
use gpu_doctor_rules::history::alerts::peak;
use gpu_doctor_rules::history::{Alert, LeakConfig, history_alerts};
use gpu_doctor_source::{GpuSource, ReplaySource, SourceError};
use gpu_doctor_store::Store;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The window: this long before now (before the end, for a recording).
    #[arg(long, default_value = "2h", value_parser = parse_duration)]
    pub since: Duration,
    /// Only this GPU.
    #[arg(long)]
    pub gpu: Option<u32>,
    /// The history store to read (default: the per-user store that `record --store` writes).
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write a self-contained HTML page with the charts.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the charts as a PNG image.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: ReportArgs) -> anyhow::Result<ExitStatus> {
    let mut history = load(ctx, &args)?;
    if let Some(gpu) = args.gpu {
        history.devices.retain(|g, _| g.0 == gpu);
        history.processes.retain(|p| p.gpu.0 == gpu);
        history.events.retain(|e| e.gpu.0 == gpu);
    }
    if history.devices.is_empty() {
        return Err(Hinted::new(
            "no samples in the window",
            "record some first (`gpu-doctor record --store`), widen --since, or pass --source replay:FILE",
        ));
    }
    let alerts = history_alerts(&history, &LeakConfig::default());
    let findings: Vec<_> = alerts.iter().map(|a| a.finding.clone()).collect();
    if let Some(path) = &args.html {
        std::fs::write(path, report_chart::html(&history, &alerts)).map_err(|e| {
            Hinted::new(
                format!("cannot write {}: {e}", path.display()),
                "choose a writable path",
            )
        })?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.png {
        report_chart::png(&history, &alerts, path)?;
        eprintln!("wrote {}", path.display());
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report_json(&history, &alerts))?;
        writeln!(out)?;
    } else {
        let style = Style { color: ctx.color };
        out.write_all(summary_text(&history, style).as_bytes())?;
        if findings.is_empty() {
            writeln!(out, "\nNo alerts in the window.")?;
        } else {
            writeln!(out)?;
            out.write_all(findings_text(&findings, style).as_bytes())?;
        }
    }
    out.flush()?;
    Ok(if findings.iter().any(|f| f.severity >= Severity::Warn) {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    })
}

fn load(ctx: &Context, args: &ReportArgs) -> anyhow::Result<History> {
    let since_ms = u64::try_from(args.since.as_millis()).unwrap_or(u64::MAX);
    if let SourceSpec::Replay(path) = &ctx.source {
        let mut source = ReplaySource::open(path)?;
        let mut history = History::default();
        loop {
            match source.sample() {
                Ok(sample) => {
                    history.events.extend(source.drain_events()?);
                    history.push(&sample);
                }
                Err(SourceError::Exhausted) => break,
                Err(e) => return Err(e.into()),
            }
        }
        history.events.extend(source.drain_events()?);
        let end = history.until_ms;
        history.trim_before(end.saturating_sub(since_ms));
        return Ok(history);
    }
    let path = args.store.clone().unwrap_or_else(Store::default_path);
    if !path.exists() {
        return Err(Hinted::new(
            format!("no history store at {}", path.display()),
            "start the recorder (`gpu-doctor record --store`, or the systemd unit in contrib/), or pass --source replay:FILE",
        ));
    }
    let store = Store::open_read_only(&path).map_err(store_error)?;
    let now = SystemClock.now_ms();
    store
        .history(now.saturating_sub(since_ms), now, now, 2000)
        .map_err(store_error)
}

/// Store errors carry their own hint.
pub fn store_error(e: gpu_doctor_store::StoreError) -> anyhow::Error {
    match e.hint() {
        Some(hint) => Hinted::new(e.to_string(), hint),
        None => e.into(),
    }
}

struct GpuSummary {
    gpu: GpuIndex,
    samples: usize,
    memory_peak: Option<u64>,
    memory_total: Option<u64>,
    util_mean: Option<f64>,
    temp_max: Option<f64>,
    power_mean: Option<f64>,
}

fn summarise(gpu: GpuIndex, points: &[DevicePoint]) -> GpuSummary {
    let mean = |f: &dyn Fn(&DevicePoint) -> Option<f64>| {
        let v: Vec<f64> = points.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    GpuSummary {
        gpu,
        samples: points.len(),
        memory_peak: points.iter().filter_map(|p| p.memory_used_bytes).max(),
        memory_total: points.iter().rev().find_map(|p| p.memory_total_bytes),
        util_mean: mean(&|p| p.utilization_gpu_percent),
        temp_max: points
            .iter()
            .filter_map(|p| p.temperature_celsius)
            .reduce(f64::max),
        power_mean: mean(&|p| p.power_draw_watts),
    }
}

fn summary_text(history: &History, style: Style) -> String {
    let mut out = String::new();
    let span_s = history.until_ms.saturating_sub(history.since_ms) as f64 / 1000.0;
    let _ = writeln!(
        out,
        "{}  {:.0} s of history, {} GPU{}",
        style.bold("gpu-doctor report"),
        span_s,
        history.devices.len(),
        if history.devices.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        out,
        "\n{}",
        style.bold(&format!(
            "{:<4} {:>8} {:>24} {:>9} {:>9} {:>10}",
            "GPU", "SAMPLES", "MEMORY PEAK/TOTAL", "UTIL AVG", "TEMP MAX", "POWER AVG"
        ))
    );
    for (&gpu, points) in &history.devices {
        let s = summarise(gpu, points);
        let memory = match (s.memory_peak, s.memory_total) {
            (Some(p), Some(t)) => format!("{} / {}", format_bytes(p), format_bytes(t)),
            (Some(p), None) => format_bytes(p),
            _ => "n/a".into(),
        };
        let opt = |v: Option<f64>, unit: &str| {
            v.map_or_else(|| "n/a".into(), |v| format!("{v:.0}{unit}"))
        };
        let _ = writeln!(
            out,
            "{:<4} {:>8} {:>24} {:>9} {:>9} {:>10}",
            s.gpu.0,
            s.samples,
            memory,
            opt(s.util_mean, "%"),
            opt(s.temp_max, "°C"),
            opt(s.power_mean, " W")
        );
    }
    if !history.processes.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold(&format!(
                "{:<4} {:>8} {:>12} {:>12}  {}",
                "GPU", "PID", "PEAK", "LAST", "COMMAND"
            ))
        );
        let mut processes: Vec<_> = history.processes.iter().collect();
        processes.sort_by_key(|p| std::cmp::Reverse(peak(&p.points)));
        for p in processes.iter().take(20) {
            let last = p.points.last().map_or(0, |&(_, b)| b);
            let command: String = p
                .command
                .as_deref()
                .unwrap_or("?")
                .chars()
                .take(60)
                .collect();
            let _ = writeln!(
                out,
                "{:<4} {:>8} {:>12} {:>12}  {}",
                p.gpu.0,
                p.pid.0,
                format_bytes(peak(&p.points)),
                format_bytes(last),
                command
            );
        }
    }
    out
}

fn report_json(history: &History, alerts: &[Alert]) -> Value {
    let gpus: Vec<Value> = history
        .devices
        .iter()
        .map(|(&gpu, points)| {
            let s = summarise(gpu, points);
            json!({
                "index": s.gpu.0,
                "samples": s.samples,
                "memory_peak_bytes": s.memory_peak,
                "memory_total_bytes": s.memory_total,
                "utilization_mean_percent": s.util_mean,
                "temperature_max_celsius": s.temp_max,
                "power_mean_watts": s.power_mean,
            })
        })
        .collect();
    let processes: Vec<Value> = history
        .processes
        .iter()
        .map(|p| {
            json!({
                "gpu": p.gpu.0,
                "pid": p.pid.0,
                "user": p.user,
                "command": p.command,
                "memory_peak_bytes": peak(&p.points),
                "memory_last_bytes": p.points.last().map(|&(_, b)| b),
                "samples": p.points.len(),
            })
        })
        .collect();
    let mut extra = Map::new();
    extra.insert("since_ms".into(), history.since_ms.into());
    extra.insert("until_ms".into(), history.until_ms.into());
    extra.insert("gpus".into(), Value::Array(gpus));
    extra.insert("processes".into(), Value::Array(processes));
    let findings: Vec<_> = alerts.iter().map(|a| a.finding.clone()).collect();
    findings_json(&findings, extra)
}
