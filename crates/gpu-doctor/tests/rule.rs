//! `gpu-doctor rule CODE` and `gpu-doctor rule --all`, end to end.

use std::process::{Command, Output};

fn gpu_doctor(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("gpu-doctor runs")
}

#[test]
fn prints_a_rule() {
    let out = gpu_doctor(&["rule", "GD501"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    insta::assert_snapshot!("gd501", text);
    // By name, case-insensitively.
    let by_name = gpu_doctor(&["rule", "OOM-Fragmentation"]);
    assert_eq!(String::from_utf8_lossy(&by_name.stdout), text);
}

#[test]
fn every_explain_rule_is_listed_and_documented() {
    let out = gpu_doctor(&["rule", "--all", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema_version"], 1);
    let rules = doc["rules"].as_array().unwrap();
    let codes: Vec<&str> = rules.iter().filter_map(|r| r["code"].as_str()).collect();
    for code in [
        "GD200", "GD202", "GD500", "GD501", "GD502", "GD503", "GD510", "GD511", "GD540", "GD570",
    ] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
    let mut sorted = codes.clone();
    sorted.sort_unstable();
    assert_eq!(codes, sorted, "listed in code order");
    let text = gpu_doctor(&["rule", "--all"]);
    let listing = String::from_utf8_lossy(&text.stdout);
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("GD511") && l.contains("device-side-assert"))
    );
}

#[test]
fn unknown_rule_is_a_usage_error() {
    let out = gpu_doctor(&["rule", "GD999"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no rule `GD999`") && err.contains("rule --all"),
        "{err}"
    );
    let out = gpu_doctor(&["rule"]);
    assert_eq!(out.status.code(), Some(2));
}
