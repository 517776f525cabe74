//! `gpu-doctor status`: what is on the GPUs right now.
//!
//! One sample from the chosen source, rendered as a device table (memory with a bar,
//! utilisation, temperature, power, clocks, health in words) and a process table (who holds
//! what, in which container). `--json` prints the same facts as one documented object
//! (`docs/status.md`); `--watch SECONDS` redraws in place.

use crate::commands::Context;
use crate::exit::ExitStatus;
use crate::printer::Style;
use clap::Args;
use gpu_doctor_model::units;
use gpu_doctor_model::{
    DeviceInfo, DeviceSample, DeviceState, Inventory, ProcessSample, Reading, SCHEMA_VERSION,
    Sample,
};
use gpu_doctor_source::SourceError;
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON object (see docs/status.md) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Redraw every SECONDS seconds until interrupted (a replay steps through its samples).
    #[arg(long, value_name = "SECONDS")]
    pub watch: Option<f64>,
}

pub fn run(ctx: &Context, args: StatusArgs) -> anyhow::Result<ExitStatus> {
    let mut source = ctx.open_source()?;
    let inventory = source.inventory()?;
    let style = Style { color: ctx.color };
    // Whether an MPS server runs is a fact of this machine, not of the source: a replay
    // says nothing about it, so it is only looked for on the live driver.
    let mps = matches!(ctx.source, crate::commands::SourceSpec::Nvml { .. })
        .then(|| gpu_doctor_guard::mps::detect(&gpu_doctor_guard::ProcRoot::default()))
        .filter(gpu_doctor_guard::MpsStatus::running);
    let Some(period) = args.watch else {
        let sample = source.sample()?;
        print_once(&inventory, &sample, mps.as_ref(), args.json, style)?;
        // The process ends now, which releases the driver's handles; `nvmlShutdown` would
        // only add about 10 ms (measured on two H200s) to a one-shot status.
        std::mem::forget(source);
        return Ok(ExitStatus::Success);
    };
    let period = Duration::from_secs_f64(period.max(0.05));
    let mut first = true;
    loop {
        let sample = match source.sample() {
            Ok(sample) => sample,
            // A replay that has run out ends the watch; a live source never does.
            Err(SourceError::Exhausted) if !first => return Ok(ExitStatus::Success),
            Err(e) => return Err(e.into()),
        };
        if !args.json {
            // Home the cursor and clear, so the table redraws in place.
            print!("\x1b[H\x1b[2J");
        }
        print_once(&inventory, &sample, mps.as_ref(), args.json, style)?;
        first = false;
        std::thread::sleep(period);
    }
}

