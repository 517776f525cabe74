//! The exposition text of a known state, in both formats, as a scraper receives it.

use gpu_doctor_exporter::{Format, RenderOptions, State, StateConfig, render};
use gpu_doctor_model::{
    ComputeCapability, DeviceInfo, DeviceSample, DeviceState, EccCounts, GpuEvent, GpuEventKind,
    GpuIndex, GpuUuid, Inventory, PcieLink, Pid, ProcessSample, Reading, RemappedRows, Sample,
    ThrottleReason,
};
use std::sync::Arc;
use std::time::Duration;

fn inventory() -> Inventory {
    let device = |i: u32| DeviceInfo {
        index: GpuIndex(i),
        uuid: GpuUuid(format!("GPU-8a7c6967-6aa9-50d2-ec35-e6628d3ffd9{i}")),
        name: "NVIDIA H200".into(),
        pci_bus_id: Reading::Value(format!("00000000:00:0{}.0", 6 + i)),
        compute_capability: Reading::Value(ComputeCapability { major: 9, minor: 0 }),
        memory_total_bytes: Reading::Value(150_754_820_096),
        temperature_slowdown_celsius: Reading::Value(87),
        temperature_shutdown_celsius: Reading::Value(92),
        pcie_max_link: Reading::Value(PcieLink {
            generation: 5,
            width: 16,
        }),
        serial: Reading::Value("1653124039466".into()),
    };
    Inventory {
        driver_version: Reading::Value("580.159.04".into()),
        nvml_version: Reading::Value("13.580.159.04".into()),
        cuda_driver_version: Reading::Value("13.0".into()),
        devices: vec![device(0), device(1), device(2)],
    }
}

fn healthy_device() -> DeviceSample {
    DeviceSample {
        index: GpuIndex(0),
        state: DeviceState::Ok,
        memory_total_bytes: Reading::Value(150_754_820_096),
        memory_used_bytes: Reading::Value(11_918_229_504),
        memory_free_bytes: Reading::Value(138_191_650_816),
        memory_reserved_bytes: Reading::Value(644_939_776),
        utilization_gpu_percent: Reading::Value(97),
        utilization_memory_percent: Reading::Value(41),
        temperature_celsius: Reading::Value(61),
        power_draw_milliwatts: Reading::Value(512_340),
        power_limit_milliwatts: Reading::Value(700_000),
        clock_sm_mhz: Reading::Value(1980),
        clock_memory_mhz: Reading::Value(3201),
        throttle_reasons: Reading::Value(vec![ThrottleReason::SwPowerCap]),
        ecc_enabled: Reading::Value(true),
        ecc_errors: Reading::Value(EccCounts::default()),
        retired_pages: Reading::Unsupported,
        remapped_rows: Reading::Value(RemappedRows::default()),
        pcie_link: Reading::Value(PcieLink {
            generation: 5,
            width: 16,
        }),
        persistence_mode: Reading::Value(true),
        compute_mode: Reading::Value("default".into()),
        mig_enabled: Reading::Value(false),
        mig_instances: Vec::new(),
    }
}

fn sample() -> Sample {
    // GPU 1: an uncorrectable ECC error and a pending row remap; its power reading is not
    // supported and must be missing from the output, not 0.
    let broken = DeviceSample {
        index: GpuIndex(1),
        ecc_errors: Reading::Value(EccCounts {
            volatile_corrected: 3,
            volatile_uncorrected: 2,
            aggregate_corrected: 17,
            aggregate_uncorrected: 2,
        }),
        remapped_rows: Reading::Value(RemappedRows {
            correctable: 0,
            uncorrectable: 1,
            pending: true,
            failure: false,
        }),
        power_draw_milliwatts: Reading::Unsupported,
        throttle_reasons: Reading::NoPermission,
        ..healthy_device()
    };
    // GPU 2 fell off the bus: every reading is absent.
    let lost = DeviceSample {
        index: GpuIndex(2),
        state: DeviceState::Lost {
            reason: "GPU is lost".into(),
        },
        ..DeviceSample::default()
    };
    // Twelve processes on GPU 0, one holding memory twice (graphics and compute), and one
    // whose memory NVML cannot say.
    let mut processes: Vec<ProcessSample> = (0..12u32)
        .map(|i| ProcessSample {
            gpu: GpuIndex(0),
            pid: Pid(4000 + i),
            used_memory_bytes: Reading::Value(u64::from(i + 1) << 28),
            command: Some(format!("python train.py --rank {i}")),
            container: (i % 2 == 0).then(|| format!("containerd://{i:064x}")),
            user: Some("alice".into()),
            ..ProcessSample::default()
        })
        .collect();
    processes.push(ProcessSample {
        gpu: GpuIndex(0),
        pid: Pid(4011),
        used_memory_bytes: Reading::Value(1 << 20),
        command: Some("python train.py --rank 11".into()),
        ..ProcessSample::default()
    });
    processes.push(ProcessSample {
        gpu: GpuIndex(1),
        pid: Pid(5000),
        used_memory_bytes: Reading::Value(1 << 30),
        command: Some("a \"quoted\"\\name\nwith newline".into()),
        ..ProcessSample::default()
    });
    processes.push(ProcessSample {
        gpu: GpuIndex(1),
        pid: Pid(5001),
        used_memory_bytes: Reading::Unsupported,
        ..ProcessSample::default()
    });
    Sample {
        timestamp_ms: 1_800_000_000_000,
        devices: vec![healthy_device(), broken, lost],
        processes,
    }
}

