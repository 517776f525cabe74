//! Frames of the monitor rendered into ratatui's TestBackend from recordings and
//! constructed samples: what a user would see, character by character.

use gpu_doctor_model::{
    DeviceInfo, DeviceSample, DeviceState, GpuIndex, GpuUuid, Inventory, Pid, ProcessSample,
    Reading, Sample, ThrottleReason,
};
use gpu_doctor_source::{GpuSource, ReplaySource};
use gpu_doctor_tui::{App, Key, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
const TOTAL: u64 = 150_754_820_096;

fn inventory(gpus: u32) -> Inventory {
    Inventory {
        driver_version: Reading::Value("580.159.04".into()),
        nvml_version: Reading::Value("13.580.159.04".into()),
        cuda_driver_version: Reading::Value("13.0".into()),
        devices: (0..gpus)
            .map(|i| DeviceInfo {
                index: GpuIndex(i),
                uuid: GpuUuid(format!("GPU-{i}")),
                name: "NVIDIA H200".into(),
                pci_bus_id: Reading::Unsupported,
                compute_capability: Reading::Unsupported,
                memory_total_bytes: Reading::Value(TOTAL),
                temperature_slowdown_celsius: Reading::Value(87),
                temperature_shutdown_celsius: Reading::Value(92),
                pcie_max_link: Reading::Unsupported,
                serial: Reading::Unsupported,
            })
            .collect(),
    }
}

/// Two GPUs: GPU 0 runs a leaking job (16 MiB/s) and a steady one; GPU 1 is hot and
/// power-braked.
fn sample(i: u64) -> Sample {
    let t = 1_800_000_000_000 + i * 500;
    let secs = i / 2;
    let leak = 2 * GIB + secs * 16 * MIB;
    let steady = 20 * GIB;
    Sample {
        timestamp_ms: t,
        devices: vec![
            DeviceSample {
                index: GpuIndex(0),
                memory_total_bytes: Reading::Value(TOTAL),
                memory_used_bytes: Reading::Value(leak + steady),
                utilization_gpu_percent: Reading::Value(95),
                temperature_celsius: Reading::Value(55 + u32::try_from(secs / 20).unwrap()),
                power_draw_milliwatts: Reading::Value(610_000),
                power_limit_milliwatts: Reading::Value(700_000),
                throttle_reasons: Reading::Value(vec![]),
                ..DeviceSample::default()
            },
            DeviceSample {
                index: GpuIndex(1),
                memory_total_bytes: Reading::Value(TOTAL),
                memory_used_bytes: Reading::Value(130 * GIB),
                utilization_gpu_percent: Reading::Value(100),
                temperature_celsius: Reading::Value(86),
                power_draw_milliwatts: Reading::Value(700_000),
                power_limit_milliwatts: Reading::Value(700_000),
                throttle_reasons: Reading::Value(vec![
                    ThrottleReason::HwThermalSlowdown,
                    ThrottleReason::HwPowerBrakeSlowdown,
                ]),
                ..DeviceSample::default()
            },
        ],
        processes: vec![
            ProcessSample {
                gpu: GpuIndex(0),
                pid: Pid(4242),
                used_memory_bytes: Reading::Value(leak),
                user: Some("alice".into()),
                command: Some("python train_leaky.py --batch-size 64".into()),
                ..ProcessSample::default()
            },
            ProcessSample {
                gpu: GpuIndex(0),
                pid: Pid(5151),
                used_memory_bytes: Reading::Value(steady),
                user: Some("bob".into()),
                command: Some("python serve.py".into()),
                container: Some("3f2a9c1e7b4d5e6f".into()),
                ..ProcessSample::default()
            },
            ProcessSample {
                gpu: GpuIndex(1),
                pid: Pid(777),
                used_memory_bytes: Reading::Value(130 * GIB - 600 * MIB),
                user: Some("carol".into()),
                command: Some("torchrun train.py".into()),
                ..ProcessSample::default()
            },
        ],
    }
}

fn render(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 44)).unwrap();
    terminal.draw(|f| draw(f, app)).unwrap();
    terminal.backend().to_string()
}

#[test]
fn two_gpus_with_a_leak_and_a_hot_gpu() {
    let mut app = App::new(inventory(2), "nvml".into(), 500);
    for i in 0..180 {
        app.push(sample(i), vec![]);
    }
    insta::assert_snapshot!("two_gpus_leak", render(&app));
    // Selecting GPU 1 switches the charts; sorting by trend puts the leaking job first.
    assert!(app.key(Key::Down));
    assert!(app.key(Key::Sort));
    let frame = render(&app);
    assert!(frame.contains("GPU 1 memory (GiB)"), "{frame}");
    assert!(frame.contains("sorted by trend"), "{frame}");
    assert!(app.key(Key::Help));
    insta::assert_snapshot!("help", render(&app));
    assert!(!app.key(Key::Quit));
}

#[test]
fn a_lost_gpu_is_shown_as_lost() {
    let mut app = App::new(inventory(2), "nvml".into(), 1000);
    let mut s = sample(0);
    s.devices[1] = DeviceSample {
        index: GpuIndex(1),
        state: DeviceState::Lost {
            reason: "GPU is lost".into(),
        },
        ..DeviceSample::default()
    };
    app.push(s, vec![]);
    let frame = render(&app);
    assert!(frame.contains("LOST: GPU is lost"), "{frame}");
}

#[test]
fn frames_from_a_real_h200_recording() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/recordings");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // recordings from the H200 are added by the validation run
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "ndjson") {
            continue;
        }
        let mut source = ReplaySource::open(&path).unwrap();
        let mut app = App::new(source.inventory().unwrap(), "replay".into(), 250);
        while let Ok(sample) = source.sample() {
            let events = source.drain_events().unwrap();
            app.push(sample, events);
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        insta::assert_snapshot!(format!("h200_{name}"), render(&app));
    }
}
