//! GPU health rules: pure functions over one device's [`DeviceInfo`] and [`DeviceSample`].
//! ECC (GD100–GD101), retired pages against DCGM's limits (GD102–GD104), row remapping
//! (GD105–GD106), the `PCIe` link (GD250–GD251), a lost GPU (GD252), throttle reasons
//! (GD300–GD303), temperature against the slowdown threshold (GD304–GD305), persistence
//! (GD411) and MIG mode.
//!
//! `check` runs them once per GPU; `watch`, the exporter and history reuse
//! [`device_findings`] on every sample, so nothing here reads a clock or a file.

use crate::env::knowledge::Knowledge;
use crate::env::{CheckResult, Checklist};
use gpu_doctor_env::{GpuFacts, ProbeStatus};
use gpu_doctor_model::{
    Cause, DeviceInfo, DeviceSample, DeviceState, Evidence, Finding, Reading, Severity,
    ThrottleReason,
};

/// Within this many degrees of the slowdown threshold, warn.
pub const TEMPERATURE_MARGIN_CELSIUS: u32 = 5;

/// The findings for one device: every check that did not pass.
pub fn device_findings(info: Option<&DeviceInfo>, sample: &DeviceSample) -> Vec<Finding> {
    device_checks(info, sample)
        .into_iter()
        .filter_map(|c| c.finding)
        .collect()
}

/// Runs the per-GPU checks of `check` over the GPU facts (skipped, with the reason, when
/// the source could not be read).
pub fn gpu_checks(gpus: &GpuFacts, list: &mut Checklist) {
    if let ProbeStatus::Unavailable { .. } = &gpus.status {
        list.skip(
            "gpus.health",
            "GPU health not read: no GPU source (see gpus.nvml)",
        );
        return;
    }
    let Some(sample) = &gpus.sample else {
        list.skip("gpus.health", "no sample from the GPU source");
        return;
    };
    let devices = gpus
        .inventory
        .as_ref()
        .map(|i| i.devices.as_slice())
        .unwrap_or_default();
    for s in &sample.devices {
        let info = devices.iter().find(|d| d.index == s.index);
        for c in device_checks(info, s) {
            list.push(c);
        }
    }
}

fn nvml(text: String) -> Evidence {
    Evidence {
        source: "nvml".into(),
        text,
        ..Evidence::default()
    }
}

fn absent<T>(r: &Reading<T>) -> String {
    r.absence().unwrap_or("absent").to_owned()
}