fn print_once(
    inventory: &Inventory,
    sample: &Sample,
    mps: Option<&gpu_doctor_guard::MpsStatus>,
    json: bool,
    style: Style,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let mut value = status_json(inventory, sample);
        // Present only while an MPS daemon or server runs (see docs/guard.md).
        if let (Some(mps), Value::Object(obj)) = (mps, &mut value) {
            obj.insert("mps".into(), serde_json::to_value(mps)?);
        }
        serde_json::to_writer_pretty(&mut out, &value)?;
        writeln!(out)?;
    } else {
        out.write_all(render(inventory, sample, style).as_bytes())?;
        if let Some(mps) = mps {
            writeln!(out, "\n{}", mps.summary())?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The `status --json` object: inventory facts and the sample's readings merged per device.
pub fn status_json(inventory: &Inventory, sample: &Sample) -> Value {
    let devices: Vec<Value> = sample
        .devices
        .iter()
        .map(|d| {
            let mut obj = Map::new();
            if let Some(info) = inventory.devices.iter().find(|i| i.index == d.index)
                && let Ok(Value::Object(info)) = serde_json::to_value(info)
            {
                obj.extend(info);
            }
            if let Ok(Value::Object(reading)) = serde_json::to_value(d) {
                for (key, value) in reading {
                    // The sample's total is the live one; keep the inventory's if the
                    // sample could not read it.
                    if key == "memory_total_bytes" && !value.is_number() && obj.contains_key(&key) {
                        continue;
                    }
                    obj.insert(key, value);
                }
            }
            Value::Object(obj)
        })
        .collect();
    let mut root = Map::new();
    root.insert("schema_version".into(), SCHEMA_VERSION.into());
    root.insert("timestamp_ms".into(), sample.timestamp_ms.into());
    for (key, reading) in [
        ("driver_version", &inventory.driver_version),
        ("nvml_version", &inventory.nvml_version),
        ("cuda_driver_version", &inventory.cuda_driver_version),
    ] {
        root.insert(
            key.into(),
            serde_json::to_value(reading).unwrap_or(Value::Null),
        );
    }
    root.insert("devices".into(), Value::Array(devices));
    root.insert(
        "processes".into(),
        serde_json::to_value(&sample.processes).unwrap_or(Value::Null),
    );
    Value::Object(root)
}

/// The human screen: a header line, the device table, the process table.
pub fn render(inventory: &Inventory, sample: &Sample, style: Style) -> String {
    let mut out = String::new();
    let version = |r: &Reading<String>| r.value().cloned().unwrap_or_else(|| "?".into());
    let _ = writeln!(
        out,
        "{}  driver {}  CUDA {}  {} GPU{}",
        style.bold("gpu-doctor status"),
        version(&inventory.driver_version),
        version(&inventory.cuda_driver_version),
        sample.devices.len(),
        if sample.devices.len() == 1 { "" } else { "s" }
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!(
            "{:<3} {:<20} {:<34} {:>4} {:>5} {:>13} {:>14}  {}",
            "GPU", "NAME", "MEMORY", "UTIL", "TEMP", "POWER", "CLOCKS SM/MEM", "HEALTH"
        ))
    );
    for device in &sample.devices {
        let info = inventory.devices.iter().find(|i| i.index == device.index);
        out.push_str(&device_row(info, device, style));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&mig_section(sample, style));
    if sample.processes.is_empty() {
        let _ = writeln!(out, "{}", style.dim("No processes on the GPUs."));
        return out;
    }
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!(
            "{:<3} {:>8} {:<10} {:>10}  {:<12} {}",
            "GPU", "PID", "USER", "MEMORY", "CONTAINER", "COMMAND"
        ))
    );
    let mut processes: Vec<&ProcessSample> = sample.processes.iter().collect();
    processes.sort_by_key(|p| {
        (
            p.gpu,
            std::cmp::Reverse(p.used_memory_bytes.get().unwrap_or(0)),
        )
    });
    for p in processes {
        let container = p
            .container
            .as_deref()
            .map_or_else(|| "-".to_owned(), |c| c.chars().take(12).collect());
        let command = p.command.as_deref().unwrap_or("?");
        let _ = writeln!(
            out,
            "{:<3} {:>8} {:<10} {:>10}  {:<12} {}",
            p.gpu.0,
            p.pid.0,
            truncate(p.user.as_deref().unwrap_or("?"), 10),
            reading_bytes(&p.used_memory_bytes),
            container,
            truncate(command, 60)
        );
    }
    out
}

fn device_row(info: Option<&DeviceInfo>, d: &DeviceSample, style: Style) -> String {
    let name = info.map_or("?", |i| i.name.as_str());
    let name = truncate(name.strip_prefix("NVIDIA ").unwrap_or(name), 20);
    if let DeviceState::Lost { reason } = &d.state {
        return format!(
            "{:<3} {:<20} {}",
            d.index.0,
            name,
            style.red(&format!("LOST: {reason}"))
        );
    }
    let total = d
        .memory_total_bytes
        .get()
        .or_else(|| info.and_then(|i| i.memory_total_bytes.get()));
    let memory = match (d.memory_used_bytes.get(), total) {
        (Some(used), Some(total)) if total > 0 => {
            let fraction = used as f64 / total as f64;
            let bar = bar(fraction, 10);
            let text = format!(
                "{bar} {:>5.1}/{:.1} GiB",
                used as f64 / units::GIB,
                total as f64 / units::GIB
            );
            let padded = format!("{text:<34}");
            if fraction > 0.95 {
                style.red(&padded)
            } else if fraction > 0.8 {
                style.yellow(&padded)
            } else {
                padded
            }
        }
        _ => format!("{:<34}", "n/a"),
    };
    let util = d
        .utilization_gpu_percent
        .get()
        .map_or_else(|| "n/a".into(), |u| format!("{u}%"));
    let temp = d
        .temperature_celsius
        .get()
        .map_or_else(|| "n/a".into(), |t| format!("{t}°C"));
    let power = match (
        d.power_draw_milliwatts.get(),
        d.power_limit_milliwatts.get(),
    ) {
        (Some(draw), Some(limit)) => format!("{}/{} W", draw / 1000, limit / 1000),
        (Some(draw), None) => format!("{} W", draw / 1000),
        _ => "n/a".into(),
    };
    let clocks = match (d.clock_sm_mhz.get(), d.clock_memory_mhz.get()) {
        (Some(sm), Some(mem)) => format!("{sm}/{mem} MHz"),
        (Some(sm), None) => format!("{sm} MHz"),
        _ => "n/a".into(),
    };
    let mut problems = health_words(d);
    if let (Some(link), Some(max)) = (d.pcie_link.get(), info.and_then(|i| i.pcie_max_link.get()))
        && (link.width < max.width || link.generation < max.generation)
    {
        problems.push(format!(
            "PCIe gen{} x{} (max gen{} x{})",
            link.generation, link.width, max.generation, max.width
        ));
    }
    let health = if problems.is_empty() {
        style.green("ok")
    } else {
        style.yellow(&problems.join(", "))
    };
    format!(
        "{:<3} {:<20} {memory} {util:>4} {temp:>5} {power:>13} {clocks:>14}  {health}",
        d.index.0, name
    )
}

