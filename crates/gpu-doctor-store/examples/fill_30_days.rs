//! Fills a history store with 30 days of an 8-GPU machine sampled at 1 Hz, ending now, as the
//! recorder would leave it in steady state under the default retention: raw rows for the last
//! 6 h, 1-second aggregates for 48 h, 1-minute aggregates for the whole month.
//!
//! Samples older than 48 h would only survive as 1-minute aggregates, so they are fed at one a
//! minute (the aggregate row is the same size; its maximum is taken over one sample instead
//! of sixty). Everything goes through `Store::ingest`, retention included.
//!
//!     cargo run --release -p gpu-doctor-store --example fill_30_days -- /tmp/h.db

use gpu_doctor_model::{DeviceSample, GpuIndex, Pid, ProcessSample, Reading, Sample};
use gpu_doctor_store::Store;
use std::time::Instant;

const GPUS: u32 = 8;
const TOTAL: u64 = 150_754_820_096;

fn sample(t_ms: u64) -> Sample {
    let phase = (t_ms / 1000) as f64;
    let mut devices = Vec::new();
    let mut processes = Vec::new();
    for gpu in 0..GPUS {
        let wave = f64::midpoint((phase / 600.0 + f64::from(gpu)).sin(), 1.0);
        let used = (40.0e9 + 80.0e9 * wave) as u64;
        devices.push(DeviceSample {
            index: GpuIndex(gpu),
            memory_total_bytes: Reading::Value(TOTAL),
            memory_used_bytes: Reading::Value(used),
            utilization_gpu_percent: Reading::Value((60.0 + 40.0 * wave) as u32),
            temperature_celsius: Reading::Value((45.0 + 30.0 * wave) as u32),
            power_draw_milliwatts: Reading::Value((200_000.0 + 450_000.0 * wave) as u32),
            ..DeviceSample::default()
        });
        for job in 0..2u32 {
            processes.push(ProcessSample {
                gpu: GpuIndex(gpu),
                pid: Pid(10_000 + gpu * 10 + job),
                used_memory_bytes: Reading::Value(used / 2),
                user: Some(format!("user{job}")),
                command: Some(format!("python train.py --rank {gpu}")),
                ..ProcessSample::default()
            });
        }
    }
    Sample {
        timestamp_ms: t_ms,
        devices,
        processes,
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/gpu-doctor-30d.db".into());
    let _ = std::fs::remove_file(&path);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let start = now - 30 * 86_400_000;
    let dense_from = now - 48 * 3_600_000;
    let mut store = Store::open(std::path::Path::new(&path)).expect("open store");
    let t0 = Instant::now();
    let mut n = 0u64;
    let mut t = start;
    while t <= now {
        store.ingest(&sample(t)).expect("ingest");
        n += 1;
        t += if t < dense_from { 60_000 } else { 1_000 };
    }
    store.prune(now).expect("prune");
    store.flush().expect("flush");
    drop(store);
    let size: u64 = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{path}{s}")).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "filled {path}: {n} samples of {GPUS} GPUs in {:.1} s; database {:.1} MiB",
        t0.elapsed().as_secs_f64(),
        size as f64 / 1_048_576.0
    );
}
