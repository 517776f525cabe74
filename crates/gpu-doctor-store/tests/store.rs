//! The store against real SQLite files in a temporary directory.

use gpu_doctor_model::{
    DeviceSample, GpuEvent, GpuEventKind, GpuIndex, Pid, ProcessSample, Reading, Sample,
};
use gpu_doctor_store::{Retention, Store, StoreError, Tier};
use std::time::Duration;

const GIB: u64 = 1 << 30;

fn sample(t_ms: u64, used: u64, pid_used: u64) -> Sample {
    Sample {
        timestamp_ms: t_ms,
        devices: (0..2)
            .map(|i| DeviceSample {
                index: GpuIndex(i),
                memory_used_bytes: Reading::Value(used + u64::from(i)),
                memory_total_bytes: Reading::Value(141 * GIB),
                utilization_gpu_percent: Reading::Value(50),
                temperature_celsius: Reading::Value(40 + (t_ms / 1000 % 10) as u32),
                power_draw_milliwatts: Reading::Unsupported,
                ..DeviceSample::default()
            })
            .collect(),
        processes: vec![ProcessSample {
            gpu: GpuIndex(0),
            pid: Pid(4242),
            used_memory_bytes: Reading::Value(pid_used),
            command: Some("python train.py".into()),
            user: Some("alice".into()),
            ..ProcessSample::default()
        }],
    }
}

#[test]
fn raw_and_aggregate_tiers_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/history.db");
    let mut store = Store::open(&path).unwrap();
    let t0 = 1_800_000_000_000u64; // a round minute boundary
    let t0 = t0 - t0 % 60_000;
    // 3 minutes at 10 Hz, memory rising 1 MiB per sample.
    for i in 0..1800u64 {
        store
            .ingest(&sample(t0 + i * 100, GIB + (i << 20), 2 * GIB + (i << 20)))
            .unwrap();
    }
    store.flush().unwrap();
    let until = t0 + 180_000;
    let raw = store
        .device_series(Tier::Raw, GpuIndex(0), t0, until)
        .unwrap();
    assert_eq!(raw.len(), 1800);
    assert_eq!(raw[10].memory_used_bytes, Some(GIB + (10 << 20)));
    assert_eq!(raw[10].power_draw_watts, None, "unsupported stays absent");
    let per_second = store
        .device_series(Tier::PerSecond, GpuIndex(0), t0, until)
        .unwrap();
    assert_eq!(per_second.len(), 180);
    // The maximum of the first second's ten samples.
    assert_eq!(per_second[0].memory_used_bytes, Some(GIB + (9 << 20)));
    assert_eq!(per_second[0].utilization_gpu_percent, Some(50.0));
    let per_minute = store
        .device_series(Tier::PerMinute, GpuIndex(1), t0, until)
        .unwrap();
    assert_eq!(per_minute.len(), 3);
    assert_eq!(
        per_minute[2].memory_used_bytes,
        Some(GIB + (1799 << 20) + 1)
    );
    let procs = store.process_series(Tier::PerSecond, t0, until).unwrap();
    assert_eq!(procs.len(), 1);
    assert_eq!(procs[0].command.as_deref(), Some("python train.py"));
    assert_eq!(procs[0].points.len(), 180);
    assert_eq!(
        store.gpus(t0, until).unwrap(),
        vec![GpuIndex(0), GpuIndex(1)]
    );
}

#[test]
fn events_round_trip_and_retention_prunes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let retention = Retention {
        raw: Duration::from_secs(60),
        per_second: Duration::from_secs(120),
        per_minute: Duration::from_secs(3600),
    };
    let mut store = Store::open_with(&path, retention, false).unwrap();
    let event = GpuEvent {
        timestamp_ms: 1000,
        gpu: GpuIndex(1),
        kind: GpuEventKind::Xid {
            xid: 79,
            detail: Some("GPU has fallen off the bus".into()),
        },
    };
    store.ingest_event(&event).unwrap();
    store.ingest(&sample(1000, GIB, GIB)).unwrap();
    store.flush().unwrap();
    assert_eq!(store.events(0, 2000).unwrap(), vec![event]);
    store.prune(1000 + 90_000).unwrap();
    store.flush().unwrap();
    assert!(
        store
            .device_series(Tier::Raw, GpuIndex(0), 0, u64::MAX >> 2)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .device_series(Tier::PerSecond, GpuIndex(0), 0, u64::MAX >> 2)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_reopened_store_keeps_what_was_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    {
        let mut store = Store::open(&path).unwrap();
        for i in 0..50 {
            store.ingest(&sample(i * 1000, GIB, GIB)).unwrap();
        }
    } // dropped: flushed
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(
        store
            .device_series(Tier::Raw, GpuIndex(0), 0, 100_000)
            .unwrap()
            .len(),
        50
    );
}

#[test]
fn a_corrupt_file_is_reported_not_recreated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    std::fs::write(
        &path,
        b"this is not a database, but someone's only copy of something".repeat(100),
    )
    .unwrap();
    let err = Store::open(&path).err().expect("refused");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("is corrupt"), "{err}");
    assert!(err.hint().unwrap().contains("move the file aside"));
    // The bytes are untouched.
    assert!(
        std::fs::read(&path)
            .unwrap()
            .starts_with(b"this is not a database")
    );
}

#[test]
fn a_damaged_page_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    {
        let mut store = Store::open(&path).unwrap();
        for i in 0..2000 {
            store.ingest(&sample(i * 100, GIB + i, GIB)).unwrap();
        }
        store.flush().unwrap();
        drop(store);
        // Fold the WAL back into the main file so the damage below hits real pages.
        checkpoint_on_close(&path);
    }
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    for b in &mut bytes[len / 2..len / 2 + 4096] {
        *b = 0xA5;
    }
    std::fs::write(&path, bytes).unwrap();
    match Store::open(&path) {
        Err(StoreError::Corrupt { .. }) => {}
        Err(other) => panic!("expected Corrupt, got {other}"),
        Ok(_) => panic!("a damaged store opened as if it were fine"),
    }
}

/// Reopening and closing a store runs SQLite's checkpoint on close.
fn checkpoint_on_close(path: &std::path::Path) {
    let store = Store::open(path).unwrap();
    drop(store);
}
