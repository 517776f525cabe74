//! GD581: GPU memory that keeps growing — a leak, seen before it becomes an out-of-memory.
//!
//! ## What it does
//! Tests a memory series (per process and GPU, or per device) for steady growth after a
//! warm-up, and forecasts the time to out-of-memory at the current slope.
//!
//! ## Why is this bad?
//! A training loop that keeps references to tensors (`total_loss += loss` without `.item()`,
//! a list of outputs kept for logging, a cache keyed by step) grows by the same amount every
//! iteration and dies hours later with an OOM that looks like a capacity problem.
//!
//! ## How it decides
//! - The first `warmup` of the series is ignored: allocator caches, cuDNN workspaces and the
//!   optimizer's first step all grow memory once, then stop.
//! - The rest is cut into at most `buckets` time buckets and each bucket keeps its
//!   **minimum**: periodic evaluation spikes raise the peaks, a leak raises the floor.
//! - A Mann–Kendall test (with the tie correction, since plateaus repeat values exactly)
//!   must find an upward trend over the whole window (z ≥ `z_threshold`) **and** over its
//!   most recent half (z ≥ `recent_z_threshold`), which tells a plateau after warm-up apart
//!   from growth that is still going on.
//! - The Theil–Sen slope (median of pairwise slopes; robust to outliers) must exceed
//!   `min_slope_bytes_per_s`, and the growth over the window must exceed `min_growth_bytes`.
//!
//! ## How to fix
//! Find what keeps tensors alive: accumulate `loss.item()` rather than `loss`, detach what you
//! log, clear lists of outputs, and take two `torch.cuda.memory._dump_snapshot()`s a few
//! hundred steps apart, then `gpu-doctor snapshot diff A B` to see which call site grew.

use gpu_doctor_model::{Cause, Evidence, Finding, GpuIndex, Pid, Severity, units::format_bytes};

pub const CODE: &str = "GD581";

pub(crate) static DOC: crate::registry::RuleDoc = crate::registry::RuleDoc {
    code: CODE,
    name: "memory-leak-trend",
    cause: Some(Cause::OomLeak),
    summary: "A process's GPU memory keeps growing after warm-up: a leak, before it becomes an OOM",
    body: r"## What it does
Tests a memory series (per process and GPU, or per device) from live samples, a recording or
the history store for steady growth after a warm-up, and forecasts the time to out-of-memory
at the current slope. The first 10 s are ignored; the rest is cut into at most 60 buckets
that keep their minimum (evaluation spikes raise peaks, a leak raises the floor); a
Mann–Kendall test must find growth over the window (z ≥ 3) and over its recent half (z ≥ 2);
the Theil–Sen slope must exceed 512 KiB/s and the growth 64 MiB.

## Why is this bad?
A loop that keeps references to tensors grows by the same amount every iteration and dies
hours later with an out-of-memory error that looks like a capacity problem.

## Example
```
warn[GD581] oom_leak [GPU 0]: process 4242 (python train.py) on GPU 0 keeps growing by
960.0 MiB/min after warm-up; at this rate the GPU is full in 2.1 h
```

## How to fix
Accumulate `loss.item()` rather than `loss`, detach what you log, clear lists of outputs.
Take two memory snapshots a few hundred steps apart and compare them with
`gpu-doctor snapshot diff A B` to see which call site grew.
",
};

/// One point of a memory series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub t_ms: u64,
    pub bytes: u64,
}

/// Thresholds; the defaults flag a steady leak of a few MiB/s within a minute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeakConfig {
    /// Ignored at the start of the series.
    pub warmup_ms: u64,
    /// The shortest window (after warm-up) worth judging.
    pub min_window_ms: u64,
    /// Buckets the window is cut into (bounds the O(n²) tests).
    pub buckets: usize,
    pub z_threshold: f64,
    pub recent_z_threshold: f64,
    pub min_slope_bytes_per_s: f64,
    pub min_growth_bytes: f64,
}

