//! The condensed findings for real and format-variant compute-sanitizer logs, snapshotted
//! as the JSON every command prints, plus the bounds: 10 000 reports, garbage, cuts.

use gpu_doctor_sanitize::{
    Tool, condense::MAX_DEFECTS, condense_bytes, condense_log, condense_log_named,
};
use std::fmt::Write as _;
use std::path::PathBuf;

fn fixture(rel: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/sanitize")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn findings_json(rel: &str) -> serde_json::Value {
    let name = rel.rsplit('/').next().unwrap();
    let findings = condense_log_named(&fixture(rel), name).expect("a sanitizer log");
    serde_json::to_value(findings).unwrap()
}

#[test]
fn memcheck_without_line_info() {
    insta::assert_json_snapshot!(findings_json("formats/memcheck-no-lineinfo.log"));
}

#[test]
fn racecheck_analysis_report() {
    insta::assert_json_snapshot!(findings_json("formats/racecheck-analysis.log"));
}

#[test]
fn racecheck_hazard_report_legacy() {
    insta::assert_json_snapshot!(findings_json("formats/racecheck-hazard-legacy.log"));
}

#[test]
fn cuda_memcheck_legacy_format() {
    insta::assert_json_snapshot!(findings_json("formats/cuda-memcheck-legacy.log"));
}

/// One report of the many-threads kind, as CUDA 13 prints it.
fn oob_report(out: &mut String, thread: u32, block: u32) {
    let offset = 4096 + 4 * (block * 256 + thread);
    let _ = write!(
        out,
        "========= Invalid __global__ write of size 4 bytes\n\
         =========     at fill(float *, int)+0x90 in /work/many_reports.cu:10\n\
         =========     by thread ({thread},0,0) in block ({block},0,0)\n\
         =========     Address 0x7f0000000{offset:04x} is out of bounds\n\
         =========     and is {} bytes after the nearest allocation at 0x7f0000000000 of size 4096 bytes\n\
         =========     Saved host backtrace up to driver entry point at kernel launch time\n\
         =========         Host Frame: [0x2dcdbf] in libcuda.so.1\n\
         =========         Host Frame: __device_stub__Z4fillPfi(float*, int) [0x9c0b] in many_reports\n\
         =========         Host Frame: main [0x9d10] in many_reports\n\
         =========\n",
        offset - 4096 + 1
    );
}

#[test]
fn ten_thousand_reports_condense_to_a_screen() {
    let mut log = String::from("========= COMPUTE-SANITIZER\n");
    for block in 0..64 {
        for thread in 0..256 {
            oob_report(&mut log, thread, block);
        }
    }
    log.push_str(
        "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API call to cudaDeviceSynchronize.\n\
         =========     Saved host backtrace up to driver entry point at error\n\
         =========         Host Frame: cudaDeviceSynchronize [0x1006f4] in many_reports\n\
         =========         Host Frame: main [0x9d40] in many_reports\n\
         =========\n\
         ========= ERROR SUMMARY: 16385 errors\n",
    );
    let findings = condense_log(log.as_bytes()).unwrap();
    assert_eq!(findings.len(), 2, "{findings:#?}");
    let oob = &findings[0];
    assert_eq!(oob.code.0, "GD601");
    assert!((oob.evidence[0].values["reports"] - 16384.0).abs() < 0.5);
    assert!(
        oob.message
            .contains("16384 reports: threads 0..255, blocks 0..63"),
        "{}",
        oob.message
    );
    assert!(
        oob.remedies[0]
            .action
            .contains("elements 1024..17407 of a 1024-element buffer"),
        "{}",
        oob.remedies[0].action
    );
    assert_eq!(findings[1].code.0, "GD607");
    // No truncation note: every counted error was printed.
    assert!(findings.iter().all(|f| f.code.0 != "GD610"));
}

#[test]
fn print_limit_is_noticed() {
    let mut log = String::new();
    for thread in 0..100 {
        oob_report(&mut log, thread, 0);
    }
    log.push_str("========= ERROR SUMMARY: 16384 errors\n");
    let findings = condense_log(log.as_bytes()).unwrap();
    let note = findings
        .iter()
        .find(|f| f.code.0 == "GD610")
        .expect("GD610");
    assert!(
        note.message
            .contains("counted 16384 errors but printed 100"),
        "{}",
        note.message
    );
}

