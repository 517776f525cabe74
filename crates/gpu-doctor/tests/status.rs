//! `status` and `record` over the stand-in NVML driver (the real nvml-wrapper code path),
//! and over recordings.

mod common;

use common::{bin, settle_json, with_scenario};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn one_gpu_with_a_process() {
    let out = with_scenario("one-gpu-busy")
        .arg("status")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("status_one_gpu_busy", stdout(&out));
    let out = with_scenario("one-gpu-busy")
        .args(["status", "--json"])
        .output()
        .unwrap();
    let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    settle_json(&mut json);
    insta::assert_json_snapshot!("status_one_gpu_busy_json", json);
}

#[test]
fn eight_gpus() {
    let out = with_scenario("eight-gpus").arg("status").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("status_eight_gpus", stdout(&out));
}

#[test]
fn unsupported_readings_are_absent_not_zero() {
    let out = with_scenario("unsupported")
        .args(["status", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let device = &json["devices"][0];
    let absent: Vec<&str> = device
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v.get("absent").is_some())
        .map(|(k, _)| k.as_str())
        .collect();
    assert!(
        absent.len() >= 5,
        "expected several absent readings, got {absent:?}"
    );
    for key in &absent {
        assert_ne!(device[key], serde_json::json!(0), "{key}");
    }
    let text = with_scenario("unsupported").arg("status").output().unwrap();
    insta::assert_snapshot!("status_unsupported", stdout(&text));
}

#[test]
fn health_problems_are_in_words() {
    // testdata/env/nvml-faults.json: uncorrectable ECC, a pending remap, HW thermal
    // slowdown and a link trained at x8, all from the first sample.
    let faults = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/env/nvml-faults.json");
    let out = with_scenario("one-gpu-idle")
        .env("FAKE_NVML_SCENARIO", faults)
        .arg("status")
        .output()
        .unwrap();
    insta::assert_snapshot!("status_health_faults", stdout(&out));
}

#[test]
fn no_driver_is_one_clear_error() {
    let out = bin()
        .env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .arg("status")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with(
            "error: could not load the NVIDIA driver library (/nonexistent/libnvidia-ml.so.1)"
        ),
        "{err}"
    );
    assert!(
        lines[1].starts_with("hint: install the NVIDIA driver"),
        "{err}"
    );
}

#[test]
fn record_then_replay_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.ndjson");
    let out = with_scenario("gpu-lost")
        .args(["record", "--interval", "10ms", "--count", "6", "-o"])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&rec).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "header");
    let samples: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "sample").collect();
    assert_eq!(samples.len(), 6);
    // GPU 1 falls off the bus mid-run; GPU 0 keeps reporting.
    let last = samples.last().unwrap();
    assert_eq!(last["devices"][1]["state"], "lost", "{last}");
    assert!(
        last["devices"][0]["memory_used_bytes"].is_number(),
        "{last}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "event" && l["event"] == "device_lost"),
        "a device_lost event is recorded"
    );
    // Replaying every sample gives back what was recorded.
    let out = bin()
        .args(["status", "--json", "--watch", "0.01", "--source"])
        .arg(format!("replay:{}", rec.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let replayed: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(replayed.len(), 6);
    for (r, s) in replayed.iter().zip(&samples) {
        assert_eq!(r["timestamp_ms"], s["timestamp_ms"]);
        assert_eq!(r["processes"], s["processes"]);
        for (rd, sd) in r["devices"]
            .as_array()
            .unwrap()
            .iter()
            .zip(s["devices"].as_array().unwrap())
        {
            assert_eq!(rd["memory_used_bytes"], sd["memory_used_bytes"]);
            assert_eq!(rd["state"], sd["state"]);
        }
    }
    let out = bin()
        .args(["status", "--source"])
        .arg(format!("replay:{}", rec.display()))
        .output()
        .unwrap();
    insta::assert_snapshot!("status_replay_first_sample", stdout(&out));
}

#[test]
fn processes_come_and_go_in_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.ndjson");
    let out = with_scenario("eight-gpus")
        .args(["record", "--interval", "10ms", "--count", "12", "-o"])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&rec).unwrap();
    let events: Vec<String> = text
        .lines()
        .filter(|l| l.contains("\"type\":\"event\""))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "gpu {} {} {}",
                v["gpu"],
                v["event"],
                v.get("pid").map(ToString::to_string).unwrap_or_default()
            )
        })
        .collect();
    insta::assert_snapshot!("eight_gpus_events", events.join("\n"));
}

#[test]
fn a_truncated_recording_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.ndjson");
    let out = with_scenario("one-gpu-busy")
        .args(["record", "--interval", "10ms", "--count", "3", "-o"])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut bytes = std::fs::read(&rec).unwrap();
    bytes.truncate(bytes.len() - 40);
    std::fs::write(&rec, bytes).unwrap();
    let out = bin()
        .args(["status", "--watch", "0.01", "--source"])
        .arg(format!("replay:{}", rec.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("line 4: the last line is cut short"), "{err}");
    let out = bin()
        .args(["status", "--source", "replay:/nonexistent.ndjson"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_store_survives_kill_9_losing_at_most_the_last_second() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let mut child = with_scenario("leak")
        .args(["record", "--interval", "20ms", "--store"])
        .arg(&db)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let killed_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    // SIGKILL: no chance to flush.
    child.kill().unwrap();
    child.wait().unwrap();
    let conn_check = bin()
        .args(["report", "--json", "--since", "1m", "--store"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        conn_check.status.code() == Some(0) || conn_check.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&conn_check.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&conn_check.stdout).unwrap();
    let until = json["until_ms"].as_u64().unwrap();
    assert!(
        killed_at.saturating_sub(until) <= 1_500,
        "the newest stored sample is {} ms before the kill",
        killed_at - until
    );
    let samples = json["gpus"][0]["samples"].as_u64().unwrap();
    assert!(
        samples >= 60,
        "only {samples} samples survived 3.5 s at 50 Hz"
    );
}