/// The MIG devices of every GPU in MIG mode, with the processes in each; empty when no GPU
/// has MIG on.
pub fn mig_section(sample: &Sample, style: Style) -> String {
    let mut out = String::new();
    if sample.devices.iter().all(|d| d.mig_instances.is_empty()) {
        return out;
    }
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!(
            "{:<3} {:>3} {:>3} {:<10} {:<24} {:<42} {}",
            "GPU", "GI", "CI", "MIG", "MEMORY", "UUID", "PROCESSES"
        ))
    );
    for d in &sample.devices {
        for m in &d.mig_instances {
            let memory = match (m.memory_used_bytes.get(), m.memory_total_bytes.get()) {
                (Some(used), Some(total)) => format!(
                    "{:.1}/{:.1} GiB",
                    used as f64 / units::GIB,
                    total as f64 / units::GIB
                ),
                (None, Some(total)) => format!("?/{:.1} GiB", total as f64 / units::GIB),
                _ => "n/a".into(),
            };
            let pids: Vec<String> = sample
                .processes
                .iter()
                .filter(|p| p.gpu == d.index && p.mig_instance == Some(m.gpu_instance_id))
                .map(|p| format!("{} ({})", p.pid, reading_bytes(&p.used_memory_bytes)))
                .collect();
            let _ = writeln!(
                out,
                "{:<3} {:>3} {:>3} {:<10} {:<24} {:<42} {}",
                d.index.0,
                m.gpu_instance_id,
                m.compute_instance_id,
                m.profile,
                memory,
                m.uuid.0,
                if pids.is_empty() {
                    "-".to_owned()
                } else {
                    pids.join(", ")
                }
            );
        }
    }
    out.push('\n');
    out
}

/// What is wrong with a device, in a few words each; empty when nothing is.
pub fn health_words(d: &DeviceSample) -> Vec<String> {
    let mut words = Vec::new();
    if let Reading::Value(reasons) = &d.throttle_reasons {
        let problems: Vec<&str> = reasons
            .iter()
            .filter(|r| r.is_problem())
            .map(|r| r.describe())
            .collect();
        if !problems.is_empty() {
            words.push(format!("throttled: {}", problems.join(", ")));
        }
    }
    if let Some(ecc) = d.ecc_errors.value() {
        if ecc.volatile_uncorrected > 0 {
            words.push(format!("{} uncorrectable ECC", ecc.volatile_uncorrected));
        } else if ecc.aggregate_uncorrected > 0 {
            words.push(format!(
                "{} uncorrectable ECC (lifetime)",
                ecc.aggregate_uncorrected
            ));
        }
    }
    if let Some(rows) = d.remapped_rows.value() {
        if rows.failure {
            words.push("row remap FAILED".into());
        } else if rows.pending {
            words.push("row remap pending (reset)".into());
        }
    }
    if let Some(pages) = d.retired_pages.value()
        && pages.pending
    {
        words.push("page retirement pending".into());
    }
    words
}

fn bar(fraction: f64, width: usize) -> String {
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    format!("[{}{}]", "█".repeat(filled), "░".repeat(width - filled))
}

fn reading_bytes(r: &Reading<u64>) -> String {
    r.get().map_or_else(|| "n/a".into(), units::format_bytes)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