/// Every per-GPU check for one device, with ids `gpu<N>.<check>`.
pub fn device_checks(info: Option<&DeviceInfo>, s: &DeviceSample) -> Vec<CheckResult> {
    let gpu = s.index;
    let id = |what: &str| format!("gpu{gpu}.{what}");
    let mut out = Vec::new();
    let problem = |out: &mut Vec<CheckResult>, what: &str, f: Finding| {
        out.push(CheckResult::problem(id(what), f.on_gpu(gpu)));
    };

    // gpuN.state
    if let DeviceState::Lost { reason } = &s.state {
        let f = Finding::new(
            "GD252",
            Cause::HwXid,
            Severity::Error,
            format!("GPU {gpu} stopped answering: {reason}"),
        )
        .with_evidence(nvml(reason.clone()))
        .with_remedy(
            "Drain the node and reboot it; check power, cooling and the PCIe slot if it recurs",
            Some("sudo dmesg | grep -E 'Xid|fallen off the bus'".into()),
            Some("Xid 79 in the kernel log confirms the GPU fell off the bus".into()),
        );
        problem(&mut out, "state", f);
        return out;
    }
    let name = info.map_or("GPU", |i| i.name.as_str());

    // gpuN.ecc
    match (&s.ecc_errors, s.ecc_enabled.get()) {
        (_, Some(false)) => out.push(CheckResult::pass(id("ecc"), "ECC is off")),
        (Reading::Value(e), _) if e.volatile_uncorrected > 0 => {
            let f = Finding::new(
                "GD100",
                Cause::HwXid,
                Severity::Error,
                format!(
                    "{} uncorrectable ECC error(s) on GPU {gpu} since the driver loaded",
                    e.volatile_uncorrected
                ),
            )
            .with_evidence(nvml(format!(
                "volatile uncorrected {}, aggregate uncorrected {}, volatile corrected {}",
                e.volatile_uncorrected, e.aggregate_uncorrected, e.volatile_corrected
            )))
            .with_remedy(
                "Drain the GPU, reset it, and run the memory diagnostic; RMA if errors come back",
                Some(format!(
                    "sudo nvidia-smi -r -i {gpu} && dcgmi diag -r 3 -i {gpu}"
                )),
                None,
            );
            problem(&mut out, "ecc", f);
        }
        (Reading::Value(e), _) if e.aggregate_uncorrected > 0 => {
            let f = Finding::new(
                "GD101",
                Cause::HwXid,
                Severity::Warn,
                format!("{} uncorrectable ECC error(s) over GPU {gpu}'s life (none since the driver loaded)", e.aggregate_uncorrected),
            )
            .with_evidence(nvml(format!("aggregate uncorrected {}", e.aggregate_uncorrected)))
            .with_remedy(
                "Run the memory diagnostic and watch the count; more than a few is an RMA reason",
                Some(format!("dcgmi diag -r 3 -i {gpu}")),
                None,
            );
            problem(&mut out, "ecc", f);
        }
        (Reading::Value(e), _) => out.push(CheckResult::pass(
            id("ecc"),
            format!(
                "no uncorrectable ECC errors ({} corrected since the driver loaded)",
                e.volatile_corrected
            ),
        )),
        (r, _) => out.push(CheckResult::skip(
            id("ecc"),
            format!("ECC counters: {}", absent(r)),
        )),
    }

    // gpuN.retired_pages
    let limits = Knowledge::get();
    match &s.retired_pages {
        Reading::Value(p) => {
            let total = p.single_bit_ecc + p.double_bit_ecc;
            let text = format!(
                "retired pages: {} single-bit, {} double-bit, pending {}",
                p.single_bit_ecc, p.double_bit_ecc, p.pending
            );
            if total >= limits.max_retired_pages {
                let f = Finding::new(
                    "GD102",
                    Cause::HwXid,
                    Severity::Error,
                    format!(
                        "GPU {gpu} has retired {total} pages, at DCGM's limit of {}",
                        limits.max_retired_pages
                    ),
                )
                .with_evidence(nvml(text))
                .with_remedy("Take the GPU out of service and RMA it", None, None);
                problem(&mut out, "retired_pages", f);
            } else if p.pending {
                let f = Finding::new(
                    "GD103",
                    Cause::HwXid,
                    Severity::Warn,
                    format!("a page retirement on GPU {gpu} waits for a driver reload"),
                )
                .with_evidence(nvml(text))
                .with_remedy(
                    "Reset the GPU (or reboot) when it is idle",
                    Some(format!("sudo nvidia-smi -r -i {gpu}")),
                    None,
                );
                problem(&mut out, "retired_pages", f);
            } else if p.double_bit_ecc > limits.dbe_soft_limit {
                let f = Finding::new(
                    "GD104",
                    Cause::HwXid,
                    Severity::Warn,
                    format!(
                        "GPU {gpu} has {} double-bit retired pages, above DCGM's soft limit of {}",
                        p.double_bit_ecc, limits.dbe_soft_limit
                    ),
                )
                .with_evidence(nvml(text))
                .with_remedy(
                    "Run the diagnostic and plan an RMA if retirements continue",
                    Some(format!("dcgmi diag -r 3 -i {gpu}")),
                    None,
                );
                problem(&mut out, "retired_pages", f);
            } else {
                out.push(CheckResult::pass(
                    id("retired_pages"),
                    format!(
                        "{total} retired page(s), limit {}",
                        limits.max_retired_pages
                    ),
                ));
            }
        }
        r => out.push(CheckResult::skip(
            id("retired_pages"),
            format!(
                "page retirement: {} (GPUs since Ampere remap rows instead)",
                absent(r)
            ),
        )),
    }

    // gpuN.remapped_rows
    match &s.remapped_rows {
        Reading::Value(r) => {
            let text = format!(
                "remapped rows: {} correctable, {} uncorrectable, pending {}, failure {}",
                r.correctable, r.uncorrectable, r.pending, r.failure
            );
            if r.failure {
                let f = Finding::new(
                    "GD105",
                    Cause::HwXid,
                    Severity::Error,
                    format!("a row remap failed on GPU {gpu}: NVIDIA's RMA criterion"),
                )
                .with_evidence(nvml(text))
                .with_remedy(
                    "Take the GPU out of service, run the field diagnostic and RMA it",
                    Some(format!("dcgmi diag -r 3 -i {gpu}")),
                    None,
                );
                problem(&mut out, "remapped_rows", f);
            } else if r.pending {
                let f = Finding::new(
                    "GD106",
                    Cause::HwXid,
                    Severity::Warn,
                    format!("a row remap on GPU {gpu} waits for a GPU reset"),
                )
                .with_evidence(nvml(text))
                .with_remedy(
                    "Reset the GPU when it is idle, or reboot",
                    Some(format!("sudo nvidia-smi -r -i {gpu}")),
                    Some("until then error containment keeps the bad row out of use".into()),
                );
                problem(&mut out, "remapped_rows", f);
            } else {
                out.push(CheckResult::pass(
                    id("remapped_rows"),
                    format!(
                        "{} correctable, {} uncorrectable remaps; none pending",
                        r.correctable, r.uncorrectable
                    ),
                ));
            }
        }
        r => out.push(CheckResult::skip(
            id("remapped_rows"),
            format!("row remapping: {}", absent(r)),
        )),
    }

    // gpuN.throttle
    match &s.throttle_reasons {
        Reading::Value(reasons) => {
            let worst = [
                (
                    ThrottleReason::HwThermalSlowdown,
                    "GD300",
                    Severity::Error,
                    "cooling (fans, airflow, the room)",
                ),
                (
                    ThrottleReason::HwPowerBrakeSlowdown,
                    "GD301",
                    Severity::Error,
                    "power (the supplies and the power-brake signal)",
                ),
                (
                    ThrottleReason::HwSlowdown,
                    "GD302",
                    Severity::Error,
                    "cooling and power delivery",
                ),
                (
                    ThrottleReason::SwThermalSlowdown,
                    "GD303",
                    Severity::Warn,
                    "cooling (the driver holds clocks down to stay under its temperature target)",
                ),
            ]
            .into_iter()
            .find(|(r, ..)| reasons.contains(r));
            let listed: Vec<&str> = reasons.iter().map(|r| r.describe()).collect();
            if let Some((reason, code, severity, fix)) = worst {
                let f = Finding::new(
                    code,
                    Cause::HwThermalPower,
                    severity,
                    format!("GPU {gpu} clocks are held down: {}", reason.describe()),
                )
                .with_evidence(nvml(format!("clock event reasons: {}", listed.join(", "))))
                .with_remedy(
                    format!("Check {fix}; sample again under load to see if it persists"),
                    Some(format!(
                        "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i {gpu}"
                    )),
                    None,
                );
                problem(&mut out, "throttle", f);
            } else {
                out.push(CheckResult::pass(
                    id("throttle"),
                    if listed.is_empty() {
                        "no clock event reasons".to_owned()
                    } else {
                        format!("only {}", listed.join(", "))
                    },
                ));
            }
        }
        r => out.push(CheckResult::skip(
            id("throttle"),
            format!("clock event reasons: {}", absent(r)),
        )),
    }

    // gpuN.temperature
    let slowdown = info.and_then(|i| i.temperature_slowdown_celsius.get());
    match (s.temperature_celsius.get(), slowdown) {
        (Some(t), Some(limit)) if t >= limit => {
            let f = Finding::new(
                "GD304",
                Cause::HwThermalPower,
                Severity::Error,
                format!("GPU {gpu} is at {t} °C, at or above its slowdown threshold of {limit} °C"),
            )
            .with_evidence(nvml(format!("temperature {t} °C, slowdown {limit} °C")))
            .with_remedy(
                "Improve cooling: fans, airflow, room temperature",
                Some(format!("nvidia-smi -q -d TEMPERATURE -i {gpu}")),
                None,
            );
            problem(&mut out, "temperature", f);
        }
        (Some(t), Some(limit)) if t + TEMPERATURE_MARGIN_CELSIUS >= limit => {
            let f = Finding::new(
                "GD305",
                Cause::HwThermalPower,
                Severity::Warn,
                format!("GPU {gpu} is at {t} °C, within {TEMPERATURE_MARGIN_CELSIUS} °C of its slowdown threshold of {limit} °C"),
            )
            .with_evidence(nvml(format!("temperature {t} °C, slowdown {limit} °C")))
            .with_remedy("Improve cooling before it throttles", Some(format!("nvidia-smi -q -d TEMPERATURE -i {gpu}")), None);
            problem(&mut out, "temperature", f);
        }
        (Some(t), Some(limit)) => out.push(CheckResult::pass(
            id("temperature"),
            format!("{t} °C (slowdown at {limit} °C)"),
        )),
        (Some(t), None) => out.push(CheckResult::pass(
            id("temperature"),
            format!("{t} °C (slowdown threshold unknown)"),
        )),
        (None, _) => out.push(CheckResult::skip(
            id("temperature"),
            format!("temperature: {}", absent(&s.temperature_celsius)),
        )),
    }

    // gpuN.pcie
    let max = info.and_then(|i| i.pcie_max_link.get());
    match (s.pcie_link.get(), max) {
        (Some(cur), Some(max)) => {
            let idle = s
                .throttle_reasons
                .value()
                .is_some_and(|r| r.contains(&ThrottleReason::GpuIdle))
                || s.utilization_gpu_percent.get() == Some(0);
            let text = format!(
                "PCIe gen {} x{} (max gen {} x{})",
                cur.generation, cur.width, max.generation, max.width
            );
            if cur.width < max.width {
                let f = Finding::new(
                    "GD250",
                    Cause::HwXid,
                    Severity::Error,
                    format!(
                        "GPU {gpu} PCIe link is x{} of x{}: host-device bandwidth is cut",
                        cur.width, max.width
                    ),
                )
                .with_evidence(nvml(text))
                .with_remedy(
                    "Reseat the card or its riser and check the slot",
                    Some("sudo dmesg | grep -i 'limited by'".into()),
                    None,
                );
                problem(&mut out, "pcie", f);
            } else if cur.generation < max.generation && !idle {
                let f = Finding::new(
                    "GD251",
                    Cause::HwXid,
                    Severity::Warn,
                    format!(
                        "GPU {gpu} PCIe link runs at gen {} of {} while busy",
                        cur.generation, max.generation
                    ),
                )
                .with_evidence(nvml(text))
                .with_remedy(
                    "Check BIOS PCIe settings and risers; measure again under load",
                    Some(format!(
                        "nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.gen.max -i {gpu}"
                    )),
                    None,
                );
                problem(&mut out, "pcie", f);
            } else if cur.generation < max.generation {
                out.push(CheckResult::pass(
                    id("pcie"),
                    format!("{text}; idle GPUs lower the link speed to save power"),
                ));
            } else {
                out.push(CheckResult::pass(id("pcie"), text));
            }
        }
        (cur, _) => out.push(CheckResult::skip(
            id("pcie"),
            match cur {
                Some(c) => format!("PCIe gen {} x{}, maximum unknown", c.generation, c.width),
                None => format!("PCIe link: {}", absent(&s.pcie_link)),
            },
        )),
    }

    // gpuN.persistence
    match s.persistence_mode.get() {
        Some(true) => out.push(CheckResult::pass(id("persistence"), "persistence mode on")),
        Some(false) => {
            let f = Finding::new(
                "GD411",
                Cause::Other,
                Severity::Warn,
                format!("persistence mode is off on GPU {gpu}: the driver unloads between jobs (slow starts, volatile ECC counts reset)"),
            )
            .with_remedy(
                "Run the persistence daemon",
                Some("sudo systemctl enable --now nvidia-persistenced".into()),
                Some("`nvidia-smi -pm 1` works too but is deprecated".into()),
            );
            problem(&mut out, "persistence", f);
        }
        None => out.push(CheckResult::skip(
            id("persistence"),
            format!("persistence mode: {}", absent(&s.persistence_mode)),
        )),
    }

    // gpuN.mig
    match s.mig_enabled.get() {
        Some(true) => out.push(CheckResult::pass(
            id("mig"),
            format!("MIG is on for {name}: CUDA sees MIG instances, so CUDA_VISIBLE_DEVICES must name MIG-… UUIDs"),
        )),
        Some(false) => out.push(CheckResult::pass(id("mig"), "MIG off")),
        None => out.push(CheckResult::skip(id("mig"), format!("MIG mode: {}", absent(&s.mig_enabled)))),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::CheckStatus;
    use gpu_doctor_model::{
        ComputeCapability, EccCounts, GpuIndex, GpuUuid, PcieLink, RemappedRows, RetiredPages,
    };

    fn h200() -> DeviceInfo {
        DeviceInfo {
            index: GpuIndex(0),
            uuid: GpuUuid("GPU-8a7c6967-6aa9-50d2-ec35-e6628d3ffd99".into()),
            name: "NVIDIA H200".into(),
            pci_bus_id: Reading::Value("00000000:00:06.0".into()),
            compute_capability: Reading::Value(ComputeCapability { major: 9, minor: 0 }),
            memory_total_bytes: Reading::Value(150_754_820_096),
            temperature_slowdown_celsius: Reading::Value(87),
            temperature_shutdown_celsius: Reading::Value(92),
            pcie_max_link: Reading::Value(PcieLink {
                generation: 5,
                width: 16,
            }),
            serial: Reading::Value("1653124039466".into()),
        }
    }

    /// The H200 as `nvidia-smi -q` showed it (testdata/h200/smi-q.txt): healthy and idle.
    fn healthy() -> DeviceSample {
        DeviceSample {
            temperature_celsius: Reading::Value(30),
            throttle_reasons: Reading::Value(vec![ThrottleReason::GpuIdle]),
            ecc_enabled: Reading::Value(true),
            ecc_errors: Reading::Value(EccCounts::default()),
            retired_pages: Reading::Unsupported,
            remapped_rows: Reading::Value(RemappedRows::default()),
            pcie_link: Reading::Value(PcieLink {
                generation: 5,
                width: 16,
            }),
            persistence_mode: Reading::Value(true),
            mig_enabled: Reading::Value(false),
            utilization_gpu_percent: Reading::Value(0),
            ..DeviceSample::default()
        }
    }

    fn status_of(checks: &[CheckResult], what: &str) -> CheckStatus {
        checks
            .iter()
            .find(|c| c.id == format!("gpu0.{what}"))
            .map(|c| c.status)
            .unwrap()
    }

    #[test]
    fn a_healthy_h200_has_no_findings() {
        let checks = device_checks(Some(&h200()), &healthy());
        assert!(
            device_findings(Some(&h200()), &healthy()).is_empty(),
            "{checks:#?}"
        );
        assert_eq!(status_of(&checks, "retired_pages"), CheckStatus::Skip);
        assert_eq!(status_of(&checks, "ecc"), CheckStatus::Pass);
    }

    #[test]
    fn uncorrectable_ecc_and_pending_remap() {
        let mut s = healthy();
        s.ecc_errors = Reading::Value(EccCounts {
            volatile_uncorrected: 2,
            aggregate_uncorrected: 2,
            ..EccCounts::default()
        });
        s.remapped_rows = Reading::Value(RemappedRows {
            uncorrectable: 1,
            pending: true,
            ..RemappedRows::default()
        });
        let f = device_findings(Some(&h200()), &s);
        let codes: Vec<&str> = f.iter().map(|f| f.code.0.as_str()).collect();
        assert_eq!(codes, ["GD100", "GD106"]);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].gpu, Some(GpuIndex(0)));
        let mut s = healthy();
        s.remapped_rows = Reading::Value(RemappedRows {
            failure: true,
            pending: true,
            ..RemappedRows::default()
        });
        assert_eq!(device_findings(None, &s)[0].code.0, "GD105");
    }

    #[test]
    fn retired_pages_against_dcgm_limits() {
        let mut s = healthy();
        s.retired_pages = Reading::Value(RetiredPages {
            single_bit_ecc: 40,
            double_bit_ecc: 23,
            pending: false,
        });
        assert_eq!(
            device_findings(None, &s)[0].code.0,
            "GD102",
            "63 is DCGM's limit"
        );
        s.retired_pages = Reading::Value(RetiredPages {
            single_bit_ecc: 40,
            double_bit_ecc: 22,
            pending: false,
        });
        assert_eq!(
            device_findings(None, &s)[0].code.0,
            "GD104",
            "22 double-bit > 15"
        );
        s.retired_pages = Reading::Value(RetiredPages {
            single_bit_ecc: 2,
            double_bit_ecc: 0,
            pending: true,
        });
        assert_eq!(device_findings(None, &s)[0].code.0, "GD103");
        s.retired_pages = Reading::Value(RetiredPages {
            single_bit_ecc: 2,
            double_bit_ecc: 1,
            pending: false,
        });
        assert!(device_findings(None, &s).is_empty());
    }

    #[test]
    fn throttle_temperature_and_pcie() {
        let mut s = healthy();
        s.throttle_reasons = Reading::Value(vec![
            ThrottleReason::SwPowerCap,
            ThrottleReason::HwThermalSlowdown,
        ]);
        s.temperature_celsius = Reading::Value(88);
        s.pcie_link = Reading::Value(PcieLink {
            generation: 5,
            width: 8,
        });
        let codes: Vec<String> = device_findings(Some(&h200()), &s)
            .into_iter()
            .map(|f| f.code.0)
            .collect();
        assert_eq!(codes, ["GD300", "GD304", "GD250"]);
        s.temperature_celsius = Reading::Value(83);
        s.throttle_reasons = Reading::Value(vec![ThrottleReason::SwPowerCap]);
        s.utilization_gpu_percent = Reading::Value(90);
        s.pcie_link = Reading::Value(PcieLink {
            generation: 3,
            width: 16,
        });
        let codes: Vec<String> = device_findings(Some(&h200()), &s)
            .into_iter()
            .map(|f| f.code.0)
            .collect();
        assert_eq!(codes, ["GD305", "GD251"]);
        // The same gen 3 link while idle is power saving, not a fault.
        s.utilization_gpu_percent = Reading::Value(0);
        s.temperature_celsius = Reading::Value(30);
        assert!(device_findings(Some(&h200()), &s).is_empty());
    }

    #[test]
    fn a_lost_gpu_is_one_finding() {
        let s = DeviceSample {
            state: DeviceState::Lost {
                reason: "GPU is lost".into(),
            },
            ..DeviceSample::default()
        };
        let checks = device_checks(None, &s);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].id, "gpu0.state");
        assert_eq!(checks[0].status, CheckStatus::Fail);
    }

    #[test]
    fn absent_readings_are_skips_not_passes() {
        let s = DeviceSample::default();
        let checks = device_checks(None, &s);
        for c in &checks {
            assert_eq!(c.status, CheckStatus::Skip, "{c:?}");
        }
    }
}
