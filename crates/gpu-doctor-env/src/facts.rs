//! [`EnvFacts`]: everything the probes found, as plain serde data.
//!
//! This is what `gpu-doctor check --export FILE` writes and what `gpu-doctor env diff`
//! compares, so field names are an interface (documented in `docs/check.md`). Absence is
//! explicit: a probe that could not run says why in a `status`, it never leaves a field empty
//! as if the thing were not there.

use gpu_doctor_model::{Inventory, Sample};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole environment of one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct EnvFacts {
    pub schema_version: u32,
    pub host: HostFacts,
    pub driver: DriverFacts,
    pub cuda: CudaFacts,
    pub python: PythonFacts,
    pub gpus: GpuFacts,
    pub variables: VariableFacts,
    pub kernel_log: KernelLogFacts,
    /// The MPS control daemon and servers, while one runs (left out otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mps: Option<crate::mps::MpsStatus>,
    /// Wall time of each probe in milliseconds (`driver`, `cuda`, `python`, `gpus`, ...).
    #[serde(default)]
    pub timings_ms: BTreeMap<String, u64>,
}

/// The operating system, for `env diff` and the report header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct HostFacts {
    pub hostname: Option<String>,
    /// `PRETTY_NAME` from `/etc/os-release`.
    pub os: Option<String>,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: Option<String>,
    /// `model name` from `/proc/cpuinfo`.
    pub cpu: Option<String>,
    pub cpu_count: Option<u32>,
}

/// Whether a probe ran, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ProbeStatus {
    #[default]
    Ok,
    /// The probe could not run (no driver, no Python, no permission); the reason is for people.
    Unavailable { reason: String },
}

impl ProbeStatus {
    pub fn unavailable(reason: impl Into<String>) -> Self {
        ProbeStatus::Unavailable {
            reason: reason.into(),
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            ProbeStatus::Ok => None,
            ProbeStatus::Unavailable { reason } => Some(reason),
        }
    }
}

/// The kernel module, the user-space driver libraries and the device nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DriverFacts {
    /// The loaded kernel module, from `/proc/driver/nvidia/version`; `None` when not loaded.
    pub kernel_module: Option<KernelModule>,
    /// NVIDIA display/3D controllers on the PCI bus (`/sys/bus/pci/devices/*`), by bus id.
    /// Lets `check` tell "no GPU here" from "a GPU but no driver".
    pub pci_gpus: Vec<String>,
    /// Every `libnvidia-ml.so*` the loader could pick, in the order it would try them.
    pub nvml_libraries: Vec<LibraryCopy>,
    /// Every `libcuda.so*` the loader could pick, in the order it would try them.
    pub cuda_libraries: Vec<LibraryCopy>,
    /// `/dev/nvidia*` nodes.
    pub device_nodes: Vec<DeviceNode>,
}

/// The loaded NVIDIA kernel module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelModule {
    /// e.g. `580.159.04`.
    pub version: String,
    /// `open` (the open GPU kernel modules) or `proprietary`.
    pub flavor: String,
    /// The `NVRM version:` line, verbatim.
    pub line: String,
}

/// One copy of a shared library on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryCopy {
    /// The name asked for, e.g. `libcudart.so.13`.
    pub name: String,
    /// Where it was found (as the loader sees it, before symlinks).
    pub path: String,
    /// The file the symlinks end at, e.g. `.../libcudart.so.13.0.96`.
    pub resolved: Option<String>,
    /// The version read from the resolved file name (or a header / wheel next to it).
    pub version: Option<String>,
    /// How it is found: `LD_LIBRARY_PATH`, `ldconfig`, `toolkit`, `conda`, `pip`.
    pub origin: String,
    /// A link-time stub from a toolkit's `stubs/` folder, which fails at run time.
    #[serde(default)]
    pub stub: bool,
}

/// A `/dev/nvidia*` node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceNode {
    pub path: String,
    /// Permission bits in octal, e.g. `0666`.
    pub mode: String,
    pub uid: u32,
    pub gid: u32,
    /// Whether this user may open it for reading and writing (owner, group or other bits).
    pub accessible: bool,
}

/// CUDA toolkits and the libraries frameworks load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CudaFacts {
    /// Every toolkit found (`/usr/local/cuda*`, `CUDA_HOME`, `PATH`, conda).
    pub toolkits: Vec<Toolkit>,
    /// The `nvcc` the shell runs (first on `PATH`).
    pub nvcc_on_path: Option<String>,
    /// Copies of libcudart, libcudnn, libnccl and libcublas, grouped by family.
    pub libraries: BTreeMap<String, Vec<LibraryCopy>>,
    /// Versions read from headers (`cudnn_version.h`, `nccl.h`, `cublas_api.h`), by family.
    pub headers: BTreeMap<String, Vec<HeaderVersion>>,
}

