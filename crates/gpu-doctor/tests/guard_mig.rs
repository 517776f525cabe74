//! MIG in `gpu-doctor status` through the stand-in driver: the instances of a GPU in MIG mode
//! (profile, ids, memory, UUID) and which processes run in each, in the text screen and in
//! `--json`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fake_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps dir");
    [
        deps.join("libfake_nvml.so"),
        deps.join("../libfake_nvml.so"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .expect("libfake_nvml.so is built as a dev-dependency")
}

/// `gpu-doctor VERB ARGS` on the shipped MIG scenario, with its pids moved above the kernel's largest
/// pid (2^22) so that no process of the test machine lends them a user or command.
fn status(args: &[&str]) -> Output {
    verb("status", args)
}

/// `verb ARGS` on the shipped MIG scenario, with the pids moved as for `status`.
fn verb(verb: &str, args: &[&str]) -> Output {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fake-nvml/scenarios/mig.json");
    let mut scenario: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shipped).unwrap()).unwrap();
    for (i, p) in scenario["processes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        p["pid"] = serde_json::json!(4_194_400 + i);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mig.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .env("NO_COLOR", "1")
        .env_remove("GPU_DOCTOR_SOURCE")
        .env("GPU_DOCTOR_NVML_LIB", fake_lib())
        .env("FAKE_NVML_SCENARIO", &file)
        .arg(verb)
        .args(args)
        .output()
        .expect("run gpu-doctor status")
}

#[test]
fn status_lists_mig_instances_and_their_processes() {
    let out = status(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // Without MPS on the test machine there is no MPS line; with one, it is not ours to snapshot.
    let text = text.split("\nMPS: ").next().unwrap_or_default().to_owned();
    insta::assert_snapshot!("status_mig", text);
}

#[test]
fn status_json_has_mig_instances_and_each_process_its_instance() {
    let out = status(&["--json"]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let instances = &doc["devices"][0]["mig_instances"];
    assert_eq!(instances.as_array().unwrap().len(), 3);
    assert_eq!(
        instances[1],
        serde_json::json!({
            "gpu_instance_id": 3,
            "compute_instance_id": 0,
            "profile": "2g.35gb",
            "uuid": "MIG-5a6b7c8d-9e0f-5a1b-8c2d-3e4f5a6b7c8d",
            "memory_total_bytes": 37_580_963_840u64,
            "memory_used_bytes": 8_589_934_592u64,
        })
    );
    let placed: Vec<(u64, u64)> = doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pid"].as_u64().unwrap(),
                p["mig_instance"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(placed, vec![(4_194_400, 2), (4_194_401, 3)]);
    assert_eq!(doc["devices"][0]["mig_enabled"], true);
}

#[test]
fn check_lists_the_mig_instances_of_a_gpu_in_mig_mode() {
    // No Python probes: only the GPU checks matter here.
    let out = verb("check", &["--json", "--python", "/nonexistent/python3"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "gpu0.mig_instances")
        .expect("a gpu0.mig_instances check");
    assert_eq!(check["status"], "pass");
    assert_eq!(
        check["message"],
        "3 MIG instance(s): 3g.71gb (GI 2, 20.0 GiB/71.0 GiB, 1 process(es)); \
         2g.35gb (GI 3, 8.0 GiB/35.0 GiB, 1 process(es)); 1g.18gb (GI 9, 0 B/17.0 GiB, 0 process(es))"
    );
}

#[test]
fn check_warns_about_an_mps_server_without_a_memory_limit() {
    // A machine tree whose /proc has an MPS control daemon started without a limit.
    let root = tempfile::tempdir().unwrap();
    let daemon = root.path().join("proc/812");
    std::fs::create_dir_all(&daemon).unwrap();
    std::fs::write(daemon.join("comm"), "nvidia-cuda-mps\n").unwrap();
    std::fs::write(daemon.join("cmdline"), "nvidia-cuda-mps-control\0-d\0").unwrap();
    std::fs::write(
        daemon.join("environ"),
        "PATH=/usr/bin\0CUDA_MPS_PIPE_DIRECTORY=/run/mps\0",
    )
    .unwrap();
    let root_arg = root.path().display().to_string();
    let out = verb(
        "check",
        &[
            "--json",
            "--python",
            "/nonexistent/python3",
            "--root",
            &root_arg,
        ],
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "gpus.mps")
        .expect("a gpus.mps check");
    assert_eq!(check["status"], "warn");
    assert_eq!(check["code"], "GD596");
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "GD596")
        .unwrap();
    assert_eq!(
        finding["evidence"][0]["text"],
        "MPS: control daemon pid 812; no server yet; memory limit none; active threads 100%"
    );
}
