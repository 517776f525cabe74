//! `gpu-doctor explain` on a saved compute-sanitizer log gives `sanitize`'s findings.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn explain_condenses_a_saved_sanitizer_log() {
    let log = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/sanitize/h200/oob_write.log");
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .args(["explain", "--json"])
        .arg(&log)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
