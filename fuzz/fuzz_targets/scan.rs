//! Fuzz target for the job-output scanner and the explain rules: any bytes, split at an
//! input-chosen point (so chunk boundaries fall anywhere), with small limits so the bounds
//! are exercised. Must never panic.
#![no_main]

use gpu_doctor_scan::{ScanOptions, Scanner};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(0, |b| usize::from(*b) % (data.len() + 1));
    let mut scanner = Scanner::new(ScanOptions {
        max_line_bytes: 512,
        keep_first: 4,
        keep_last: 4,
        chunk_bytes: 64,
    });
    scanner.begin_source("fuzz");
    scanner.feed(&data[..split]);
    scanner.feed(&data[split..]);
    let facts = scanner.finish();
    let _ = gpu_doctor_rules::explain::diagnose(&facts, None);
});