impl Default for LeakConfig {
    fn default() -> Self {
        LeakConfig {
            warmup_ms: 10_000,
            min_window_ms: 15_000,
            buckets: 60,
            z_threshold: 3.0,
            recent_z_threshold: 2.0,
            min_slope_bytes_per_s: 512.0 * 1024.0,
            min_growth_bytes: 64.0 * 1024.0 * 1024.0,
        }
    }
}

/// A suspected leak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeakVerdict {
    /// Theil–Sen slope over the window after warm-up.
    pub slope_bytes_per_s: f64,
    /// Mann–Kendall z over the window and over its recent half.
    pub z: f64,
    pub recent_z: f64,
    /// Growth of the floor over the window.
    pub growth_bytes: f64,
    pub window_s: f64,
    pub current_bytes: u64,
    /// At the current slope, when the headroom runs out (None when the headroom is unknown).
    pub time_to_oom_s: Option<f64>,
}

/// Tests `points` (sorted by time) for steady growth. `headroom_bytes` is what is still free
/// on the device, for the time-to-OOM forecast.
pub fn detect_leak(
    points: &[Point],
    headroom_bytes: Option<u64>,
    config: &LeakConfig,
) -> Option<LeakVerdict> {
    let first = points.first()?.t_ms;
    let last = points.last()?.t_ms;
    let start = first.saturating_add(config.warmup_ms);
    if last <= start || last - start < config.min_window_ms {
        return None;
    }
    let floor = bucket_minimums(points, start, last, config.buckets.max(4));
    if floor.len() < 8 {
        return None;
    }
    let z = mann_kendall_z(&floor);
    let recent = &floor[floor.len() / 2..];
    let recent_z = mann_kendall_z(recent);
    if z < config.z_threshold || recent_z < config.recent_z_threshold {
        return None;
    }
    let slope_per_ms = theil_sen_slope(&floor);
    let slope = slope_per_ms * 1000.0;
    let window_s = (last - start) as f64 / 1000.0;
    let growth = slope * window_s;
    if slope < config.min_slope_bytes_per_s || growth < config.min_growth_bytes {
        return None;
    }
    let current_bytes = points.last()?.bytes;
    Some(LeakVerdict {
        slope_bytes_per_s: slope,
        z,
        recent_z,
        growth_bytes: growth,
        window_s,
        current_bytes,
        time_to_oom_s: headroom_bytes.map(|h| h as f64 / slope),
    })
}

/// The minimum of each time bucket, as (bucket mid-time in ms relative to `start`, bytes).
fn bucket_minimums(points: &[Point], start: u64, end: u64, buckets: usize) -> Vec<(f64, f64)> {
    let span = (end - start).max(1) as f64;
    let mut mins: Vec<Option<(f64, u64)>> = vec![None; buckets];
    for p in points.iter().filter(|p| p.t_ms >= start) {
        let i = (((p.t_ms - start) as f64 / span) * buckets as f64) as usize;
        let slot = &mut mins[i.min(buckets - 1)];
        let t = (p.t_ms - start) as f64;
        match slot {
            Some((_, b)) if *b <= p.bytes => {}
            _ => *slot = Some((t, p.bytes)),
        }
    }
    mins.into_iter()
        .flatten()
        .map(|(t, b)| (t, b as f64))
        .collect()
}

/// Mann–Kendall trend statistic as a z-score (positive: upward), with the tie correction.
fn mann_kendall_z(series: &[(f64, f64)]) -> f64 {
    let n = series.len();
    if n < 3 {
        return 0.0;
    }
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match series[j].1.partial_cmp(&series[i].1) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut values: Vec<f64> = series.iter().map(|p| p.1).collect();
    values.sort_by(f64::total_cmp);
    let mut tie_term = 0.0;
    let mut run = 1usize;
    for w in 1..=values.len() {
        if w < values.len() && values[w].total_cmp(&values[w - 1]).is_eq() {
            run += 1;
        } else {
            let t = run as f64;
            tie_term += t * (t - 1.0) * (2.0 * t + 5.0);
            run = 1;
        }
    }
    let nf = n as f64;
    let variance = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - tie_term) / 18.0;
    if variance <= 0.0 {
        return 0.0;
    }
    let s = s as f64;
    let corrected = if s > 0.0 {
        s - 1.0
    } else if s < 0.0 {
        s + 1.0
    } else {
        0.0
    };
    corrected / variance.sqrt()
}

