//! The exposition: a [`Snapshot`] encoded as `OpenMetrics` or Prometheus text.
//!
//! A `prometheus_client` [`Collector`] encodes the snapshot at scrape time; nothing is kept
//! in registered metric objects, so a GPU or a process that goes away leaves no stale
//! series behind. A metric whose [`Reading`] is absent is omitted, never written as 0: a
//! dashboard must show a gap where the driver had no answer. Per-process series are bounded
//! to the top K processes per GPU by memory plus one `other` aggregate.

use crate::state::{Snapshot, XidLabel};
use gpu_doctor_model::{
    DeviceInfo, DeviceSample, DeviceState, GpuIndex, Pid, ProcessSample, Reading, ThrottleReason,
};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

/// Longest `command` label value; longer command lines are cut (a label is not a log).
const MAX_COMMAND_LABEL_CHARS: usize = 64;

/// Which text format a scraper asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/openmetrics-text; version=1.0.0` (what Prometheus asks for first).
    OpenMetrics,
    /// The classic `text/plain; version=0.0.4` (curl, older scrapers).
    Prometheus,
}

impl Format {
    /// Picks the format from an `Accept` header: `OpenMetrics` only when asked for by name,
    /// the classic text otherwise (what a client that says nothing expects).
    pub fn from_accept(accept: Option<&str>) -> Format {
        match accept {
            Some(a)
                if a.to_ascii_lowercase()
                    .contains("application/openmetrics-text") =>
            {
                Format::OpenMetrics
            }
            _ => Format::Prometheus,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// What the encoder needs besides the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Exporter clock at scrape time (ms since the epoch), for the sample's age.
    pub now_ms: u64,
    /// Processes per GPU with their own series; the rest are summed into `pid="other"`.
    pub top_processes: usize,
}

/// Encodes `snapshot` in `format`.
pub fn render(snapshot: Arc<Snapshot>, options: RenderOptions, format: Format) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(SnapshotCollector { snapshot, options }));
    let mut out = String::with_capacity(16 * 1024);
    // Writing into a String cannot fail, and every label value is escaped by the encoder.
    let result = match format {
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry),
        Format::Prometheus => {
            prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)
        }
    };
    debug_assert!(result.is_ok());
    out
}

#[derive(Debug)]
struct SnapshotCollector {
    snapshot: Arc<Snapshot>,
    options: RenderOptions,
}

type Labels = Vec<(&'static str, String)>;

/// One metric family, written only when it has at least one series.
struct Family<'a> {
    name: &'a str,
    help: &'a str,
    unit: Option<Unit>,
    kind: MetricType,
    series: Vec<(Labels, f64)>,
}

impl<'a> Family<'a> {
    fn gauge(name: &'a str, help: &'a str, unit: Option<Unit>) -> Self {
        Family {
            name,
            help,
            unit,
            kind: MetricType::Gauge,
            series: Vec::new(),
        }
    }

    fn counter(name: &'a str, help: &'a str) -> Self {
        Family {
            kind: MetricType::Counter,
            ..Family::gauge(name, help, None)
        }
    }

    fn push(&mut self, labels: Labels, value: f64) {
        self.series.push((labels, value));
    }

    fn encode(&self, encoder: &mut DescriptorEncoder) -> fmt::Result {
        if self.series.is_empty() {
            return Ok(());
        }
        let mut metric =
            encoder.encode_descriptor(self.name, self.help, self.unit.as_ref(), self.kind)?;
        for (labels, value) in &self.series {
            let mut series = metric.encode_family(labels)?;
            if self.kind == MetricType::Counter {
                // Counters are whole counts (events, errors).
                series.encode_counter::<NoLabelSet, u64, u64>(&(*value as u64), None)?;
            } else if value.fract() == 0.0 && value.abs() < 9.0e15 {
                // Whole numbers (bytes, counts, flags) are written without a fraction,
                // exactly; f64 holds every integer below 2^53.
                series.encode_gauge(&(*value as i64))?;
            } else {
                series.encode_gauge(value)?;
            }
        }
        Ok(())
    }
}

fn info(encoder: &mut DescriptorEncoder, name: &str, help: &str, sets: &[Labels]) -> fmt::Result {
    if sets.is_empty() {
        return Ok(());
    }
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Info)?;
    for labels in sets {
        metric.encode_info(labels)?;
    }
    Ok(())
}

fn other(unit: &str) -> Unit {
    Unit::Other(unit.to_owned())
}

