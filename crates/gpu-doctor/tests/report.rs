//! `report` over recordings and the history store: the summary, the findings (a leaking
//! process flagged with its time-to-OOM, a plateau not flagged), the JSON, HTML and PNG.

use gpu_doctor_model::{
    DeviceInfo, DeviceSample, GpuEvent, GpuEventKind, GpuIndex, GpuUuid, Inventory, Pid,
    ProcessSample, Reading, SCHEMA_VERSION, Sample,
};
use gpu_doctor_source::{RecordingHeader, RecordingWriter};
use std::path::Path;
use std::process::Command;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
const TOTAL: u64 = 150_754_820_096;

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpu-doctor"));
    cmd.env_remove("GPU_DOCTOR_SOURCE").env("NO_COLOR", "1");
    cmd
}

/// Two minutes at 2 Hz on one H200: pid 100 leaks 16 MiB/s after warm-up, pid 200 warms up
/// for 20 s then plateaus; an Xid 79 at 90 s.
fn write_recording(path: &Path, start_ms: u64) {
    let inventory = Inventory {
        driver_version: Reading::Value("580.159.04".into()),
        nvml_version: Reading::Value("13.580.159.04".into()),
        cuda_driver_version: Reading::Value("13.0".into()),
        devices: vec![DeviceInfo {
            index: GpuIndex(0),
            uuid: GpuUuid("GPU-00000000-0000-0000-0000-000000000000".into()),
            name: "NVIDIA H200".into(),
            pci_bus_id: Reading::Value("00000000:00:05.0".into()),
            compute_capability: Reading::Unsupported,
            memory_total_bytes: Reading::Value(TOTAL),
            temperature_slowdown_celsius: Reading::Value(87),
            temperature_shutdown_celsius: Reading::Value(92),
            pcie_max_link: Reading::Unsupported,
            serial: Reading::Unsupported,
        }],
    };
    let header = RecordingHeader {
        schema_version: SCHEMA_VERSION,
        tool: "test".into(),
        hostname: None,
        started_ms: start_ms,
        interval_ms: 500,
        inventory,
    };
    let file = std::fs::File::create(path).unwrap();
    let mut w = RecordingWriter::new(file, header).unwrap();
    for i in 0..240u64 {
        let t = start_ms + i * 500;
        let secs = i / 2;
        let leak = 2 * GIB + secs * 16 * MIB;
        let plateau = 10 * GIB + secs.min(20) * 200 * MIB;
        if i == 180 {
            w.write_event(&GpuEvent {
                timestamp_ms: t,
                gpu: GpuIndex(0),
                kind: GpuEventKind::Xid {
                    xid: 79,
                    detail: Some("GPU has fallen off the bus".into()),
                },
            })
            .unwrap();
        }
        let used = leak + plateau + GIB / 2;
        w.write_sample(&Sample {
            timestamp_ms: t,
            devices: vec![DeviceSample {
                index: GpuIndex(0),
                memory_total_bytes: Reading::Value(TOTAL),
                memory_used_bytes: Reading::Value(used),
                memory_free_bytes: Reading::Value(TOTAL - used),
                utilization_gpu_percent: Reading::Value(90 + u32::try_from(i % 10).unwrap()),
                temperature_celsius: Reading::Value(60 + u32::try_from(secs / 10).unwrap()),
                power_draw_milliwatts: Reading::Value(500_000),
                ..DeviceSample::default()
            }],
            processes: vec![
                ProcessSample {
                    gpu: GpuIndex(0),
                    pid: Pid(100),
                    used_memory_bytes: Reading::Value(leak),
                    user: Some("alice".into()),
                    command: Some("python train_leaky.py".into()),
                    ..ProcessSample::default()
                },
                ProcessSample {
                    gpu: GpuIndex(0),
                    pid: Pid(200),
                    used_memory_bytes: Reading::Value(plateau),
                    user: Some("bob".into()),
                    command: Some("python train_ok.py".into()),
                    ..ProcessSample::default()
                },
            ],
        })
        .unwrap();
    }
}

#[test]
fn report_over_a_recording_flags_the_leak_not_the_plateau() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.ndjson");
    write_recording(&rec, 1_800_000_000_000);
    let out = bin()
        .args(["report", "--source"])
        .arg(format!("replay:{}", rec.display()))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("report_text", String::from_utf8(out.stdout).unwrap());

    let out = bin()
        .args(["report", "--json", "--source"])
        .arg(format!("replay:{}", rec.display()))
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    insta::assert_json_snapshot!("report_json", json);
}

#[test]
fn html_and_png_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.ndjson");
    write_recording(&rec, 1_800_000_000_000);
    let html = dir.path().join("r.html");
    let png = dir.path().join("r.png");
    let out = bin()
        .args(["report", "--source"])
        .arg(format!("replay:{}", rec.display()))
        .arg("--html")
        .arg(&html)
        .arg("--png")
        .arg(&png)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg"), "charts are inline SVG");
    assert!(page.contains("GPU 0 memory per process"));
    assert!(page.contains("keeps growing"), "the leak alert is listed");
    assert!(
        !page.contains("http://") || !page.contains("<script src"),
        "no network"
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 20_000, "a real chart, not an empty image");
}

#[test]
fn record_to_the_store_then_report_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.ndjson");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    write_recording(&rec, now - 130_000);
    let db = dir.path().join("state/history.db");
    let out = bin()
        .args(["record", "--store"])
        .arg(&db)
        .arg("--source")
        .arg(format!("replay:{}", rec.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = bin()
        .args(["report", "--json", "--since", "10m", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let causes: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["cause"].as_str().unwrap())
        .collect();
    assert!(causes.contains(&"oom_leak"), "{causes:?}");
    assert!(causes.contains(&"hw_xid"), "{causes:?}");
    let leak = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["cause"] == "oom_leak")
        .unwrap();
    assert_eq!(leak["evidence"][0]["values"]["pid"], 100.0);
}

#[test]
fn a_missing_or_corrupt_store_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["report", "--store"])
        .arg(dir.path().join("none.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: no history store at "), "{err}");
    assert!(err.contains("hint: "), "{err}");
    let bad = dir.path().join("bad.db");
    std::fs::write(&bad, vec![b'x'; 8192]).unwrap();
    let out = bin()
        .args(["report", "--store"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("is corrupt"), "{err}");
}
