//! Environment probes behind a [`Probe`] trait, producing [`EnvFacts`].
//!
//! This crate owns *looking*: each probe reads one part of the machine (driver, CUDA
//! toolkits and libraries, Python frameworks, variables, kernel log, host) through a
//! [`Host`], which names the root folder, the environment and the time limit, so tests feed
//! a fake tree in a temporary folder instead of the real `/`. It never judges: the verdicts
//! are pure rules in `gpu-doctor-rules` (`env` and `health`). GPU facts come from whatever
//! `GpuSource` the caller opened and are passed in as [`GpuFacts`].

mod cuda;
mod diff;
mod driver;
mod facts;
mod host;
mod kernel_log;
mod libs;
pub mod mps;
mod probe_cache;
mod python;
mod system;
mod variables;

pub use cuda::{CudaProbe, FAMILIES, major_of, parse_nvcc_version, toolkits};
pub use diff::{Difference, diff};
pub use driver::{DriverProbe, may_read_write, parse_kernel_module};
pub use facts::{
    CudaFacts, DeviceNode, DriverFacts, EnvFacts, Framework, FrameworkDevice, GpuFacts,
    HeaderVersion, HostFacts, Interpreter, KernelLogFacts, KernelModule, LibraryCopy, ProbeStatus,
    PythonFacts, Toolkit, VariableFacts, XidLine,
};
pub use host::{CommandOutput, Host, Identity, RunError, run_bounded};
pub use kernel_log::{KERNEL_LOG_VAR, KernelLogProbe, MAX_XIDS, parse_xid};
pub use libs::{LdEntry, is_stub, parse_ldconfig, version_from_name};
pub use probe_cache::{CacheKey, MAX_AGE as PROBE_CACHE_MAX_AGE, ProbeCache};
pub use python::PythonProbe;
pub use system::HostProbe;
pub use variables::{VariablesProbe, WATCHED};

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// One collector: reads part of the machine through a [`Host`] and returns plain facts.
/// Probes never fail: what they cannot read is recorded as absent, with the reason.
pub trait Probe {
    type Facts;
    /// The name used in [`EnvFacts::timings_ms`].
    const NAME: &'static str;
    fn probe(&self, host: &Host) -> Self::Facts;
}

/// Runs every probe. The Python probe (the slow one: it imports frameworks) runs on its own
/// thread while the others run here; the GPU facts are gathered by the caller's closure on
/// a third thread, since opening NVML can take a while too.
pub fn collect(host: &Host, gpus: impl FnOnce() -> GpuFacts + Send) -> EnvFacts {
    let mut facts = EnvFacts {
        schema_version: gpu_doctor_model::SCHEMA_VERSION,
        ..EnvFacts::default()
    };
    let mut timings = BTreeMap::new();
    std::thread::scope(|s| {
        let python = s.spawn(|| {
            let start = Instant::now();
            (PythonProbe.probe(host), millis(start))
        });
        let gpu = s.spawn(|| {
            let start = Instant::now();
            (gpus(), millis(start))
        });
        let ld_start = Instant::now();
        let ldconfig = libs::ldconfig_entries(host);
        timings.insert("ldconfig".to_owned(), millis(ld_start));
        facts.host = timed(&HostProbe, host, &mut timings);
        facts.driver = timed(
            &DriverProbe {
                ldconfig: ldconfig.clone(),
            },
            host,
            &mut timings,
        );
        facts.variables = timed(&VariablesProbe, host, &mut timings);
        facts.kernel_log = timed(&KernelLogProbe, host, &mut timings);
        // Only while it runs: a machine without MPS exports exactly what it did before.
        facts.mps = Some(mps::detect(&host.path("/proc"))).filter(mps::MpsStatus::running);
        let (py, py_ms) = python.join().unwrap_or_else(|_| {
            (
                PythonFacts {
                    status: ProbeStatus::unavailable("the Python probe panicked"),
                    ..PythonFacts::default()
                },
                0,
            )
        });
        timings.insert(PythonProbe::NAME.to_owned(), py_ms);
        // The CUDA probe waits for Python: pip wheels' libraries live in its site-packages.
        let cuda = CudaProbe {
            ldconfig,
            site_packages: py
                .interpreter
                .as_ref()
                .map(|i| i.site_packages.iter().map(Into::into).collect())
                .unwrap_or_default(),
            packages: py.packages.clone(),
        };
        facts.cuda = timed(&cuda, host, &mut timings);
        facts.python = py;
        let (g, g_ms) = gpu.join().unwrap_or_else(|_| {
            (
                GpuFacts {
                    status: ProbeStatus::unavailable("the GPU probe panicked"),
                    ..GpuFacts::default()
                },
                0,
            )
        });
        timings.insert("gpus".to_owned(), g_ms);
        facts.gpus = g;
    });
    facts.timings_ms = timings;
    facts
}

fn timed<P: Probe>(p: &P, host: &Host, t: &mut BTreeMap<String, u64>) -> P::Facts {
    let start = Instant::now();
    let f = p.probe(host);
    t.insert(P::NAME.to_owned(), millis(start));
    f
}

fn millis(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Why an export could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{path} is not a gpu-doctor environment export: {reason}")]
    Parse { path: String, reason: String },
    #[error("{path} was written with schema_version {found}; this gpu-doctor reads {expected}")]
    Schema {
        path: String,
        found: u64,
        expected: u32,
    },
}

impl ExportError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            ExportError::Io { .. } => {
                "check the path; write an export with `gpu-doctor check --export FILE`"
            }
            ExportError::Parse { .. } | ExportError::Schema { .. } => {
                "re-create it on that machine with `gpu-doctor check --export FILE` (same gpu-doctor version on both sides)"
            }
        }
    }
}

/// Most bytes read from an export file: real ones are tens of KiB.
pub const MAX_EXPORT_BYTES: u64 = 16 << 20;

impl EnvFacts {
    /// Reads an export written by `check --export`, bounded in size.
    pub fn read_export(path: &Path) -> Result<EnvFacts, ExportError> {
        use std::io::Read;
        let shown = path.display().to_string();
        let io = |e: std::io::Error| ExportError::Io {
            path: shown.clone(),
            reason: e.to_string(),
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut text = String::new();
        file.take(MAX_EXPORT_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(io)?;
        if text.len() as u64 > MAX_EXPORT_BYTES {
            return Err(ExportError::Parse {
                path: shown,
                reason: format!("larger than {} MiB", MAX_EXPORT_BYTES >> 20),
            });
        }
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| ExportError::Parse {
                path: shown.clone(),
                reason: e.to_string(),
            })?;
        let found = value["schema_version"].as_u64().unwrap_or(0);
        if found != u64::from(gpu_doctor_model::SCHEMA_VERSION) {
            return Err(ExportError::Schema {
                path: shown,
                found,
                expected: gpu_doctor_model::SCHEMA_VERSION,
            });
        }
        serde_json::from_value(value).map_err(|e| ExportError::Parse {
            path: shown,
            reason: e.to_string(),
        })
    }
}
