//! Condenses a saved compute-sanitizer log and prints the findings as JSON, with the
//! parser's throughput on stderr: `cargo run --release -p gpu-doctor-sanitize --example
//! condense -- LOG [REPEAT]`. Used by `bench/sanitize/run.sh` to time the parser alone.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: condense LOG [REPEAT]");
        std::process::exit(2);
    };
    let repeat: u32 = args.next().and_then(|r| r.parse().ok()).unwrap_or(1).max(1);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let lines = bytes
        .iter()
        .fold(0usize, |n, &b| n + usize::from(b == b'\n')) as f64;
    let start = Instant::now();
    let mut findings = None;
    for _ in 0..repeat {
        findings = gpu_doctor_sanitize::condense_log_named(&bytes, &path);
    }
    let secs = start.elapsed().as_secs_f64() / f64::from(repeat);
    eprintln!(
        "parsed {lines} lines ({:.1} MB) in {:.4} s: {:.0} lines/s, {:.1} MB/s",
        bytes.len() as f64 / 1e6,
        secs,
        lines / secs,
        bytes.len() as f64 / 1e6 / secs
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&findings.unwrap_or_default()).unwrap_or_default()
    );
}
