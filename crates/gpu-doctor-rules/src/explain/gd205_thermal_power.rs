//! GD205: the GPU slowed down or failed for power or heat.

use super::xid::XidClass;
use super::{Hit, Input, evidence, observations_where, xid_observations, xid_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD205",
    name: "thermal-power",
    cause: Some(Cause::HwThermalPower),
    summary: "Power or thermal trouble in the logs: Xid 54 (aux power), HW/thermal slowdown",
    body: r"## What it does
Finds Xid 54 (auxiliary power not connected) and log lines reporting an active hardware,
thermal or power-brake slowdown.

## Why is this bad?
A GPU short of power or too hot runs at a fraction of its clocks, and can fall off the bus.
Jobs become slow or fail on that GPU only.

## Example
```
NVRM: Xid (PCI:0000:01:00): 54, Auxiliary power is not connected to the GPU board
```

## How to fix
1. Check power and temperature: `nvidia-smi -q -d POWER,TEMPERATURE,PERFORMANCE`
   (the clock-event reasons say which slowdown is active).
2. Connect the board's auxiliary power; check cooling, fans and airflow.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let xids = xid_observations(input, |class, _| class == Some(XidClass::Power));
    let lines = observations_where(input, |k| matches!(k, ObsKind::ThermalPower));
    // nvidia-smi -q temperatures: the GPU at (or within 3 °C of) its slowdown or maximum
    // operating temperature is being held back.
    let temps: Vec<(&Observation, &str, u32)> = input
        .facts
        .observations
        .iter()
        .filter_map(|o| match &o.kind {
            ObsKind::Temperature { key, celsius } => Some((o, key.as_str(), *celsius)),
            _ => None,
        })
        .collect();
    let current = temps.iter().find(|t| t.1 == "current_temp");
    let limit = temps
        .iter()
        .filter(|t| t.1 == "max_operating_temp" || t.1 == "slowdown_temp")
        .min_by_key(|t| t.2);
    let hot = match (current, limit) {
        (Some(c), Some(l)) if c.2 + 3 >= l.2 => Some((c.0, c.2, l.2)),
        _ => None,
    };
    let (first, message, severity) = if let Some(&(o, n)) = xids.first() {
        (
            o,
            format!(
                "The driver logged {}: the GPU lacks power and runs slowed down or fails.",
                xid_phrase(o, n)
            ),
            Severity::Error,
        )
    } else if let Some(o) = lines
        .iter()
        .find(|o| o.text.contains("aborting") || o.text.contains("abort trigger"))
    {
        (
            *o,
            "The job stopped itself because the GPU reached its temperature limit (the program's own heat watchdog, such as hashcat's --hwmon-temp-abort): the GPU runs too hot.".to_owned(),
            Severity::Error,
        )
    } else if let Some(o) = lines.first() {
        (
            *o,
            "The GPU slowed down for heat or power (a hardware or thermal slowdown was active)."
                .to_owned(),
            Severity::Warn,
        )
    } else if let Some((o, now, limit)) = hot {
        (
            o,
            format!(
                "The GPU runs at {now} °C, at its {limit} °C temperature limit: its clocks are held down for heat."
            ),
            Severity::Warn,
        )
    } else {
        return Vec::new();
    };
    let f = Finding::new("GD205", Cause::HwThermalPower, severity, message)
        .confidence(0.7)
        .with_evidence(evidence(first))
        .with_remedy(
            "Check power, temperature and the active clock-event reasons",
            Some("nvidia-smi -q -d POWER,TEMPERATURE,PERFORMANCE".to_owned()),
            None,
        )
        .with_remedy(
            "Connect the board's auxiliary power; check cooling, fans and airflow",
            None,
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
