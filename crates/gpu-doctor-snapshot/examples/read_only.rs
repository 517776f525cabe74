//! Developer tool: reads a snapshot and analyses it, printing each phase's wall time and the
//! process's peak and current resident memory (Linux), to see where a large file's time and
//! memory go without the CLI's rendering.
//!
//! `cargo run --release -p gpu-doctor-snapshot --example read_only -- FILE`

use std::time::Instant;

fn memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("VmHWM") || l.starts_with("VmRSS"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).ok_or("usage: read_only FILE")?;
    let t = Instant::now();
    let snap = gpu_doctor_snapshot::read_file(std::path::Path::new(&path), &mut |_| {})?;
    eprintln!("read:    {:>8.2?}  {}", t.elapsed(), memory());
    let t = Instant::now();
    let analysis =
        gpu_doctor_snapshot::analyze(&snap, &gpu_doctor_snapshot::AnalyzeOptions::default());
    eprintln!(
        "analyze: {:>8.2?}  {}  ({} trace entries, {} sites)",
        t.elapsed(),
        memory(),
        snap.device_traces.iter().map(Vec::len).sum::<usize>(),
        analysis.top_sites.len()
    );
    Ok(())
}
