//! `gpu-doctor check` end to end: the built binary over fake machines (a `/proc`, `/dev`,
//! `/sys` and library tree in a temporary folder, passed as `--root`), stand-in torch
//! packages in a real venv, the stand-in NVML driver for hardware faults, and a kernel log.

#[path = "check_support.rs"]
mod support;

use serde_json::Value;
use support::*;

fn statuses(json: &Value) -> Vec<(String, String)> {
    json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "pass" && c["status"] != "skip")
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn check(c: &Value, id: &str) -> Value {
    c["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == id)
        .unwrap_or_else(|| panic!("no check {id}"))
        .clone()
}

#[test]
fn a_machine_with_no_gpu_no_driver_and_no_python_passes_and_says_so() {
    let m = FakeMachine::new(&Machine::default());
    let dir = &m.dir;
    let out = m.check(&[], &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = scrub(&stdout(&out), dir.path());
    assert!(text.contains("no NVIDIA GPU and no NVIDIA driver on this machine"));
    assert!(text.contains("no `python3` on PATH"));
    insta::with_settings!({filters => FILTERS.to_vec()}, {
        insta::assert_snapshot!("no_gpu_text", text);
    });
}

#[test]
fn a_cpu_torch_on_a_gpu_machine_fails_with_the_cuda_wheel_to_install() {
    let m = FakeMachine::new(&Machine {
        proc_version: Some("proc-version-580.txt"),
        lib_version: Some("580.159.04"),
        pci_gpu: true,
        ..Machine::default()
    });
    let dir = &m.dir;
    let path = m.path_with_python("torch-2.3.0-cpu");
    let out = m.check(&["--json"], &[("PATH", path)]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["schema_version"], 1);
    let cuda_build = check(&json, "torch.cuda_build");
    assert_eq!(cuda_build["status"], "fail");
    assert_eq!(cuda_build["code"], "GD404");
    // Driver 580 runs CUDA 13.0; torch 2.3's newest CUDA wheel is cu121.
    assert_eq!(
        cuda_build["fix"],
        "pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/cu121"
    );
    assert_eq!(json["findings"][0]["cause"], "env_torch_cpu_build");
    assert_eq!(check(&json, "driver.version_mismatch")["status"], "pass");
    let text = scrub(&serde_json::to_string_pretty(&json).unwrap(), dir.path());
    insta::with_settings!({filters => FILTERS.to_vec()}, {
        insta::assert_snapshot!("cpu_torch_json", text);
    });
}

#[test]
fn a_cu121_torch_on_driver_470_says_which_driver_or_wheel_it_needs() {
    let m = FakeMachine::new(&Machine {
        proc_version: Some("proc-version-470.txt"),
        lib_version: Some("470.182.03"),
        pci_gpu: true,
        ..Machine::default()
    });
    let dir = &m.dir;
    let path = m.path_with_python("torch-2.3.0-cu121");
    let out = m.check(&[], &[("PATH", path)]);
    assert_eq!(out.status.code(), Some(1));
    let text = scrub(&stdout(&out), dir.path());
    assert!(
        text.contains("driver 470.182.03 runs CUDA ≤ 11.4; torch 2.3.0+cu121 needs ≥ 525.60.13"),
        "{text}"
    );
    assert!(
        text.contains(
            "pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/cu118"
        )
    );
    insta::with_settings!({filters => FILTERS.to_vec()}, {
        insta::assert_snapshot!("torch_cu121_driver_470_text", text);
    });
}

#[test]
fn mismatch_stub_nodes_variables_and_xids_each_fail_their_check() {
    let m = FakeMachine::new(&Machine {
        proc_version: Some("proc-version-580.txt"),
        // User-space libraries from a newer driver than the loaded module.
        lib_version: Some("580.95.05"),
        pci_gpu: true,
        uvm_node: false,
        stub_toolkit: true,
    });
    let dir = &m.dir;
    let stubs = m.root.join("usr/local/cuda/targets/x86_64-linux/lib/stubs");
    let out = m.check(
        &["--json"],
        &[
            ("LD_LIBRARY_PATH", format!("{}:/opt/other", stubs.display())),
            ("CUDA_VISIBLE_DEVICES", String::new()),
            ("CUDA_DEVICE_ORDER", "BUS_ID".into()),
            ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segment:True".into()),
            (
                "GPU_DOCTOR_KERNEL_LOG",
                testdata("env/kernel-xid.log").display().to_string(),
            ),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let bad = statuses(&json);
    let ids: Vec<&str> = bad.iter().map(|(i, _)| i.as_str()).collect();
    for id in [
        "driver.version_mismatch",
        "driver.stub",
        "driver.device_nodes",
        "gpus.nvml",
        "env.cuda_visible_devices",
        "env.cuda_device_order",
        "env.pytorch_cuda_alloc_conf",
        "kernel.xid",
        "kernel.xid.13",
    ] {
        assert!(ids.contains(&id), "{id} did not fail: {bad:?}");
    }
    assert_eq!(
        check(&json, "driver.stub")["fix"],
        "export LD_LIBRARY_PATH=/opt/other"
    );
    assert_eq!(
        check(&json, "kernel.xid")["status"],
        "fail",
        "Xid 79 is a hardware Xid"
    );
    assert_eq!(
        check(&json, "kernel.xid.13")["status"],
        "warn",
        "Xid 13 is an application Xid"
    );
    let text = scrub(&serde_json::to_string_pretty(&json).unwrap(), dir.path());
    insta::with_settings!({filters => FILTERS.to_vec()}, {
        insta::assert_snapshot!("faults_json", text);
    });
}

#[test]
fn hardware_faults_from_the_stand_in_nvml_driver() {
    let m = FakeMachine::new(&Machine {
        proc_version: Some("proc-version-580.txt"),
        lib_version: Some("580.159.04"),
        pci_gpu: true,
        ..Machine::default()
    });
    let dir = &m.dir;
    let env = [
        ("GPU_DOCTOR_NVML_LIB", fake_nvml().display().to_string()),
        (
            "FAKE_NVML_SCENARIO",
            testdata("env/nvml-faults.json").display().to_string(),
        ),
        ("CUDA_VISIBLE_DEVICES", "0,3".to_owned()),
    ];
    let out = m.check(&[], &env);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = scrub(&stdout(&out), dir.path());
    for needle in [
        "fail  gpu0.ecc",
        "warn  gpu0.remapped_rows",
        "fail  gpu0.throttle",
        "fail  gpu0.pcie",
        "fail  env.cuda_visible_devices",
        "index 3 does not exist",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    insta::with_settings!({filters => FILTERS.to_vec()}, {
        insta::assert_snapshot!("nvml_faults_text", text);
    });
}

#[test]
fn fail_on_decides_whether_a_warning_fails() {
    let m = FakeMachine::new(&Machine::default());
    let dir = &m.dir;
    // Xid 13 alone is a warning (an application error).
    let log = dir.path().join("k.log");
    std::fs::write(
        &log,
        "NVRM: Xid (PCI:0000:00:06): 13, pid=1, name=python3, Graphics Exception\n",
    )
    .unwrap();
    let env = [("GPU_DOCTOR_KERNEL_LOG", log.display().to_string())];
    let on_error = m.check(&[], &env);
    assert_eq!(on_error.status.code(), Some(0));
    assert_eq!(m.check(&["--fail-on", "warn"], &env).status.code(), Some(1));
    let out = m.check(&["--timeout", "0"], &env);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hint:"));
}

#[test]
fn export_writes_the_environment() {
    let m = FakeMachine::new(&Machine::default());
    let export = m.dir.path().join("env.json");
    let out = m.check(&["--export", export.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["host"]["hostname"], "testhost");
    assert_eq!(json["python"]["status"]["state"], "unavailable");
    assert_eq!(json["gpus"]["status"]["state"], "unavailable");
}

#[test]
fn a_working_framework_is_probed_once_then_reused_until_fresh_is_asked() {
    let m = FakeMachine::new(&Machine::default());
    let dir = &m.dir;
    let venv = venv(dir.path(), Some("torch-2.11.0-cu130"));
    let imports = dir.path().join("imports.log");
    let env = [
        ("PATH", format!("{}/bin:/usr/bin:/bin", venv.display())),
        ("HOME", dir.path().join("home").display().to_string()),
        ("GPU_DOCTOR_TEST_IMPORT_LOG", imports.display().to_string()),
    ];
    let run = |extra: &[&str]| {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let out = m.check(&args, &env);
        let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
        check(&json, "torch.import")["message"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let count = || {
        std::fs::read_to_string(&imports)
            .unwrap_or_default()
            .lines()
            .count()
    };

    let first = run(&[]);
    assert!(!first.contains("probe cache"), "{first}");
    assert_eq!(count(), 1);
    let second = run(&[]);
    assert!(second.contains("reused from the probe cache"), "{second}");
    assert_eq!(count(), 1, "the second check must not import torch");
    let fresh = run(&["--fresh"]);
    assert!(!fresh.contains("probe cache"), "{fresh}");
    assert_eq!(count(), 2);
    assert!(run(&[]).contains("reused from the probe cache"));
    assert_eq!(count(), 2);
    // A reinstalled wheel (its RECORD changes) is probed again.
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages");
    std::fs::write(
        site.join("torch-2.11.0+cu130.dist-info/RECORD"),
        "torch/__init__.py\n",
    )
    .unwrap();
    let after_reinstall = run(&[]);
    assert!(
        !after_reinstall.contains("probe cache"),
        "{after_reinstall}"
    );
    assert_eq!(count(), 3);
}