fn flag(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let s = &*self.snapshot;
        info(
            &mut encoder,
            "gpu_doctor_build",
            "The gpu-doctor build serving these metrics.",
            &[vec![("version", env!("CARGO_PKG_VERSION").to_owned())]],
        )?;
        for family in exporter_families(s, self.options.now_ms) {
            family.encode(&mut encoder)?;
        }
        let inventory_labels: Vec<Labels> = s
            .inventory
            .devices
            .iter()
            .map(|d| {
                let mut l = vec![
                    ("gpu", d.index.to_string()),
                    ("uuid", d.uuid.0.clone()),
                    ("name", d.name.clone()),
                ];
                if let Some(bus) = d.pci_bus_id.value() {
                    l.push(("pci_bus_id", bus.clone()));
                }
                if let Some(v) = s.inventory.driver_version.value() {
                    l.push(("driver_version", v.clone()));
                }
                if let Some(v) = s.inventory.cuda_driver_version.value() {
                    l.push(("cuda_driver_version", v.clone()));
                }
                l
            })
            .collect();
        info(
            &mut encoder,
            "gpu_doctor_gpu",
            "One series per GPU in the inventory, to join on `gpu`.",
            &inventory_labels,
        )?;
        if let Some(sample) = &s.sample {
            for family in device_families(s, &sample.devices) {
                family.encode(&mut encoder)?;
            }
            for family in process_families(&sample.processes, self.options.top_processes) {
                family.encode(&mut encoder)?;
            }
        }
        for family in diagnosis_families(s) {
            family.encode(&mut encoder)?;
        }
        Ok(())
    }
}

/// The exporter's own health: whether the source answers, and how old the data is.
fn exporter_families(s: &Snapshot, now_ms: u64) -> Vec<Family<'static>> {
    let mut up = Family::gauge(
        "gpu_doctor_source_up",
        "1 when the latest read of the GPU source worked, 0 when it failed.",
        None,
    );
    up.push(vec![], flag(s.last_error.is_none() && s.sample.is_some()));
    let mut age = Family::gauge(
        "gpu_doctor_sample_age",
        "Time since the latest good sample; scrapes never read the driver, so this is how stale the numbers are.",
        Some(Unit::Seconds),
    );
    if let Some(a) = s.age(now_ms) {
        age.push(vec![], a.as_secs_f64());
    }
    let mut duration = Family::gauge(
        "gpu_doctor_sample_duration",
        "How long the latest good sample took to read from the source.",
        Some(Unit::Seconds),
    );
    if let Some(d) = s.sample_duration {
        duration.push(vec![], d.as_secs_f64());
    }
    let mut samples = Family::counter("gpu_doctor_samples", "Good samples read from the source.");
    samples.push(vec![], s.samples_total as f64);
    let mut errors = Family::counter(
        "gpu_doctor_sample_errors",
        "Reads of the source that failed as a whole.",
    );
    errors.push(vec![], s.sample_errors_total as f64);
    vec![up, age, duration, samples, errors]
}

fn device_labels(info: Option<&DeviceInfo>, index: GpuIndex) -> Labels {
    vec![
        ("gpu", index.to_string()),
        ("uuid", info.map(|i| i.uuid.0.clone()).unwrap_or_default()),
        ("name", info.map(|i| i.name.clone()).unwrap_or_default()),
    ]
}

fn with(mut labels: Labels, key: &'static str, value: &str) -> Labels {
    labels.push((key, value.to_owned()));
    labels
}

/// Pushes a reading's value, or nothing when it is absent.
fn push_reading<T: Copy>(
    family: &mut Family,
    labels: &Labels,
    r: &Reading<T>,
    f: impl Fn(T) -> f64,
) {
    if let Some(v) = r.get() {
        family.push(labels.clone(), f(v));
    }
}

/// The `snake_case` name of a throttle reason, as in JSON.
fn reason_label(reason: ThrottleReason) -> &'static str {
    match reason {
        ThrottleReason::GpuIdle => "gpu_idle",
        ThrottleReason::ApplicationClocksSetting => "application_clocks_setting",
        ThrottleReason::SwPowerCap => "sw_power_cap",
        ThrottleReason::HwSlowdown => "hw_slowdown",
        ThrottleReason::SyncBoost => "sync_boost",
        ThrottleReason::SwThermalSlowdown => "sw_thermal_slowdown",
        ThrottleReason::HwThermalSlowdown => "hw_thermal_slowdown",
        ThrottleReason::HwPowerBrakeSlowdown => "hw_power_brake_slowdown",
        ThrottleReason::DisplayClockSetting => "display_clock_setting",
    }
}

