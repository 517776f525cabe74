//! Shared by the binary's integration tests: the built binary, and the stand-in NVML
//! driver with a scenario.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `gpu-doctor` binary with a clean, colourless environment.
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.env_remove("GPU_DOCTOR_SOURCE")
        .env_remove("GPU_DOCTOR_NVML_LIB")
        .env_remove("FAKE_NVML_SCENARIO")
        .env("NO_COLOR", "1");
    cmd
}

/// `libfake_nvml.so`, built by cargo as a dev-dependency of this package.
pub fn fake_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps dir");
    for candidate in [
        deps.join("libfake_nvml.so"),
        deps.join("../libfake_nvml.so"),
    ] {
        if candidate.exists() {
            return candidate;
        }
    }
    panic!(
        "libfake_nvml.so not found next to {}; run `cargo build -p fake-nvml`",
        deps.display()
    );
}

pub fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fake-nvml/scenarios")
        .join(format!("{name}.json"))
}

/// The binary reading GPUs through the stand-in driver playing `name`.
pub fn with_scenario(name: &str) -> Command {
    let mut cmd = bin();
    cmd.env("GPU_DOCTOR_NVML_LIB", fake_lib())
        .env("FAKE_NVML_SCENARIO", scenario(name));
    cmd
}

/// Replaces what changes from run to run (timestamps, this machine's pids) for snapshots.
pub fn settle_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key.ends_with("_ms") && v.is_number() {
                    *v = serde_json::Value::String("[ms]".into());
                } else {
                    settle_json(v);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(settle_json),
        _ => {}
    }
}
