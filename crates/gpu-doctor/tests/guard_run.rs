//! `gpu-doctor run --memory-limit SIZE [--enforce]` end to end: a real Python child with a
//! stand-in torch (`testdata/guard/fake_torch`), seen by the stand-in NVML driver through a
//! pid file the job writes (the scenario's `pid_file`), with the memory the test chooses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GIB: u64 = 1 << 30;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

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

/// Runs `gpu-doctor run` with a budget on the job `budget_job.py SECONDS`, which NVML shows
/// holding `gib` GiB on GPU 0 of one H200.
fn run_job(gib: u64, seconds: &str, flags: &[&str]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("job.pid");
    let scenario = serde_json::json!({
        "description": "run --memory-limit test: the job's pid comes from its pid file",
        "gpus": [{"uuid": "GPU-8a7c6967-6aa9-50d2-ec35-e6628d3ffd99", "pci_bus_id": "00000000:00:06.0"}],
        "processes": [{"pid_file": pid_file, "gpu": 0, "used_memory_bytes": gib * GIB}],
    });
    std::fs::write(dir.path().join("scenario.json"), scenario.to_string()).unwrap();
    let testdata = repo().join("testdata/guard");
    let out = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"))
        .env("NO_COLOR", "1")
        .env_remove("GPU_DOCTOR_SOURCE")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env_remove("XLA_CLIENT_MEM_FRACTION")
        .env_remove("XLA_PYTHON_CLIENT_MEM_FRACTION")
        .env("GPU_DOCTOR_NVML_LIB", fake_lib())
        .env("FAKE_NVML_SCENARIO", dir.path().join("scenario.json"))
        .env("GUARD_TEST_PID_FILE", &pid_file)
        .env("PYTHONPATH", testdata.join("fake_torch"))
        .arg("run")
        .args([
            "--max-attempts",
            "1",
            "--sample-interval",
            "50ms",
            "--kill-timeout",
            "2s",
        ])
        .arg("--run-dir")
        .arg(dir.path().join("run"))
        .args(flags)
        .arg("--")
        .arg("python3")
        .arg(testdata.join("budget_job.py"))
        .arg(seconds)
        .output()
        .expect("run gpu-doctor");
    (out, dir)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The findings block gpu-doctor prints last on stderr, from the first finding line on.
fn findings_block(stderr: &str) -> String {
    let start = stderr
        .find("\nerror[GD")
        .or_else(|| stderr.find("\nwarn[GD"))
        .map_or(stderr.len(), |i| i + 1);
    let block = &stderr[start..];
    // The run's summary follows the findings after a blank line.
    let end = block.find("\n\n").map_or(block.len(), |i| i + 1);
    block[..end].to_owned()
}

#[test]
fn the_frameworks_are_told_the_budget() {
    let (out, _dir) = run_job(10, "0", &["--memory-limit", "20GiB"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // 20 GiB less the context allowance (768 MiB) of an H200's 140.4 GiB, rounded down, on
    // both of the stand-in's devices.
    assert!(
        stdout.contains("torch fractions: [(0.137, 0), (0.137, 1)]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("XLA_PYTHON_CLIENT_MEM_FRACTION=0.137\n"),
        "{stdout}"
    );
    assert!(stdout.contains("XLA_PYTHON_CLIENT_PREALLOCATE=false\n"));
    assert!(stdout.contains("TF_FORCE_GPU_ALLOW_GROWTH=true\n"));
    // No MPS here, so no MPS limit.
    assert!(stdout.contains("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=None\n"));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("gpu-doctor: memory budget 20.0 GiB of 140.4 GiB (14.2%) per GPU\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("GD590"), "{stderr}");
}

#[test]
fn a_job_over_its_budget_is_stopped_with_a_finding() {
    let (out, dir) = run_job(30, "30", &["--memory-limit", "20GiB", "--enforce"]);
    let stderr = text(&out.stderr);
    // Python dies of the SIGTERM: the shell's 128 + 15.
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(!text(&out.stdout).contains("job done"));
    assert!(stderr.contains(
        "gpu-doctor: over budget: the job holds 30.0 GiB on GPU 0, over its budget of 20.0 GiB\n"
    ));
    let block = findings_block(&stderr);
    let ms = block.find(" ms after SIGTERM").map(|end| {
        let start = block[..end].rfind(' ').unwrap() + 1;
        block[start..end].to_owned()
    });
    let block = block.replace(
        &format!(" {} ms after", ms.unwrap_or_default()),
        " [N] ms after",
    );
    let pid = std::fs::read_to_string(dir.path().join("job.pid")).unwrap();
    let block = block.replace(&format!("process {pid} "), "process [PID] ");
    insta::assert_snapshot!("run_enforced_findings", block);
    // The summary says why the run ended: the budget, with the job's own peak.
    assert!(
        stderr.contains(
            "  stopped because: --enforce stopped it: it used 30.0 GiB against its budget of 20.0 GiB (see GD591)\n"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("oom_capacity       stop"), "{stderr}");
}

#[test]
fn without_enforce_over_budget_is_a_warning_and_the_job_finishes() {
    let (out, _dir) = run_job(30, "0.6", &["--memory-limit", "20GiB"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(text(&out.stdout).contains("job done"));
    assert!(
        stderr.contains(
            "warn[GD590] oom_capacity [GPU 0]: the job holds 30.0 GiB on GPU 0, over its budget of 20.0 GiB\n"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("GD591"));
}

#[test]
fn enforce_needs_a_limit_and_a_limit_needs_a_size() {
    let (out, _dir) = run_job(1, "0", &["--enforce"]);
    assert_eq!(out.status.code(), Some(2));
    let (out, _dir) = run_job(1, "0", &["--memory-limit", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`lots` is not a size such as 40GiB or 512MiB"));
}