fn state() -> State {
    let mut state = State::new(inventory(), StateConfig::default());
    let events = [48, 48, 63].map(|xid| GpuEvent {
        timestamp_ms: 1_800_000_000_000,
        gpu: GpuIndex(1),
        kind: GpuEventKind::Xid { xid, detail: None },
    });
    state.ingest(
        sample(),
        &events,
        1_800_000_000_000,
        Duration::from_micros(1500),
    );
    state
}

fn options() -> RenderOptions {
    RenderOptions {
        // Two and a half seconds after the sample.
        now_ms: 1_800_000_002_500,
        top_processes: 10,
    }
}

#[test]
fn openmetrics_text() {
    let text = render(Arc::new(state().snapshot()), options(), Format::OpenMetrics);
    assert!(text.ends_with("# EOF\n"));
    insta::assert_snapshot!(text);
}

#[test]
fn prometheus_text() {
    let text = render(Arc::new(state().snapshot()), options(), Format::Prometheus);
    assert!(!text.contains("# EOF"));
    insta::assert_snapshot!(text);
}

#[test]
fn absent_readings_are_omitted_not_zero() {
    let text = render(Arc::new(state().snapshot()), options(), Format::Prometheus);
    let lines_for = |gpu: &str, metric: &str| {
        text.lines()
            .filter(|l| l.starts_with(metric) && l.contains(&format!("gpu=\"{gpu}\"")))
            .count()
    };
    assert_eq!(lines_for("0", "gpu_doctor_power_draw_watts"), 1);
    assert_eq!(lines_for("1", "gpu_doctor_power_draw_watts"), 0);
    assert_eq!(lines_for("1", "gpu_doctor_throttle_active"), 0);
    assert_eq!(lines_for("2", "gpu_doctor_memory_used_bytes"), 0);
    assert_eq!(lines_for("2", "gpu_doctor_gpu_up"), 1);
    assert!(text.contains("gpu_doctor_gpu_up{gpu=\"2\""));
}

#[test]
fn process_series_are_top_k_plus_other() {
    let text = render(
        Arc::new(state().snapshot()),
        RenderOptions {
            top_processes: 3,
            ..options()
        },
        Format::Prometheus,
    );
    let series: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("gpu_doctor_process_memory_used_bytes{gpu=\"0\""))
        .collect();
    assert_eq!(series.len(), 4, "{series:#?}");
    // pid 4011 holds 3 GiB + 1 MiB in two contexts: one series with the sum.
    assert!(series[0].contains("pid=\"4011\""), "{}", series[0]);
    assert!(series[0].ends_with(&format!(" {}", (12u64 << 28) + (1 << 20))));
    // The other nine processes: 1..=9 quarter-GiB.
    let other: u64 = (1..=9u64).map(|i| i << 28).sum();
    assert!(series[3].contains("pid=\"other\""));
    assert!(series[3].ends_with(&format!(" {other}")), "{}", series[3]);
}

#[test]
fn findings_are_one_gauge_per_distinct_label_set() {
    let text = render(Arc::new(state().snapshot()), options(), Format::Prometheus);
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("gpu_doctor_finding{"))
        .collect();
    assert!(
        findings.iter().any(|l| l.contains("cause=\"hw_xid\"")
            && l.contains("severity=\"error\"")
            && l.contains("gpu=\"1\"")),
        "{findings:#?}"
    );
    let mut unique = findings.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), findings.len());
}
