//! `gpu-doctor explain` on a saved compute-sanitizer log gives `sanitize`'s findings.

use std::path::PathBuf;
use std::process::Command;

/// `gpu-doctor explain --json` on a saved H200 compute-sanitizer log: it must find a problem
/// (exit 1); its JSON document.
fn explain_h200_log(file: &str) -> serde_json::Value {
    let log = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/sanitize/h200")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .args(["explain", "--json"])
        .arg(&log)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn explain_condenses_a_saved_sanitizer_log() {
    let doc = explain_h200_log("oob_write.log");
    let first = &doc["findings"][0];
    assert_eq!(first["code"], "GD601");
    assert_eq!(
        first["message"],
        "Out-of-bounds __global__ write of 4 bytes in `scale` at oob_write.cu:10 (24 reports: threads 232..255, block 3), launched from `main`"
    );
    assert_eq!(first["evidence"][0]["source"], "oob_write.log");
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"GD571"), "{codes:?}");
}

/// racecheck's two report forms on the H200 (CUDA 13: `Error: Race reported between ...` and
/// `Error: Potential RAW hazard detected ...`) are races, cause `other`.
#[test]
fn explain_reads_racecheck_logs_of_both_forms() {
    for (file, message) in [
        (
            "race_shared.log",
            "Shared-memory race in `last_writer` on the write at race_shared.cu:9 by several threads (510 hazards)",
        ),
        (
            "missing_sync-hazard.head.log",
            "Shared-memory RAW hazard in `reverse` between the write at missing_sync.cu:11 and the read at missing_sync.cu:13 (25 hazards), launched from `main`",
        ),
    ] {
        let doc = explain_h200_log(file);
        let first = &doc["findings"][0];
        assert_eq!(first["code"], "GD604", "{file}");
        assert_eq!(first["cause"], "other", "{file}");
        assert_eq!(first["message"], message, "{file}");
    }
}