/// A CUDA toolkit on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolkit {
    /// Its root, e.g. `/usr/local/cuda-13.0`.
    pub path: String,
    pub nvcc: Option<String>,
    /// e.g. `13.0.88` (nvcc's version when known).
    pub version: Option<String>,
    /// `/usr/local`, `CUDA_HOME`, `PATH` or `conda`.
    pub origin: String,
}

/// A library version read from a header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderVersion {
    pub path: String,
    pub version: String,
}

/// The Python interpreter and the frameworks it imports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PythonFacts {
    pub status: ProbeStatus,
    pub interpreter: Option<Interpreter>,
    /// Installed `nvidia-*` wheels and frameworks' distributions, name → version.
    #[serde(default)]
    pub packages: BTreeMap<String, String>,
    /// torch, tensorflow, jax, cupy: only those that are installed.
    #[serde(default)]
    pub frameworks: BTreeMap<String, Framework>,
}

/// The interpreter the probe ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interpreter {
    /// What was asked for (`python3` or `--python PATH`) and what it resolved to.
    pub executable: String,
    pub version: String,
    pub prefix: String,
    /// A virtual environment is active (`sys.prefix != sys.base_prefix`).
    pub venv: bool,
    /// A conda environment (its prefix has `conda-meta`).
    pub conda: bool,
    /// `site-packages` folders, where pip's `nvidia-*` wheels live.
    #[serde(default)]
    pub site_packages: Vec<String>,
}

/// One framework as its own short-lived interpreter saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Framework {
    /// `None` when the import failed.
    pub version: Option<String>,
    /// The import error, verbatim (last line).
    pub import_error: Option<String>,
    /// The CUDA it was built with (`torch.version.cuda`); `None` for a CPU build.
    pub cuda_build: Option<String>,
    /// Whether the build has CUDA at all.
    pub is_cuda_build: Option<bool>,
    pub cudnn: Option<String>,
    pub nccl: Option<String>,
    /// Compiled architectures, e.g. `sm_90`, `compute_90` (PTX).
    #[serde(default)]
    pub arch_list: Vec<String>,
    /// Whether a tiny computation on the GPU succeeded.
    pub cuda_works: Option<bool>,
    /// Why it did not, verbatim.
    pub cuda_error: Option<String>,
    /// Devices the framework sees.
    #[serde(default)]
    pub devices: Vec<FrameworkDevice>,
    /// Driver's CUDA version as the framework sees it (e.g. `CuPy`'s `driverGetVersion`).
    pub driver_cuda: Option<String>,
    /// CUDA libraries mapped into the process after the import, by family.
    #[serde(default)]
    pub loaded_libraries: BTreeMap<String, Vec<String>>,
    /// How long the probe interpreter took, in milliseconds.
    pub probe_ms: Option<u64>,
    /// When this result was probed (Unix seconds), if it came from the probe cache rather
    /// than a fresh interpreter (see `probe_cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at: Option<u64>,
}

/// A device as a framework reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameworkDevice {
    pub name: String,
    /// e.g. `9.0`.
    pub capability: Option<String>,
}

/// What NVML (or the chosen source) said about the GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GpuFacts {
    pub status: ProbeStatus,
    pub inventory: Option<Inventory>,
    pub sample: Option<Sample>,
}

/// The environment variables that change what CUDA does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct VariableFacts {
    /// Only variables that are set (an empty value is kept: it means something).
    pub set: BTreeMap<String, String>,
}

impl VariableFacts {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.set.get(name).map(String::as_str)
    }
}

/// Xid lines from the kernel log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct KernelLogFacts {
    pub status: ProbeStatus,
    /// `dmesg`, `journalctl -k` or the file named by `GPU_DOCTOR_KERNEL_LOG`.
    pub source: Option<String>,
    /// The most recent Xid lines (at most [`crate::kernel_log::MAX_XIDS`]).
    pub xids: Vec<XidLine>,
    /// Other driver lines that matter: "fallen off the bus", "version mismatch", AER.
    #[serde(default)]
    pub other: Vec<String>,
}

/// One `NVRM: Xid (PCI:...): N, ...` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct XidLine {
    pub xid: u32,
    /// e.g. `0000:05:00`.
    pub pci: String,
    /// 1-based line number in the log.
    pub line: u64,
    pub text: String,
}