#[test]
fn distinct_defects_are_capped() {
    let mut log = String::new();
    for line in 0..(MAX_DEFECTS as u32 + 50) {
        let _ = write!(
            log,
            "========= Invalid __global__ read of size 4 bytes\n\
             =========     at k(float *)+0x10 in k.cu:{line}\n\
             =========     by thread (0,0,0) in block (0,0,0)\n\
             =========     Address 0x10 is out of bounds\n\
             =========\n"
        );
    }
    let condenser = condense_bytes(log.as_bytes(), Some(Tool::Memcheck));
    assert_eq!(condenser.defects().len(), MAX_DEFECTS);
    assert_eq!(condenser.totals().ungrouped, 50);
    let findings = condense_log(log.as_bytes()).unwrap();
    let note = findings
        .iter()
        .find(|f| f.code.0 == "GD610")
        .expect("GD610");
    assert!(
        note.message.contains("50 reports of further defects"),
        "{}",
        note.message
    );
}

#[test]
fn text_that_is_not_a_sanitizer_log_is_refused() {
    assert!(condense_log(b"").is_none());
    assert!(
        condense_log(b"Traceback (most recent call last):\nRuntimeError: CUDA error\n").is_none()
    );
    // A row of equals signs in a banner is not a report.
    assert!(condense_log(b"=========\n==========\n").is_none());
}

#[test]
fn a_clean_run_is_recognised_with_no_findings() {
    let log = b"========= COMPUTE-SANITIZER\nhello\n========= ERROR SUMMARY: 0 errors\n";
    assert_eq!(condense_log(log), Some(vec![]));
}

/// A deterministic byte generator, so a failure can be replayed.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn garbage_never_panics() {
    let pieces: [&[u8]; 12] = [
        b"========= ",
        b"=========     ",
        b"Invalid __global__ write of size ",
        b"at k(int*)+0x",
        b" in f.cu:",
        b"by thread (",
        b"Address 0x",
        b"and is 99999999999999999999999 bytes after the nearest allocation at 0x1 of size ",
        b"Error: Race reported between Write access at ",
        b"Host Frame:",
        b"\n",
        b"\xff\xfe(,,)[0x]",
    ];
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..300 {
        let mut input = Vec::new();
        for _ in 0..(rng.next() % 200) {
            let r = rng.next();
            if r % 3 == 0 {
                input.push((r >> 8) as u8);
            } else {
                input.extend_from_slice(pieces[(r as usize >> 4) % pieces.len()]);
            }
        }
        let _ = condense_log(&input);
    }
}

#[test]
fn every_cut_of_every_fixture_parses() {
    for rel in [
        "formats/memcheck-no-lineinfo.log",
        "formats/racecheck-analysis.log",
        "formats/racecheck-hazard-legacy.log",
        "formats/cuda-memcheck-legacy.log",
    ] {
        let bytes = fixture(rel);
        for cut in 0..bytes.len() {
            let _ = condense_log(&bytes[..cut]);
        }
        // Cut mid-report, the report read so far still counts.
        let half = &bytes[..bytes.len() / 2];
        if let Some(findings) = condense_log(half) {
            assert!(findings.iter().all(|f| !f.message.is_empty()));
        }
    }
}

#[test]
fn very_long_lines_are_cut_not_kept() {
    let mut log =
        String::from("========= Invalid __global__ write of size 4 bytes\n=========     at ");
    log.push_str(&"k".repeat(1_000_000));
    log.push_str("+0x10 in f.cu:3\n=========\n");
    let findings = condense_log(log.as_bytes()).unwrap();
    assert_eq!(findings.len(), 1);
    let longest = findings[0]
        .evidence
        .iter()
        .map(|e| e.text.len())
        .max()
        .unwrap();
    assert!(
        longest <= gpu_doctor_sanitize::parse::MAX_LINE_BYTES,
        "{longest}"
    );
}

#[test]
fn reading_a_stream_gives_the_same_findings() {
    for rel in ["formats/memcheck-no-lineinfo.log", "h200/triton_oob.log"] {
        let bytes = fixture(rel);
        let streamed = gpu_doctor_sanitize::condense_read(
            std::io::BufReader::with_capacity(7, &bytes[..]),
            "x",
        )
        .unwrap();
        assert_eq!(streamed, condense_log_named(&bytes, "x"), "{rel}");
    }
    // An over-long line is cut, and the next line still parses.
    let mut log = "=".repeat(100_000);
    log.push_str("\n========= ERROR SUMMARY: 0 errors\n");
    let streamed = gpu_doctor_sanitize::condense_read(log.as_bytes(), "x").unwrap();
    assert_eq!(streamed, Some(vec![]));
}
