//! Fuzzes the compute-sanitizer log parser and condenser: any bytes must give findings or
//! `None`, never a panic, in bounded time.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = gpu_doctor_sanitize::condense_log(data);
});