/// Theil–Sen estimator: the median of all pairwise slopes (bytes per ms).
fn theil_sen_slope(series: &[(f64, f64)]) -> f64 {
    let mut slopes = Vec::with_capacity(series.len() * series.len() / 2);
    for i in 0..series.len() {
        for j in i + 1..series.len() {
            let dt = series[j].0 - series[i].0;
            if dt > 0.0 {
                slopes.push((series[j].1 - series[i].1) / dt);
            }
        }
    }
    if slopes.is_empty() {
        return 0.0;
    }
    let mid = slopes.len() / 2;
    let (_, median, _) = slopes.select_nth_unstable_by(mid, f64::total_cmp);
    *median
}

/// Who the series belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct LeakSubject {
    pub gpu: GpuIndex,
    /// None for the device as a whole.
    pub pid: Option<Pid>,
    pub command: Option<String>,
}

/// The GD581 finding for a verdict.
pub fn leak_finding(subject: &LeakSubject, verdict: &LeakVerdict) -> Finding {
    let who = match (&subject.pid, &subject.command) {
        (Some(pid), Some(cmd)) => format!("process {pid} ({})", short(cmd)),
        (Some(pid), None) => format!("process {pid}"),
        _ => "device memory".to_owned(),
    };
    let per_min = format_bytes((verdict.slope_bytes_per_s * 60.0) as u64);
    let forecast = match verdict.time_to_oom_s {
        Some(s) => format!("; at this rate the GPU is full in {}", human_duration(s)),
        None => String::new(),
    };
    let mut finding = Finding::new(
        CODE,
        Cause::OomLeak,
        Severity::Warn,
        format!(
            "{who} on GPU {} keeps growing by {per_min}/min after warm-up{forecast}",
            subject.gpu
        ),
    )
    .on_gpu(subject.gpu)
    .confidence(confidence(verdict))
    .with_remedy(
        "Find what keeps tensors alive between iterations: accumulate `loss.item()` instead of `loss`, detach what you log, clear lists of outputs",
        None,
        None,
    )
    .with_remedy(
        "Take two memory snapshots a few hundred steps apart and compare them",
        Some("gpu-doctor snapshot diff early.pickle late.pickle".into()),
        Some("torch.cuda.memory._record_memory_history(); ...; torch.cuda.memory._dump_snapshot(\"late.pickle\")".into()),
    );
    let mut evidence = Evidence {
        source: "memory series".into(),
        line: None,
        text: format!(
            "{} over {:.0} s after warm-up (Theil–Sen {}/s, Mann–Kendall z = {:.1}, recent half z = {:.1}); now {}",
            format_bytes(verdict.growth_bytes.max(0.0) as u64),
            verdict.window_s,
            format_bytes(verdict.slope_bytes_per_s as u64),
            verdict.z,
            verdict.recent_z,
            format_bytes(verdict.current_bytes)
        ),
        values: std::collections::BTreeMap::new(),
    };
    evidence.values.insert(
        "slope_bytes_per_second".into(),
        verdict.slope_bytes_per_s.round(),
    );
    evidence
        .values
        .insert("current_bytes".into(), verdict.current_bytes as f64);
    if let Some(pid) = subject.pid {
        evidence.values.insert("pid".into(), f64::from(pid.0));
    }
    if let Some(t) = verdict.time_to_oom_s {
        evidence
            .values
            .insert("time_to_oom_seconds".into(), t.round());
    }
    finding.evidence.push(evidence);
    finding
}

fn confidence(v: &LeakVerdict) -> f32 {
    // More evidence (a stronger trend over a longer window) → more confidence, capped.
    let strength = (v.z / 6.0).min(1.0) * (v.window_s / 120.0).min(1.0);
    ((0.6 + 0.35 * strength) * 100.0).round() as f32 / 100.0
}

fn short(cmd: &str) -> String {
    let mut s: String = cmd.chars().take(48).collect();
    if cmd.chars().count() > 48 {
        s.push('…');
    }
    s
}

