//! `gpu-doctor fit` end to end: the rendered text and JSON of real runs, against named GPU
//! models (no driver needed) and against the GPUs of a recording (`--source replay:`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .current_dir(root())
        .arg("fit")
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GPU_DOCTOR_SOURCE")
        .output()
        .expect("run gpu-doctor")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn llama_amp_training_on_an_h200() {
    let out = fit(&[
        "--config",
        "testdata/fit/configs/llama1b-train-amp.json",
        "--batch",
        "4",
        "--seq",
        "1024",
        "--amp",
        "bf16",
        "--gpu-model",
        "H200",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn gpt2_that_does_not_fit_a_t4_gets_suggestions_and_exit_1() {
    let out = fit(&[
        "--config",
        "testdata/fit/configs/gpt2-train-fp32.json",
        "--batch",
        "64",
        "--seq",
        "1024",
        "--gpu-model",
        "t4",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn json_carries_the_documented_fields() {
    let out = fit(&[
        "--config",
        "testdata/fit/configs/llama1b-infer-bf16.json",
        "--mode",
        "infer",
        "--batch",
        "8",
        "--seq",
        "512",
        "--new-tokens",
        "128",
        "--dtype",
        "bf16",
        "--gpu-model",
        "A10",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema_version"], 1);
    for key in [
        "peak_allocated_bytes",
        "peak_reserved_bytes",
        "breakdown",
        "fits",
        "max_batch",
        "suggestions",
    ] {
        assert!(doc.get(key).is_some(), "missing {key}");
    }
    let kv = doc["breakdown"]["kv_cache"].as_u64().unwrap();
    assert!(kv > 0, "generation keeps a KV cache");
    insta::assert_json_snapshot!(doc);
}

#[test]
fn shape_flags_and_sharding() {
    let out = fit(&[
        "--params",
        "7B",
        "--layers",
        "32",
        "--hidden",
        "4096",
        "--heads",
        "32",
        "--kv-heads",
        "8",
        "--seq",
        "4096",
        "--dtype",
        "bf16",
        "--zero",
        "3",
        "--gpus",
        "8",
        "--gpu-model",
        "A100-80GB",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let weights = doc["breakdown"]["weights"].as_u64().unwrap();
    // 7e9 bf16 weights sharded over 8, plus two gathered layers: well under a full copy.
    assert!(weights < 7_000_000_000 * 2 / 4, "{weights}");
    assert_eq!(doc["model"]["params"], 7_000_000_000u64);
}

#[test]
fn local_gpus_from_a_recording() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .current_dir(root())
        .args([
            "--source",
            "replay:testdata/fit/eight-gpus.ndjson",
            "fit",
            "--config",
            "testdata/fit/configs/gpt2m-train-amp.json",
            "--batch",
            "16",
            "--seq",
            "1024",
            "--amp",
            "bf16",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn bad_input_is_a_tool_error_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(&cfg, r#"{"model_type": "mamba", "hidden_size": 768}"#).unwrap();
    let out = fit(&["--config", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("model type `mamba`"), "{err}");
    assert!(err.contains("hint: supported: gpt2, llama"), "{err}");
    let out = fit(&[
        "--layers",
        "2",
        "--hidden",
        "64",
        "--gpu-model",
        "nosuchgpu",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--heads"));
    let out = fit(&[
        "--layers",
        "2",
        "--hidden",
        "64",
        "--heads",
        "4",
        "--gpu-model",
        "nosuchgpu",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known: B200, H200"));
}
