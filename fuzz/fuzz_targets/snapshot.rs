//! Fuzzes the snapshot pickle reader and the analyses behind it: any byte string must give a
//! snapshot or an error, never a panic, a hang or an allocation beyond the limits.
#![no_main]

use gpu_doctor_snapshot::{AnalyzeOptions, Limits, analyze, read_snapshot};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Small limits so a hostile input hits them quickly instead of exhausting the fuzzer.
    let limits = Limits {
        max_depth: 64,
        max_string_bytes: 1 << 20,
        max_retained_bytes: 64 << 20,
        max_stack: 1 << 16,
    };
    // With and without a known length: the length check and the truncation path differ.
    for len in [Some(data.len() as u64), None] {
        if let Ok(snap) = read_snapshot(data, len, limits, &mut |_| {}) {
            let _ = analyze(&snap, &AnalyzeOptions::default());
        }
    }
});