const ALL_REASONS: [ThrottleReason; 9] = [
    ThrottleReason::GpuIdle,
    ThrottleReason::ApplicationClocksSetting,
    ThrottleReason::SwPowerCap,
    ThrottleReason::HwSlowdown,
    ThrottleReason::SyncBoost,
    ThrottleReason::SwThermalSlowdown,
    ThrottleReason::HwThermalSlowdown,
    ThrottleReason::HwPowerBrakeSlowdown,
    ThrottleReason::DisplayClockSetting,
];

fn device_families(s: &Snapshot, devices: &[DeviceSample]) -> Vec<Family<'static>> {
    let mut up = Family::gauge(
        "gpu_doctor_gpu_up",
        "1 when the GPU answers, 0 when it stopped answering (fell off the bus, GPU is lost).",
        None,
    );
    let mut used = Family::gauge(
        "gpu_doctor_memory_used",
        "Device memory in use.",
        Some(Unit::Bytes),
    );
    let mut total = Family::gauge(
        "gpu_doctor_memory_total",
        "Device memory in all.",
        Some(Unit::Bytes),
    );
    let mut free = Family::gauge(
        "gpu_doctor_memory_free",
        "Device memory free.",
        Some(Unit::Bytes),
    );
    let mut reserved = Family::gauge(
        "gpu_doctor_memory_reserved",
        "Device memory the driver keeps for itself.",
        Some(Unit::Bytes),
    );
    let mut util = Family::gauge(
        "gpu_doctor_utilization",
        "Fraction of the last sample period in which a kernel ran (nvidia-smi utilization.gpu / 100).",
        Some(other("ratio")),
    );
    let mut mem_util = Family::gauge(
        "gpu_doctor_memory_utilization",
        "Fraction of the last sample period in which device memory was read or written.",
        Some(other("ratio")),
    );
    let mut temp = Family::gauge(
        "gpu_doctor_temperature",
        "GPU core temperature.",
        Some(Unit::Celsius),
    );
    let mut slowdown = Family::gauge(
        "gpu_doctor_temperature_slowdown",
        "Temperature at which the GPU starts slowing its clocks.",
        Some(Unit::Celsius),
    );
    let mut power = Family::gauge(
        "gpu_doctor_power_draw",
        "Power drawn by the board.",
        Some(other("watts")),
    );
    let mut limit = Family::gauge(
        "gpu_doctor_power_limit",
        "Enforced power limit.",
        Some(other("watts")),
    );
    let mut sm = Family::gauge("gpu_doctor_clock_sm", "SM clock.", Some(other("hertz")));
    let mut memclk = Family::gauge(
        "gpu_doctor_clock_memory",
        "Memory clock.",
        Some(other("hertz")),
    );
    let mut throttle = Family::gauge(
        "gpu_doctor_throttle_active",
        "1 when this clock-event (throttle) reason holds the clocks down.",
        None,
    );
    let mut ecc_on = Family::gauge("gpu_doctor_ecc_enabled", "1 when ECC is on.", None);
    let mut ecc = Family::counter(
        "gpu_doctor_ecc_errors",
        "ECC errors: volatile since the driver loaded, aggregate over the GPU's life.",
    );
    let mut remapped = Family::gauge(
        "gpu_doctor_remapped_rows",
        "Memory rows remapped after errors (Ampere and later).",
        None,
    );
    let mut remap_pending = Family::gauge(
        "gpu_doctor_remapped_rows_pending",
        "1 when a row remap waits for a GPU reset.",
        None,
    );
    let mut remap_failure = Family::gauge(
        "gpu_doctor_remapped_rows_failure",
        "1 when a row remap failed: take the GPU out of service.",
        None,
    );
    let mut retired = Family::gauge(
        "gpu_doctor_retired_pages",
        "Pages retired after ECC errors (GPUs before Ampere).",
        None,
    );
    let mut retired_pending = Family::gauge(
        "gpu_doctor_retired_pages_pending",
        "1 when a page retirement waits for the next driver reload.",
        None,
    );
    let mut pcie_gen = Family::gauge(
        "gpu_doctor_pcie_link_generation",
        "Current PCIe link generation.",
        None,
    );
    let mut pcie_width = Family::gauge(
        "gpu_doctor_pcie_link_width",
        "Current PCIe link width (lanes).",
        None,
    );
    let mut pcie_max_gen = Family::gauge(
        "gpu_doctor_pcie_link_max_generation",
        "Highest PCIe generation the GPU and slot support.",
        None,
    );
    let mut pcie_max_width = Family::gauge(
        "gpu_doctor_pcie_link_max_width",
        "Widest PCIe link the GPU and slot support.",
        None,
    );

    for d in devices {
        let info = s.inventory.devices.iter().find(|i| i.index == d.index);
        let l = device_labels(info, d.index);
        up.push(l.clone(), flag(matches!(d.state, DeviceState::Ok)));
        if let Some(info) = info {
            push_reading(
                &mut slowdown,
                &l,
                &info.temperature_slowdown_celsius,
                f64::from,
            );
            if let Some(max) = info.pcie_max_link.get() {
                pcie_max_gen.push(l.clone(), f64::from(max.generation));
                pcie_max_width.push(l.clone(), f64::from(max.width));
            }
        }
        push_reading(&mut used, &l, &d.memory_used_bytes, |v| v as f64);
        push_reading(&mut total, &l, &d.memory_total_bytes, |v| v as f64);
        push_reading(&mut free, &l, &d.memory_free_bytes, |v| v as f64);
        push_reading(&mut reserved, &l, &d.memory_reserved_bytes, |v| v as f64);
        push_reading(&mut util, &l, &d.utilization_gpu_percent, |v| {
            f64::from(v) / 100.0
        });
        push_reading(&mut mem_util, &l, &d.utilization_memory_percent, |v| {
            f64::from(v) / 100.0
        });
        push_reading(&mut temp, &l, &d.temperature_celsius, f64::from);
        push_reading(&mut power, &l, &d.power_draw_milliwatts, |v| {
            f64::from(v) / 1000.0
        });
        push_reading(&mut limit, &l, &d.power_limit_milliwatts, |v| {
            f64::from(v) / 1000.0
        });
        push_reading(&mut sm, &l, &d.clock_sm_mhz, |v| f64::from(v) * 1.0e6);
        push_reading(&mut memclk, &l, &d.clock_memory_mhz, |v| {
            f64::from(v) * 1.0e6
        });
        if let Some(active) = d.throttle_reasons.value() {
            for reason in ALL_REASONS {
                throttle.push(
                    vec![
                        ("gpu", d.index.to_string()),
                        ("reason", reason_label(reason).to_owned()),
                    ],
                    flag(active.contains(&reason)),
                );
            }
        }
        push_reading(&mut ecc_on, &l, &d.ecc_enabled, flag);
        if let Some(e) = d.ecc_errors.get() {
            for (kind, scope, n) in [
                ("corrected", "volatile", e.volatile_corrected),
                ("uncorrected", "volatile", e.volatile_uncorrected),
                ("corrected", "aggregate", e.aggregate_corrected),
                ("uncorrected", "aggregate", e.aggregate_uncorrected),
            ] {
                ecc.push(
                    with(with(l.clone(), "type", kind), "scope", scope),
                    n as f64,
                );
            }
        }
        if let Some(r) = d.remapped_rows.get() {
            remapped.push(with(l.clone(), "type", "correctable"), r.correctable as f64);
            remapped.push(
                with(l.clone(), "type", "uncorrectable"),
                r.uncorrectable as f64,
            );
            remap_pending.push(l.clone(), flag(r.pending));
            remap_failure.push(l.clone(), flag(r.failure));
        }
        if let Some(r) = d.retired_pages.get() {
            retired.push(
                with(l.clone(), "cause", "single_bit_ecc"),
                r.single_bit_ecc as f64,
            );
            retired.push(
                with(l.clone(), "cause", "double_bit_ecc"),
                r.double_bit_ecc as f64,
            );
            retired_pending.push(l.clone(), flag(r.pending));
        }
        if let Some(link) = d.pcie_link.get() {
            pcie_gen.push(l.clone(), f64::from(link.generation));
            pcie_width.push(l.clone(), f64::from(link.width));
        }
    }
    vec![
        up,
        used,
        total,
        free,
        reserved,
        util,
        mem_util,
        temp,
        slowdown,
        power,
        limit,
        sm,
        memclk,
        throttle,
        ecc_on,
        ecc,
        remapped,
        remap_pending,
        remap_failure,
        retired,
        retired_pending,
        pcie_gen,
        pcie_width,
        pcie_max_gen,
        pcie_max_width,
    ]
}

