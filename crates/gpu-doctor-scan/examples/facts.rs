//! Development aid: prints what the scanner recognised in a file, one observation per line.
//!
//! `cargo run -p gpu-doctor-scan --example facts -- FILE`

use std::io::Write as _;

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: facts FILE");
        std::process::exit(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}: {e}", path.to_string_lossy());
            std::process::exit(2);
        }
    };
    let facts = gpu_doctor_scan::scan_bytes("input", &bytes);
    let mut out = std::io::stdout().lock();
    for o in &facts.observations {
        let kind = serde_json::to_string(&o.kind).unwrap_or_default();
        let _ = writeln!(out, "{:>5} {kind}", o.line);
    }
}
