//! The estimator against peak memory measured on an NVIDIA H200 (torch 2.11, transformers
//! 5.17): `testdata/fit/h200-calibration/<case>.json` holds what
//! `validation/fit/measure.py` printed there, `testdata/fit/configs/<case>.json` the model.
//! The issue's targets: median error at most 10 %, worst at most 25 %.

use gpu_doctor_fit::{Amp, Dtype, Mode, ModelSpec, Optimizer, Settings, estimate};
use serde_json::Value;
use std::path::Path;

fn settings_of(m: &Value) -> Settings {
    let precision = m["precision"].as_str().unwrap();
    Settings {
        mode: if m["mode"] == "train" {
            Mode::Train
        } else {
            Mode::Infer
        },
        batch: m["batch"].as_u64().unwrap(),
        seq: m["seq"].as_u64().unwrap(),
        new_tokens: m["new_tokens"].as_u64().unwrap(),
        dtype: if precision == "bf16" {
            Dtype::Bf16
        } else {
            Dtype::Fp32
        },
        amp: (precision == "amp-bf16").then_some(Amp::Bf16),
        optimizer: Optimizer::Adamw,
        checkpointing: m["checkpointing"].as_bool().unwrap(),
        zero: 0,
        gpus: 1,
    }
}

fn cases() -> Vec<(String, f64, f64, f64, f64)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fit");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("h200-calibration")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let spec = ModelSpec::from_config_file(&root.join("configs").join(&name)).unwrap();
        let e = estimate(&spec, &settings_of(&m));
        let measured = m["max_memory_allocated"].as_f64().unwrap();
        let measured_reserved = m["max_memory_reserved"].as_f64().unwrap();
        out.push((
            name,
            measured,
            e.peak_allocated_bytes as f64,
            measured_reserved,
            e.peak_reserved_bytes as f64,
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn predicted_peaks_are_within_the_issue_targets() {
    let cases = cases();
    assert!(cases.len() >= 10, "only {} calibration cases", cases.len());
    let mut errs: Vec<f64> = Vec::new();
    for (name, meas, pred, meas_r, pred_r) in &cases {
        let err = (pred - meas) / meas * 100.0;
        let err_r = (pred_r - meas_r) / meas_r * 100.0;
        eprintln!(
            "{name:32} measured {:8.0} MiB predicted {:8.0} MiB ({err:+5.1} %)   reserved {:8.0} vs {:8.0} ({err_r:+5.1} %)",
            meas / 1_048_576.0,
            pred / 1_048_576.0,
            meas_r / 1_048_576.0,
            pred_r / 1_048_576.0
        );
        errs.push(err.abs());
    }
    errs.sort_by(f64::total_cmp);
    let median = errs[errs.len() / 2];
    let worst = errs[errs.len() - 1];
    eprintln!("median |error| {median:.1} %, worst {worst:.1} %");
    // The issue's targets are 10 % and 25 %; on the data the formulas were checked against
    // they do far better (2.2 % and 8.6 %), so a regression shows long before the targets.
    assert!(median <= 5.0, "median error {median:.1} %");
    assert!(worst <= 12.0, "worst error {worst:.1} %");
}
