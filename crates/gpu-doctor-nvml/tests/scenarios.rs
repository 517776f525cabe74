//! `NvmlSource` over the stand-in driver (`libfake_nvml.so`) and each shipped scenario.
//!
//! NVML's state is per process (the library keeps one driver state, and `FAKE_NVML_SCENARIO`
//! is read at `nvmlInit`), so each case runs the crate's `nvml-probe` binary in a child
//! process: it opens `NvmlSource` on the fake library, takes N samples, drains the events
//! after each, and prints all of it as JSON. The assertions are on that JSON, parsed back
//! into the model's types where a number matters.

use gpu_doctor_model::{
    DeviceSample, DeviceState, Inventory, ProcessSample, Reading, ThrottleReason,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `libfake_nvml.so`, built by cargo as this package's dev-dependency. Its cdylib lands in
/// `target/<profile>/deps/` beside this test binary (and in `target/<profile>/` when the
/// workspace is built).
fn fake_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps dir");
    let candidates = [
        deps.join("libfake_nvml.so"),
        deps.join("../libfake_nvml.so"),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| {
            panic!("libfake_nvml.so not found in {candidates:?}; run `cargo build -p fake-nvml`")
        })
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fake-nvml/scenarios")
        .join(format!("{name}.json"))
}

/// Runs the probe on `scenario_file` for `samples` samples, with an empty /proc so that
/// whatever runs on the test machine under the scenario's pids does not leak in.
fn run_probe(scenario_file: &Path, samples: u32, proc_root: Option<&Path>, lib: &Path) -> Output {
    let empty = tempfile::tempdir().unwrap();
    let proc_root = proc_root.unwrap_or(empty.path());
    Command::new(env!("CARGO_BIN_EXE_nvml-probe"))
        .args(["--samples", &samples.to_string(), "--lib"])
        .arg(lib)
        .arg("--proc-root")
        .arg(proc_root)
        .arg("--passwd")
        .arg(proc_root.join("passwd"))
        .env("FAKE_NVML_SCENARIO", scenario_file)
        .env_remove("GPU_DOCTOR_NVML_LIB")
        .output()
        .expect("run nvml-probe")
}

fn probe(name: &str, samples: u32) -> Value {
    let out = run_probe(&scenario(name), samples, None, &fake_lib());
    assert!(
        out.status.success(),
        "nvml-probe failed on {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("probe prints JSON")
}

fn inventory(doc: &Value) -> Inventory {
    serde_json::from_value(doc["inventory"].clone()).unwrap()
}

fn devices(doc: &Value, step: usize) -> Vec<DeviceSample> {
    serde_json::from_value(doc["steps"][step]["sample"]["devices"].clone()).unwrap()
}

fn processes(doc: &Value, step: usize) -> Vec<ProcessSample> {
    serde_json::from_value(doc["steps"][step]["sample"]["processes"].clone()).unwrap()
}

/// (event name, gpu, pid or xid) of a step's events.
fn events(doc: &Value, step: usize) -> Vec<(String, u64, Option<u64>)> {
    doc["steps"][step]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_owned(),
                e["gpu"].as_u64().unwrap(),
                e.get("pid")
                    .or_else(|| e.get("xid"))
                    .and_then(Value::as_u64),
            )
        })
        .collect()
}

fn ev(name: &str, gpu: u64, n: Option<u64>) -> (String, u64, Option<u64>) {
    (name.to_owned(), gpu, n)
}

/// The JSON with the wall-clock timestamps masked, for snapshots.
fn stable(doc: &Value) -> String {
    let text = serde_json::to_string_pretty(doc).unwrap();
    mask_timestamps(&text)
}

