//! A 100 MB line without a newline, then an error: the scanner keeps only the start of the
//! long line (memory stays flat) and still finds the error on the next line. Its own test
//! binary, so the peak-memory reading is not disturbed by other tests.

use gpu_doctor_scan::{ObsKind, ScanOptions, Scanner};

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[test]
fn hundred_megabyte_line_is_cut_and_memory_stays_flat() {
    let before = peak_rss_kib();
    let mut s = Scanner::new(ScanOptions::default());
    s.begin_source("long");
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..100 {
        s.feed(&chunk);
    }
    let tail = b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    s.feed(tail);
    let facts = s.finish();
    assert_eq!(facts.long_lines, 1);
    assert_eq!(facts.bytes_scanned, 100 * (1 << 20) + tail.len() as u64);
    let obs = facts
        .observations
        .first()
        .expect("the error after the long line");
    assert!(matches!(&obs.kind, ObsKind::CudaError(e) if e.code == Some(700)));
    assert_eq!(obs.line, 2);
    if let (Some(b), Some(a)) = (before, peak_rss_kib()) {
        // 100 MB went through; the scanner may hold a 1 MiB chunk and a 64 KiB line.
        assert!(a - b < 16 * 1024, "peak RSS grew by {} KiB", a - b);
    }
}