/// A command line as a label: the first `MAX_COMMAND_LABEL_CHARS` characters, control
/// characters dropped.
fn command_label(command: Option<&String>) -> String {
    command
        .map(|c| {
            c.chars()
                .filter(|ch| !ch.is_control())
                .take(MAX_COMMAND_LABEL_CHARS)
                .collect()
        })
        .unwrap_or_default()
}

fn process_families(processes: &[ProcessSample], top: usize) -> Vec<Family<'static>> {
    let mut memory = Family::gauge(
        "gpu_doctor_process_memory_used",
        "Device memory a process holds: the top processes per GPU, then pid=\"other\" for the rest.",
        Some(Unit::Bytes),
    );
    let mut count = Family::gauge(
        "gpu_doctor_processes",
        "Processes on the GPU, all of them (not only the ones with their own series).",
        None,
    );
    // One entry per (gpu, pid): a process with graphics and compute contexts on one GPU is
    // listed twice by NVML but is one series. Processes whose memory is absent are counted,
    // not summed.
    let mut per_gpu: BTreeMap<GpuIndex, BTreeMap<Pid, (u64, &ProcessSample)>> = BTreeMap::new();
    let mut counts: BTreeMap<GpuIndex, BTreeSet<Pid>> = BTreeMap::new();
    for p in processes {
        counts.entry(p.gpu).or_default().insert(p.pid);
        if let Some(bytes) = p.used_memory_bytes.get() {
            let entry = per_gpu
                .entry(p.gpu)
                .or_default()
                .entry(p.pid)
                .or_insert((0, p));
            entry.0 = entry.0.saturating_add(bytes);
        }
    }
    for (gpu, pids) in counts {
        count.push(vec![("gpu", gpu.to_string())], pids.len() as f64);
    }
    for (gpu, by_pid) in per_gpu {
        let mut list: Vec<(u64, &ProcessSample)> = by_pid.into_values().collect();
        // Largest first; the pid breaks ties so the series set is stable between scrapes.
        list.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.pid.cmp(&b.1.pid)));
        for (bytes, p) in list.iter().take(top) {
            memory.push(
                vec![
                    ("gpu", gpu.to_string()),
                    ("pid", p.pid.to_string()),
                    ("command", command_label(p.command.as_ref())),
                    ("container", p.container.clone().unwrap_or_default()),
                ],
                *bytes as f64,
            );
        }
        if list.len() > top {
            let rest: u64 = list.iter().skip(top).map(|(b, _)| *b).sum();
            memory.push(
                vec![
                    ("gpu", gpu.to_string()),
                    ("pid", "other".to_owned()),
                    ("command", "other".to_owned()),
                    ("container", "other".to_owned()),
                ],
                rest as f64,
            );
        }
    }
    vec![memory, count]
}