/// `45 s`, `12 min`, `3.5 h`, `2.1 days`.
pub fn human_duration(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    /// A series at 5 Hz over `seconds`, bytes from `f(t_seconds)`.
    fn series(seconds: u64, f: impl Fn(f64) -> f64) -> Vec<Point> {
        (0..seconds * 5)
            .map(|i| {
                let t = i as f64 / 5.0;
                Point {
                    t_ms: i * 200,
                    bytes: f(t).max(0.0) as u64,
                }
            })
            .collect()
    }

    /// Deterministic noise in [-1, 1].
    fn noise(t: f64) -> f64 {
        ((t * 12.9898).sin() * 43758.5453).fract()
    }

    fn leak(points: &[Point]) -> Option<LeakVerdict> {
        detect_leak(points, Some(100 << 30), &LeakConfig::default())
    }

    #[test]
    fn steady_growth_is_flagged_within_a_minute() {
        // 2 GiB base, +20 MiB/s, some noise: flagged on 40 s of data.
        let s = series(40, |t| 2048.0 * MIB + 20.0 * MIB * t + 5.0 * MIB * noise(t));
        let v = leak(&s).expect("a leak");
        assert!((v.slope_bytes_per_s / MIB - 20.0).abs() < 2.0, "{v:?}");
        let tto = v.time_to_oom_s.unwrap();
        assert!((tto - 100.0 * 1024.0 / 20.0).abs() < 600.0, "{tto}");
    }

    #[test]
    fn warm_up_then_plateau_is_not_flagged() {
        // Grows fast for 25 s (caches, optimizer state), then flat for 60 s.
        let s = series(85, |t| {
            (2048.0 + 400.0 * t.min(25.0)) * MIB + 3.0 * MIB * noise(t)
        });
        assert_eq!(leak(&s), None);
    }

    #[test]
    fn periodic_evaluation_spikes_are_not_flagged() {
        // Flat 10 GiB with a 4 GiB spike for 3 s every 15 s.
        let s = series(120, |t| {
            let spike = if t % 15.0 < 3.0 { 4096.0 } else { 0.0 };
            (10240.0 + spike) * MIB
        });
        assert_eq!(leak(&s), None);
    }

    #[test]
    fn spikes_on_top_of_a_leak_still_flag_it() {
        let s = series(90, |t| {
            let spike = if t % 15.0 < 3.0 { 4096.0 } else { 0.0 };
            (10240.0 + spike + 8.0 * t) * MIB
        });
        assert!(leak(&s).is_some());
    }

    #[test]
    fn flat_noisy_series_is_not_flagged() {
        let s = series(120, |t| 30_000.0 * MIB + 50.0 * MIB * noise(t));
        assert_eq!(leak(&s), None);
    }

    #[test]
    fn too_short_or_empty_series_is_not_judged() {
        assert_eq!(leak(&[]), None);
        let s = series(12, |t| 100.0 * MIB * t);
        assert_eq!(leak(&s), None);
    }

    #[test]
    fn a_reserved_pool_that_jumps_once_is_not_a_leak() {
        // testdata/h200/leak-smi.csv: nvidia-smi memory.used every 200 ms while a loop kept
        // its losses alive. Inside the process, allocated memory grew by 320 MiB per 10 steps
        // (err-leak.txt), but the caching allocator reserved 2719 MiB at once and the loop
        // ended within it: what the driver sees is one jump and a plateau. Flagging it would
        // be a false positive at this level; the growth is visible in a memory snapshot.
        let csv = include_str!("../../../../testdata/h200/leak-smi.csv");
        let points: Vec<Point> = csv
            .lines()
            .skip(1)
            .enumerate()
            .filter_map(|(i, line)| {
                let mib: u64 = line
                    .split(", ")
                    .nth(1)?
                    .trim_end_matches(" MiB")
                    .parse()
                    .ok()?;
                Some(Point {
                    t_ms: i as u64 * 200,
                    bytes: mib << 20,
                })
            })
            .collect();
        assert_eq!(points.len(), 55);
        let config = LeakConfig {
            warmup_ms: 0,
            min_window_ms: 5_000,
            ..LeakConfig::default()
        };
        assert_eq!(detect_leak(&points, None, &config), None);
    }
}
