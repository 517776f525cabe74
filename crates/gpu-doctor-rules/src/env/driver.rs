//! Driver rules: the kernel module is loaded (GD400), its version matches the user-space
//! libraries (GD401), no toolkit stub stands in for the driver (GD402), the device nodes
//! exist and this user may open them (GD410), NVML answers (GD417), and what CUDA the
//! driver runs; plus the toolkit's nvcc against the driver (GD414).

use super::checks::Checklist;
use super::knowledge::{Knowledge, Version};
use gpu_doctor_env::{EnvFacts, LibraryCopy, ProbeStatus};
use gpu_doctor_model::{Cause, ComputeCapability, Evidence, Finding, Severity};

/// What several rules need, worked out once.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The driver version: the kernel module's, else NVML's.
    pub driver: Option<Version>,
    /// The highest CUDA the driver runs: NVML's answer, else from the branch table.
    pub driver_cuda: Option<Version>,
    /// Where `driver_cuda` came from, for messages.
    pub driver_cuda_source: &'static str,
    /// Evidence that there is NVIDIA hardware here (PCI, NVML or a loaded module).
    pub has_gpu: bool,
    /// GPUs NVML lists: (index, name, compute capability, uuid).
    pub gpus: Vec<(u32, String, Option<ComputeCapability>, String)>,
}