fn diagnosis_families(s: &Snapshot) -> Vec<Family<'static>> {
    let mut xid = Family::counter(
        "gpu_doctor_xid",
        "Xid errors the driver reported since the exporter started.",
    );
    for ((gpu, label), n) in &s.xids {
        let x = match label {
            XidLabel::Xid(x) => x.to_string(),
            XidLabel::Other => "other".to_owned(),
        };
        xid.push(vec![("gpu", gpu.to_string()), ("xid", x)], *n as f64);
    }
    let mut finding = Family::gauge(
        "gpu_doctor_finding",
        "1 for each health finding that holds now (code, root cause, severity); gpu is empty for the machine.",
        None,
    );
    let mut seen = BTreeSet::new();
    for f in &s.findings {
        let key = (
            f.code.0.clone(),
            f.cause.as_str(),
            f.severity.to_string(),
            f.gpu.map(|g| g.to_string()).unwrap_or_default(),
        );
        if seen.insert(key.clone()) {
            finding.push(
                vec![
                    ("code", key.0),
                    ("cause", key.1.to_owned()),
                    ("severity", key.2),
                    ("gpu", key.3),
                ],
                1.0,
            );
        }
    }
    let mut leak = Family::gauge(
        "gpu_doctor_leak_suspect",
        "1 for a memory series that keeps growing after warm-up (GD581); pid is empty for the device as a whole.",
        None,
    );
    let mut slope = Family::gauge(
        "gpu_doctor_leak_slope",
        "Growth of a leak suspect's memory (Theil-Sen slope after warm-up).",
        Some(other("bytes_per_second")),
    );
    for l in &s.leaks {
        let labels = vec![
            ("gpu", l.gpu.to_string()),
            ("pid", l.pid.map(|p| p.to_string()).unwrap_or_default()),
        ];
        leak.push(labels.clone(), 1.0);
        slope.push(labels, l.slope_bytes_per_second);
    }
    vec![xid, finding, leak, slope]
}