fn mask_timestamps(text: &str) -> String {
    // `"timestamp_ms": 1764441336000` → `"timestamp_ms": "[ts]"`, without a regex crate.
    let key = "\"timestamp_ms\": ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(key) {
        out.push_str(&rest[..at + key.len()]);
        rest = &rest[at + key.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str("\"[ts]\"");
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn one_idle_gpu() {
    let doc = probe("one-gpu-idle", 1);
    let inv = inventory(&doc);
    assert_eq!(inv.devices.len(), 1);
    assert_eq!(inv.cuda_driver_version, Reading::Value("13.0".into()));
    let d = &devices(&doc, 0)[0];
    assert_eq!(d.state, DeviceState::Ok);
    assert_eq!(d.memory_total_bytes, Reading::Value(150_754_820_096));
    assert_eq!(d.memory_reserved_bytes, Reading::Value(644_939_776));
    assert_eq!(d.memory_used_bytes, Reading::Value(0));
    assert_eq!(
        d.throttle_reasons,
        Reading::Value(vec![ThrottleReason::GpuIdle])
    );
    assert!(processes(&doc, 0).is_empty());
    insta::assert_snapshot!("one_gpu_idle", stable(&doc));
}

#[test]
fn one_busy_gpu_lists_its_process() {
    let doc = probe("one-gpu-busy", 1);
    let procs = processes(&doc, 0);
    assert_eq!(procs.len(), 1);
    assert_eq!(procs[0].pid.0, 4242);
    assert_eq!(procs[0].used_memory_bytes, Reading::Value(11_274_289_152));
    let d = &devices(&doc, 0)[0];
    assert_eq!(d.memory_used_bytes, Reading::Value(11_274_289_152));
    assert_eq!(d.utilization_gpu_percent, Reading::Value(97));
    assert_eq!(d.throttle_reasons, Reading::Value(vec![]));
    insta::assert_snapshot!("one_gpu_busy_sample", stable(&doc["steps"][0]["sample"]));
}

#[test]
fn eight_gpus_with_throttling_and_a_process_that_comes_and_goes() {
    let doc = probe("eight-gpus", 6);
    let inv = inventory(&doc);
    assert_eq!(inv.devices.len(), 8);
    let indices: Vec<u32> = inv.devices.iter().map(|d| d.index.0).collect();
    assert_eq!(indices, (0..8).collect::<Vec<_>>());
    let devs = devices(&doc, 0);
    assert_eq!(devs.len(), 8);
    let hot = devs[5].throttle_reasons.value().unwrap();
    assert!(hot.contains(&ThrottleReason::HwThermalSlowdown), "{hot:?}");
    assert!(hot.contains(&ThrottleReason::SwPowerCap), "{hot:?}");
    assert_eq!(devs[5].clock_sm_mhz, Reading::Value(1395));
    assert_eq!(
        devs[6].throttle_reasons,
        Reading::Value(vec![ThrottleReason::GpuIdle])
    );
    // The X server on GPU 7 is in both of NVML's lists: one entry.
    let x = processes(&doc, 0)
        .into_iter()
        .find(|p| p.pid.0 == 2210)
        .unwrap();
    assert_eq!(x.kind, gpu_doctor_model::ProcessKind::ComputeAndGraphics);
    // Sample k (1-based) sees tick k: pid 31500 is on GPU 3 for ticks 2..5.
    assert!(
        events(&doc, 0).is_empty(),
        "the first sample is the baseline"
    );
    assert_eq!(events(&doc, 1), vec![ev("process_started", 3, Some(31500))]);
    assert!(events(&doc, 2).is_empty());
    assert!(events(&doc, 3).is_empty());
    assert_eq!(events(&doc, 4), vec![ev("process_exited", 3, Some(31500))]);
    assert!(processes(&doc, 4).iter().all(|p| p.pid.0 != 31500));
    insta::assert_snapshot!("eight_gpus_inventory", stable(&doc["inventory"]));
}

#[test]
fn unsupported_readings_are_absent_not_zero() {
    let doc = probe("unsupported", 2);
    let inv = inventory(&doc);
    let info = &inv.devices[0];
    assert_eq!(info.serial, Reading::NoPermission);
    assert_eq!(info.temperature_slowdown_celsius, Reading::Unsupported);
    assert_eq!(info.pcie_max_link, Reading::Unsupported);
    for step in 0..2 {
        let d = &devices(&doc, step)[0];
        // v2 memory info is refused: v1 answers, and it has no `reserved`.
        assert_eq!(d.memory_total_bytes, Reading::Value(42_949_672_960));
        assert_eq!(d.memory_used_bytes, Reading::Value(2_667_577_344));
        assert_eq!(d.memory_reserved_bytes, Reading::Unsupported);
        assert_eq!(d.power_draw_milliwatts, Reading::Unsupported);
        assert_eq!(d.power_limit_milliwatts, Reading::Unsupported);
        assert_eq!(d.utilization_gpu_percent, Reading::Unsupported);
        assert_eq!(d.ecc_errors, Reading::Unsupported);
        assert_eq!(d.remapped_rows, Reading::Unsupported);
        assert_eq!(d.retired_pages, Reading::Unsupported);
        assert_eq!(d.throttle_reasons, Reading::Unsupported);
        assert_eq!(d.mig_enabled, Reading::Unsupported);
        assert!(
            matches!(d.clock_sm_mhz, Reading::Failed(_)),
            "{:?}",
            d.clock_sm_mhz
        );
        // Still answered: temperature.
        assert_eq!(d.temperature_celsius, Reading::Value(45));
    }
    let p = &processes(&doc, 0)[0];
    assert_eq!(p.used_memory_bytes, Reading::Unsupported);
    // Nowhere is an absent reading written as a number.
    let sample = &doc["steps"][1]["sample"]["devices"][0];
    for key in [
        "power_draw_milliwatts",
        "utilization_gpu_percent",
        "ecc_errors",
        "memory_reserved_bytes",
    ] {
        assert_eq!(sample[key]["absent"], "unsupported", "{key}");
    }
    insta::assert_snapshot!("unsupported_sample", stable(&doc["steps"][1]["sample"]));
}

#[test]
fn a_lost_gpu_is_reported_once_while_the_other_keeps_reporting() {
    let doc = probe("gpu-lost", 5);
    for step in 0..2 {
        assert!(
            devices(&doc, step)
                .iter()
                .all(|d| d.state == DeviceState::Ok)
        );
        assert!(events(&doc, step).is_empty());
    }
    for step in 2..5 {
        let devs = devices(&doc, step);
        assert_eq!(devs[0].state, DeviceState::Ok);
        assert_eq!(devs[0].memory_used_bytes, Reading::Value(42_949_672_960));
        let DeviceState::Lost { reason } = &devs[1].state else {
            panic!("GPU 1 not lost at step {step}: {:?}", devs[1].state);
        };
        assert!(reason.contains("GPU_IS_LOST"), "{reason}");
        assert!(matches!(devs[1].memory_used_bytes, Reading::Failed(_)));
        assert!(matches!(devs[1].temperature_celsius, Reading::Failed(_)));
        // The lost GPU's process is not listed, and not reported as exited either.
        let pids: Vec<u32> = processes(&doc, step).iter().map(|p| p.pid.0).collect();
        assert_eq!(pids, vec![5001]);
    }
    assert_eq!(
        events(&doc, 2),
        vec![ev("device_lost", 1, None), ev("xid", 1, Some(79))]
    );
    assert!(events(&doc, 3).is_empty(), "DeviceLost is given once");
    assert!(events(&doc, 4).is_empty());
    insta::assert_snapshot!("gpu_lost_sample", stable(&doc["steps"][2]));
}

#[test]
fn ecc_errors_and_xids_arrive_as_events_and_counts() {
    let doc = probe("ecc-uncorrectable", 4);
    assert_eq!(events(&doc, 0), vec![ev("ecc_corrected", 0, None)]);
    assert_eq!(
        events(&doc, 1),
        vec![ev("ecc_uncorrected", 0, None), ev("xid", 0, Some(48))]
    );
    assert_eq!(events(&doc, 2), vec![ev("xid", 0, Some(63))]);
    assert!(events(&doc, 3).is_empty());
    let before = &devices(&doc, 0)[0];
    let ecc = before.ecc_errors.value().unwrap();
    assert_eq!((ecc.volatile_corrected, ecc.volatile_uncorrected), (3, 0));
    assert_eq!(ecc.aggregate_corrected, 17);
    let after = &devices(&doc, 2)[0];
    let ecc = after.ecc_errors.value().unwrap();
    assert_eq!(
        (ecc.volatile_uncorrected, ecc.aggregate_uncorrected),
        (2, 2)
    );
    let rows = after.remapped_rows.value().unwrap();
    assert!(rows.pending && !rows.failure);
    assert_eq!(rows.uncorrectable, 1);
    assert!(!devices(&doc, 1)[0].remapped_rows.value().unwrap().pending);
}

#[test]
fn a_leaking_process_grows_every_sample() {
    let doc = probe("leak", 5);
    let mib = 1024 * 1024;
    let sizes: Vec<u64> = (0..5)
        .map(|s| {
            processes(&doc, s)
                .iter()
                .find(|p| p.pid.0 == 7300)
                .and_then(|p| p.used_memory_bytes.get())
                .unwrap()
        })
        .collect();
    let expected: Vec<u64> = (1..=5).map(|tick| 2048 * mib + tick * 512 * mib).collect();
    assert_eq!(sizes, expected);
    let steady: Vec<Option<u64>> = (0..5)
        .map(|s| {
            processes(&doc, s)
                .iter()
                .find(|p| p.pid.0 == 7301)
                .and_then(|p| p.used_memory_bytes.get())
        })
        .collect();
    assert!(steady.iter().all(|m| *m == Some(4096 * mib)));
}

#[test]
fn mig_mode_and_instances_show_on_processes() {
    let doc = probe("mig", 1);
    let d = &devices(&doc, 0)[0];
    assert_eq!(d.mig_enabled, Reading::Value(true));
    assert_eq!(d.utilization_gpu_percent, Reading::Unsupported);
    let instances: Vec<(u32, Option<u32>)> = processes(&doc, 0)
        .iter()
        .map(|p| (p.pid.0, p.mig_instance))
        .collect();
    assert_eq!(instances, vec![(8100, Some(2)), (8101, Some(3))]);
}

#[test]
fn mig_instances_are_listed_with_profile_and_memory() {
    // (GPU instance, compute instance, profile, UUID, total, used)
    type Row<'a> = (u32, u32, &'a str, &'a str, Option<u64>, Option<u64>);
    let doc = probe("mig", 2);
    let d = &devices(&doc, 1)[0];
    let listed: Vec<Row<'_>> = d
        .mig_instances
        .iter()
        .map(|m| {
            (
                m.gpu_instance_id,
                m.compute_instance_id,
                m.profile.as_str(),
                m.uuid.0.as_str(),
                m.memory_total_bytes.get(),
                m.memory_used_bytes.get(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                2,
                0,
                "3g.71gb",
                "MIG-4f1e2d3c-5b6a-5978-8695-a4b3c2d1e0f1",
                Some(76_235_669_504),
                Some(21_474_836_480)
            ),
            (
                3,
                0,
                "2g.35gb",
                "MIG-5a6b7c8d-9e0f-5a1b-8c2d-3e4f5a6b7c8d",
                Some(37_580_963_840),
                Some(8_589_934_592)
            ),
            (
                9,
                0,
                "1g.18gb",
                "MIG-6b7c8d9e-0f1a-5b2c-9d3e-4f5a6b7c8d9e",
                Some(18_253_611_008),
                Some(0)
            ),
        ]
    );
    // A GPU without MIG lists none, and its JSON has no `mig_instances` key.
    let idle = probe("one-gpu-idle", 1);
    assert!(devices(&idle, 0)[0].mig_instances.is_empty());
    assert!(
        idle["steps"][0]["sample"]["devices"][0]
            .get("mig_instances")
            .is_none()
    );
}

#[test]
fn process_details_come_from_proc() {
    let root = tempfile::tempdir().unwrap();
    let pid_dir = root.path().join("4242");
    std::fs::create_dir(&pid_dir).unwrap();
    std::fs::write(
        pid_dir.join("cmdline"),
        b"python3\0train.py\0--batch\x0064\0",
    )
    .unwrap();
    let id = "a".repeat(64);
    std::fs::write(
        pid_dir.join("cgroup"),
        format!("0::/system.slice/docker-{id}.scope\n"),
    )
    .unwrap();
    let uid = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&pid_dir).unwrap().uid()
    };
    std::fs::write(
        root.path().join("passwd"),
        format!("trainer:x:{uid}:{uid}::/home/trainer:/bin/sh\n"),
    )
    .unwrap();
    let out = run_probe(&scenario("one-gpu-busy"), 1, Some(root.path()), &fake_lib());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &processes(&doc, 0)[0];
    assert_eq!(p.user.as_deref(), Some("trainer"));
    assert_eq!(p.command.as_deref(), Some("python3 train.py --batch 64"));
    assert_eq!(p.container, Some(format!("docker://{id}")));
}

#[test]
fn a_missing_library_is_no_driver_with_a_hint() {
    let out = run_probe(
        &scenario("one-gpu-idle"),
        1,
        None,
        Path::new("/nonexistent/libnvidia-ml.so.1"),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "error: could not load the NVIDIA driver library (/nonexistent/libnvidia-ml.so.1)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: install the NVIDIA driver"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_library_that_is_not_nvml_is_no_driver() {
    // libc loads fine but has no nvmlInit_v2.
    let out = run_probe(&scenario("one-gpu-idle"), 1, None, Path::new("libc.so.6"));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the library is not NVML"), "{stderr}");
}

#[test]
fn a_driver_that_refuses_init_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let no_scenario = dir.path().join("missing.json");
    let out = run_probe(&no_scenario, 1, None, &fake_lib());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fake-nvml: cannot use scenario"),
        "{stderr}"
    );

    let mismatch = dir.path().join("mismatch.json");
    std::fs::write(
        &mismatch,
        r#"{"init_error":"lib_rm_version_mismatch","gpus":[]}"#,
    )
    .unwrap();
    let out = run_probe(&mismatch, 1, None, &fake_lib());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("driver/library version mismatch"),
        "{stderr}"
    );
}
