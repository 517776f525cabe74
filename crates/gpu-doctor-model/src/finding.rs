//! What the rules produce: a [`Finding`] with its stable code, root cause, evidence and
//! ranked remedies. Every command renders the same type, so a rule written once shows up in
//! `explain`, `check`, `snapshot`, `report` and `run` alike.

use crate::GpuIndex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A rule's stable code: GD1xx memory/ECC, GD2xx Xid/bus, GD3xx thermal/power,
/// GD4xx environment, GD5xx job/OOM, GD6xx memory-access bugs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RuleCode(pub String);

impl RuleCode {
    pub fn new(code: &str) -> Self {
        RuleCode(code.to_owned())
    }
}

impl fmt::Display for RuleCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The root-cause taxonomy. The JSON names are an interface: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    OomCapacity,
    OomFragmentation,
    OomOtherProcess,
    OomLeak,
    IllegalAccess,
    DeviceAssert,
    EnvDriverTooOld,
    EnvTorchCpuBuild,
    EnvArchUnsupported,
    EnvLibMissing,
    EnvNvmlMismatch,
    EnvNoDriver,
    EnvVisibleDevices,
    CudnnError,
    CublasError,
    NcclError,
    HwXid,
    HwThermalPower,
    Other,
}

impl Cause {
    pub const ALL: [Cause; 19] = [
        Cause::OomCapacity,
        Cause::OomFragmentation,
        Cause::OomOtherProcess,
        Cause::OomLeak,
        Cause::IllegalAccess,
        Cause::DeviceAssert,
        Cause::EnvDriverTooOld,
        Cause::EnvTorchCpuBuild,
        Cause::EnvArchUnsupported,
        Cause::EnvLibMissing,
        Cause::EnvNvmlMismatch,
        Cause::EnvNoDriver,
        Cause::EnvVisibleDevices,
        Cause::CudnnError,
        Cause::CublasError,
        Cause::NcclError,
        Cause::HwXid,
        Cause::HwThermalPower,
        Cause::Other,
    ];

    /// The snake_case name used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::OomCapacity => "oom_capacity",
            Cause::OomFragmentation => "oom_fragmentation",
            Cause::OomOtherProcess => "oom_other_process",
            Cause::OomLeak => "oom_leak",
            Cause::IllegalAccess => "illegal_access",
            Cause::DeviceAssert => "device_assert",
            Cause::EnvDriverTooOld => "env_driver_too_old",
            Cause::EnvTorchCpuBuild => "env_torch_cpu_build",
            Cause::EnvArchUnsupported => "env_arch_unsupported",
            Cause::EnvLibMissing => "env_lib_missing",
            Cause::EnvNvmlMismatch => "env_nvml_mismatch",
            Cause::EnvNoDriver => "env_no_driver",
            Cause::EnvVisibleDevices => "env_visible_devices",
            Cause::CudnnError => "cudnn_error",
            Cause::CublasError => "cublas_error",
            Cause::NcclError => "nccl_error",
            Cause::HwXid => "hw_xid",
            Cause::HwThermalPower => "hw_thermal_power",
            Cause::Other => "other",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(name: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether this is one of the out-of-memory causes.
    pub fn is_oom(self) -> bool {
        matches!(
            self,
            Cause::OomCapacity | Cause::OomFragmentation | Cause::OomOtherProcess | Cause::OomLeak
        )
    }

    /// Whether this is an environment (installation) problem rather than the job or the GPU.
    pub fn is_environment(self) -> bool {
        self.as_str().starts_with("env_")
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warn,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Error => "error",
        })
    }
}

/// What a finding rests on: a line that was read, or a measurement, with the numbers taken
/// from it (`requested_bytes`, `free_bytes`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Evidence {
    /// Where it came from: `stdin`, a file name, `kernel log`, `nvml`, `snapshot`.
    pub source: String,
    /// 1-based line number in that source, when it is text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The line or measurement, verbatim (trimmed, and cut at a sane length).
    pub text: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, f64>,
}

/// One thing to do about a finding, most effective first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Remedy {
    /// What to do, in a sentence.
    pub action: String,
    /// The exact command or setting, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Why this helps, or what it saves, with numbers where they are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A diagnosis: what is wrong, why we think so, and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub code: RuleCode,
    pub cause: Cause,
    pub severity: Severity,
    /// 0.0 to 1.0: how sure the rule is that this is the cause.
    pub confidence: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuIndex>,
    /// One sentence a person reads first.
    pub message: String,
    pub evidence: Vec<Evidence>,
    pub remedies: Vec<Remedy>,
}

impl Finding {
    pub fn new(code: &str, cause: Cause, severity: Severity, message: impl Into<String>) -> Self {
        Finding {
            code: RuleCode::new(code),
            cause,
            severity,
            confidence: 1.0,
            gpu: None,
            message: message.into(),
            evidence: Vec::new(),
            remedies: Vec::new(),
        }
    }

    #[must_use]
    pub fn confidence(mut self, confidence: f32) -> Self {
        self.confidence = confidence;
        self
    }

    #[must_use]
    pub fn on_gpu(mut self, gpu: GpuIndex) -> Self {
        self.gpu = Some(gpu);
        self
    }

    #[must_use]
    pub fn with_evidence(mut self, evidence: Evidence) -> Self {
        self.evidence.push(evidence);
        self
    }

    #[must_use]
    pub fn with_remedy(
        mut self,
        action: impl Into<String>,
        command: Option<String>,
        detail: Option<String>,
    ) -> Self {
        self.remedies.push(Remedy {
            action: action.into(),
            command,
            detail,
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cause_names_round_trip() {
        for c in Cause::ALL {
            assert_eq!(Cause::parse(c.as_str()), Some(c));
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{c}\""));
        }
    }
}