impl Context {
    pub fn new(facts: &EnvFacts) -> Context {
        let k = Knowledge::get();
        let inv = facts.gpus.inventory.as_ref();
        let driver = facts
            .driver
            .kernel_module
            .as_ref()
            .and_then(|m| Version::parse(&m.version))
            .or_else(|| {
                inv.and_then(|i| i.driver_version.value())
                    .and_then(|v| Version::parse(v))
            });
        let nvml_cuda = inv
            .and_then(|i| i.cuda_driver_version.value())
            .and_then(|v| Version::parse(v));
        let (driver_cuda, driver_cuda_source) = match (nvml_cuda, &driver) {
            (Some(c), _) => (Some(c), "NVML"),
            (None, Some(d)) => (k.driver_max_cuda(d).cloned(), "its branch"),
            (None, None) => (None, ""),
        };
        let gpus: Vec<_> = inv
            .map(|i| {
                i.devices
                    .iter()
                    .map(|d| {
                        (
                            d.index.0,
                            d.name.clone(),
                            d.compute_capability.get(),
                            d.uuid.0.clone(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Context {
            has_gpu: !facts.driver.pci_gpus.is_empty()
                || !gpus.is_empty()
                || facts.driver.kernel_module.is_some(),
            driver,
            driver_cuda,
            driver_cuda_source,
            gpus,
        }
    }

    /// `driver 470.182.03 runs CUDA ≤ 11.4`.
    pub fn driver_phrase(&self) -> String {
        match (&self.driver, &self.driver_cuda) {
            (Some(d), Some(c)) => format!("driver {d} runs CUDA ≤ {c}"),
            (Some(d), None) => format!("driver {d}"),
            (None, Some(c)) => format!("the driver runs CUDA ≤ {c}"),
            (None, None) => "no driver".to_owned(),
        }
    }
}

/// The version the loader would actually use: the first non-stub copy of the `.so.1`.
fn first_real<'a>(copies: &'a [LibraryCopy], soname: &str) -> Option<&'a LibraryCopy> {
    copies.iter().find(|c| c.name == soname && !c.stub)
}

fn full_version(copy: &LibraryCopy) -> Option<Version> {
    copy.version
        .as_deref()
        .filter(|v| v.contains('.'))
        .and_then(Version::parse)
}

pub fn check(facts: &EnvFacts, ctx: &Context, list: &mut Checklist) {
    let d = &facts.driver;
    let module = d.kernel_module.as_ref();
    let gpu_reason = facts.gpus.status.reason();

    // driver.kernel_module
    match module {
        Some(m) => list.pass(
            "driver.kernel_module",
            format!("NVIDIA kernel module {} ({})", m.version, m.flavor),
        ),
        None if !ctx.has_gpu => list.skip(
            "driver.kernel_module",
            "no NVIDIA GPU and no NVIDIA driver on this machine",
        ),
        None => {
            let n = d.pci_gpus.len().max(ctx.gpus.len());
            let mut f = Finding::new(
                "GD400",
                Cause::EnvNoDriver,
                Severity::Error,
                format!(
                    "{n} NVIDIA GPU(s) on the PCI bus but the nvidia kernel module is not loaded"
                ),
            )
            .with_evidence(Evidence {
                source: "/proc/driver/nvidia/version".into(),
                text: "missing".into(),
                ..Evidence::default()
            })
            .with_remedy(
                "Load the module, and look at why it did not load",
                Some("sudo modprobe nvidia && sudo dmesg | grep -iE 'nvidia|nvrm' | tail".into()),
                Some(
                    "after a kernel update, rebuild it (`sudo dkms autoinstall`); with Secure Boot, \
                     sign it or disable Secure Boot (`mokutil --sb-state`)"
                        .into(),
                ),
            )
            .with_remedy(
                "Install the driver if it is not installed",
                Some("sudo apt install nvidia-driver-580-server".into()),
                Some("or your distribution's package for the R580 long-term branch".into()),
            );
            for bus in d.pci_gpus.iter().take(8) {
                f = f.with_evidence(Evidence {
                    source: "/sys/bus/pci/devices".into(),
                    text: format!("{bus}: NVIDIA display/3D controller"),
                    ..Evidence::default()
                });
            }
            list.problem("driver.kernel_module", f);
        }
    }

    // driver.version_mismatch
    let nvml = first_real(&d.nvml_libraries, "libnvidia-ml.so.1");
    let cuda = first_real(&d.cuda_libraries, "libcuda.so.1");
    match module {
        None => list.skip(
            "driver.version_mismatch",
            "no kernel module to compare with",
        ),
        Some(m) => {
            let kernel = Version::parse(&m.version);
            let mut mismatches = Vec::new();
            for (what, copy) in [("libnvidia-ml.so.1", nvml), ("libcuda.so.1", cuda)] {
                if let Some(c) = copy
                    && let Some(v) = full_version(c)
                    && Some(&v) != kernel.as_ref()
                {
                    mismatches.push(format!(
                        "{what} {v} ({})",
                        c.resolved.as_deref().unwrap_or(&c.path)
                    ));
                }
            }
            if let Some(v) = facts
                .gpus
                .inventory
                .as_ref()
                .and_then(|i| i.driver_version.value())
                .and_then(|v| Version::parse(v))
                && Some(&v) != kernel.as_ref()
            {
                mismatches.push(format!("NVML reports driver {v}"));
            }
            let nvml_mismatch_text = gpu_reason.filter(|r| r.contains("mismatch"));
            if mismatches.is_empty() && nvml_mismatch_text.is_none() {
                let lib = nvml.and_then(full_version).map_or_else(
                    || "no user-space library version to compare".to_owned(),
                    |v| format!("libnvidia-ml {v}"),
                );
                list.pass(
                    "driver.version_mismatch",
                    format!("kernel module {} matches {lib}", m.version),
                );
            } else {
                let mut f = Finding::new(
                    "GD401",
                    Cause::EnvNvmlMismatch,
                    Severity::Error,
                    format!(
                        "kernel module {} but {}: NVML and CUDA fail with \"Driver/library version mismatch\"",
                        m.version,
                        if mismatches.is_empty() { "NVML reports a mismatch".to_owned() } else { mismatches.join(", ") }
                    ),
                )
                .with_evidence(Evidence {
                    source: "/proc/driver/nvidia/version".into(),
                    text: m.line.clone(),
                    ..Evidence::default()
                });
                for mm in &mismatches {
                    f = f.with_evidence(Evidence {
                        source: "loader".into(),
                        text: mm.clone(),
                        ..Evidence::default()
                    });
                }
                if let Some(r) = nvml_mismatch_text {
                    f = f.with_evidence(Evidence {
                        source: "nvml".into(),
                        text: r.to_owned(),
                        ..Evidence::default()
                    });
                }
                f = f
                    .with_remedy(
                        "Reboot, so the kernel module and the libraries come from the same driver",
                        Some("sudo reboot".into()),
                        Some("the driver packages were upgraded (often by unattended-upgrades) while the old module stayed loaded".into()),
                    )
                    .with_remedy(
                        "Or, with no GPU process running, reload the modules",
                        Some("sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia nvidia_uvm".into()),
                        None,
                    )
                    .with_remedy(
                        "Keep it from happening again: hold the driver packages",
                        Some("sudo apt-mark hold 'nvidia-*' 'libnvidia-*'".into()),
                        None,
                    );
                list.problem("driver.version_mismatch", f);
            }
        }
    }

    // driver.stub
    let stub_first = d
        .nvml_libraries
        .iter()
        .chain(&d.cuda_libraries)
        .filter(|c| c.name.ends_with(".so.1"))
        .fold(Vec::new(), |mut firsts: Vec<&LibraryCopy>, c| {
            if !firsts.iter().any(|f| f.name == c.name) {
                firsts.push(c);
            }
            firsts
        })
        .into_iter()
        .filter(|c| c.stub)
        .collect::<Vec<_>>();
    let stub_dirs: Vec<&str> = facts
        .variables
        .get("LD_LIBRARY_PATH")
        .map(|v| {
            v.split(':')
                .filter(|p| gpu_doctor_env::is_stub(p))
                .collect()
        })
        .unwrap_or_default();
    if stub_first.is_empty() && stub_dirs.is_empty() {
        if nvml.is_none() && module.is_some() {
            let f = Finding::new(
                "GD413",
                Cause::EnvLibMissing,
                Severity::Error,
                "the kernel module is loaded but no libnvidia-ml.so.1 is on the loader path: NVML, nvidia-smi and CUDA cannot start",
            )
            .with_remedy(
                "Install the driver's user-space libraries, or run the container with the NVIDIA runtime",
                Some("docker run --gpus all ...".into()),
                Some("outside containers: the `libnvidia-compute-<branch>` package matching the kernel module".into()),
            );
            list.problem("driver.libraries", f);
        } else if nvml.is_some() {
            list.pass(
                "driver.libraries",
                format!(
                    "libnvidia-ml.so.1 → {}",
                    nvml.map_or("?", |c| c.resolved.as_deref().unwrap_or(&c.path))
                ),
            );
        } else {
            list.skip("driver.libraries", "no driver libraries (no driver)");
        }
    } else {
        let mut f = Finding::new(
            "GD402",
            Cause::EnvLibMissing,
            Severity::Error,
            if stub_first.is_empty() {
                format!(
                    "LD_LIBRARY_PATH has a toolkit stubs folder ({}): a stub libcuda/libnvidia-ml can shadow the driver's (CUDA error 34, \"CUDA driver is a stub library\")",
                    stub_dirs.join(", ")
                )
            } else {
                format!(
                    "the loader picks a toolkit stub instead of the driver: {}",
                    stub_first
                        .iter()
                        .map(|c| format!("{} → {}", c.name, c.path))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
        );
        for c in &stub_first {
            f = f.with_evidence(Evidence {
                source: c.origin.clone(),
                text: c.path.clone(),
                ..Evidence::default()
            });
        }
        let kept: Vec<&str> = facts
            .variables
            .get("LD_LIBRARY_PATH")
            .map(|v| {
                v.split(':')
                    .filter(|p| !p.is_empty() && !gpu_doctor_env::is_stub(p))
                    .collect()
            })
            .unwrap_or_default();
        f = f.with_remedy(
            "Take the stubs folder out of LD_LIBRARY_PATH (stubs are for linking only) and remove any libcuda.so.1 / libnvidia-ml.so.1 link made inside it",
            Some(format!("export LD_LIBRARY_PATH={}", kept.join(":"))),
            None,
        );
        list.problem("driver.stub", f);
    }

    // driver.cuda_version
    match (&ctx.driver, &ctx.driver_cuda) {
        (Some(d), Some(c)) => list.pass(
            "driver.cuda_version",
            format!(
                "driver {d} runs CUDA ≤ {c} (from {})",
                ctx.driver_cuda_source
            ),
        ),
        (Some(d), None) => list.skip(
            "driver.cuda_version",
            format!("driver {d} is not in the branch table and NVML did not say"),
        ),
        _ => list.skip("driver.cuda_version", "no driver"),
    }

    // driver.device_nodes
    if module.is_none() {
        list.skip("driver.device_nodes", "no kernel module");
    } else {
        let has = |p: &str| d.device_nodes.iter().any(|n| n.path == p);
        let mut missing: Vec<String> = ["/dev/nvidiactl", "/dev/nvidia-uvm"]
            .into_iter()
            .filter(|p| !has(p))
            .map(str::to_owned)
            .collect();
        if !d.device_nodes.iter().any(|n| {
            n.path
                .strip_prefix("/dev/nvidia")
                .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit()))
        }) {
            missing.push("/dev/nvidia0 (no per-GPU node)".into());
        }
        let denied: Vec<String> = d
            .device_nodes
            .iter()
            .filter(|n| !n.accessible)
            .map(|n| format!("{} ({} uid {} gid {})", n.path, n.mode, n.uid, n.gid))
            .collect();
        if missing.is_empty() && denied.is_empty() {
            list.pass(
                "driver.device_nodes",
                format!(
                    "{} /dev/nvidia* nodes, all readable and writable",
                    d.device_nodes.len()
                ),
            );
        } else {
            let mut f = Finding::new(
                "GD410",
                Cause::EnvNoDriver,
                Severity::Error,
                if missing.is_empty() {
                    format!("this user may not open {}", denied.join(", "))
                } else {
                    format!(
                        "missing device nodes: {}: CUDA cannot start",
                        missing.join(", ")
                    )
                },
            );
            if !missing.is_empty() {
                f = f.with_remedy(
                    "Create the missing nodes (loads nvidia-uvm too)",
                    Some("sudo nvidia-modprobe -u -c=0".into()),
                    Some("in a container: start it with the NVIDIA runtime (`--gpus all`) so the nodes are passed in".into()),
                );
            }
            if let Some(gid) = d.device_nodes.iter().find(|n| !n.accessible).map(|n| n.gid) {
                f = f.with_remedy(
                    format!("Add this user to the group that owns the nodes (gid {gid}), then log in again"),
                    Some(format!("sudo usermod -aG $(getent group {gid} | cut -d: -f1) $USER")),
                    None,
                );
            }
            list.problem("driver.device_nodes", f);
        }
    }

    // gpus.nvml
    match &facts.gpus.status {
        ProbeStatus::Ok => {
            let names: Vec<String> = ctx
                .gpus
                .iter()
                .map(|(i, n, cc, _)| match cc {
                    Some(cc) => format!("{i}: {n} (CC {cc})"),
                    None => format!("{i}: {n}"),
                })
                .collect();
            list.pass(
                "gpus.nvml",
                if names.is_empty() {
                    "NVML answers; no GPU".to_owned()
                } else {
                    format!("{} GPU(s): {}", names.len(), names.join(", "))
                },
            );
        }
        ProbeStatus::Unavailable { reason } if !ctx.has_gpu => {
            list.skip("gpus.nvml", format!("no GPU to read ({reason})"));
        }
        ProbeStatus::Unavailable { reason } => {
            let f = Finding::new(
                "GD417",
                Cause::EnvNoDriver,
                Severity::Error,
                format!("NVML cannot be opened, so GPU health cannot be read: {reason}"),
            )
            .confidence(0.6)
            .with_remedy(
                "Check that nvidia-smi works; the driver checks above say why it does not",
                Some("nvidia-smi".into()),
                None,
            );
            list.problem("gpus.nvml", f);
        }
    }

    toolkit(facts, ctx, list);
}

/// `cuda.toolkit` and `cuda.libraries`.
fn toolkit(facts: &EnvFacts, ctx: &Context, list: &mut Checklist) {
    let c = &facts.cuda;
    if c.toolkits.is_empty() {
        list.skip(
            "cuda.toolkit",
            "no CUDA toolkit (nvcc) found; not needed to run pip or conda frameworks, which bring their own CUDA runtime",
        );
    } else {
        let on_path = c
            .nvcc_on_path
            .as_deref()
            .and_then(|p| c.toolkits.iter().find(|t| t.nvcc.as_deref() == Some(p)));
        let shown: Vec<String> = c
            .toolkits
            .iter()
            .map(|t| {
                format!(
                    "{} {}",
                    t.path,
                    t.version.as_deref().unwrap_or("(version unknown)")
                )
            })
            .collect();
        let newer = on_path.and_then(|t| {
            let v = Version::parse(t.version.as_deref()?)?;
            let max = ctx.driver_cuda.as_ref()?;
            (v.major_minor() > *max).then_some((t, v))
        });
        if let Some((t, v)) = newer {
            let k = Knowledge::get();
            let need = k
                .full_support_driver(&v)
                .map_or_else(String::new, |d| format!(" (needs driver ≥ {d})"));
            let f = Finding::new(
                "GD414",
                Cause::EnvDriverTooOld,
                Severity::Warn,
                format!(
                    "nvcc on PATH is CUDA {}{need}, but {}: what it builds will not run without minor-version compatibility",
                    v.major_minor(),
                    ctx.driver_phrase()
                ),
            )
            .with_evidence(Evidence {
                source: "PATH".into(),
                text: t.nvcc.clone().unwrap_or_default(),
                ..Evidence::default()
            })
            .with_remedy(
                "Put a toolkit the driver runs first on PATH, or upgrade the driver",
                ctx.driver_cuda.as_ref().and_then(|max| {
                    c.toolkits
                        .iter()
                        .find(|t| t.version.as_deref().and_then(Version::parse).is_some_and(|tv| tv.major_minor() <= *max))
                        .map(|t| format!("export PATH={}/bin:$PATH CUDA_HOME={}", t.path, t.path))
                }),
                None,
            );
            list.problem("cuda.toolkit", f);
        } else {
            list.pass("cuda.toolkit", shown.join("; "));
        }
    }
    if c.libraries.is_empty() {
        list.skip(
            "cuda.libraries",
            "no libcudart, cuDNN, NCCL or cuBLAS copies found outside Python",
        );
    } else {
        let parts: Vec<String> = c
            .libraries
            .iter()
            .map(|(family, copies)| {
                let mut versions: Vec<String> = copies
                    .iter()
                    .map(|c| format!("{} ({})", c.version.as_deref().unwrap_or("?"), c.origin))
                    .collect();
                versions.dedup();
                format!("{family} {}", versions.join(", "))
            })
            .collect();
        list.pass("cuda.libraries", parts.join("; "));
    }
}
