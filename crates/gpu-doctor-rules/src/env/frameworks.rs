//! Framework rules: for torch, tensorflow, jax and cupy as their own interpreter saw them:
//! the import works (GD413 for a missing CUDA library), the build has CUDA when there is a
//! GPU (GD404), the driver runs the build's CUDA (GD403), the build has code for every GPU's
//! compute capability (GD405), and a tiny computation on the GPU works (GD412).

use super::checks::Checklist;
use super::driver::Context;
use super::knowledge::{
    DriverVerdict, Knowledge, TorchVariant, Version, arch_runs_on, driver_runs,
};
use gpu_doctor_env::{EnvFacts, Framework, ProbeStatus};
use gpu_doctor_model::{Cause, Evidence, Finding, Severity};

const ORDER: [&str; 4] = ["torch", "tensorflow", "jax", "cupy"];

pub fn check(facts: &EnvFacts, ctx: &Context, list: &mut Checklist) {
    let py = &facts.python;
    match (&py.status, &py.interpreter) {
        (ProbeStatus::Unavailable { reason }, _) => {
            list.skip(
                "python.interpreter",
                format!("no Python to probe: {reason}"),
            );
            return;
        }
        (_, Some(i)) => {
            let kind = if i.conda {
                "conda env"
            } else if i.venv {
                "venv"
            } else {
                "system, no venv active"
            };
            list.pass(
                "python.interpreter",
                format!("Python {} at {} ({kind})", i.version, i.executable),
            );
        }
        (_, None) => list.skip("python.interpreter", "no interpreter information"),
    }
    if py.frameworks.is_empty() {
        list.skip(
            "python.frameworks",
            "none of torch, tensorflow, jax, cupy is installed",
        );
        return;
    }
    for name in ORDER {
        if let Some(fw) = py.frameworks.get(name) {
            framework(name, fw, facts, ctx, list);
        }
    }
}

fn evidence(source: &str, text: impl Into<String>) -> Evidence {
    Evidence {
        source: source.to_owned(),
        text: text.into(),
        ..Evidence::default()
    }
}

/// The label a framework goes by in messages: `torch 2.3.0+cu121`.
fn label(name: &str, fw: &Framework) -> String {
    format!("{name} {}", fw.version.as_deref().unwrap_or("?"))
}

fn framework(name: &str, fw: &Framework, facts: &EnvFacts, ctx: &Context, list: &mut Checklist) {
    let k = Knowledge::get();
    // <fw>.import
    if let Some(err) = &fw.import_error {
        let missing_lib = err.contains("cannot open shared object") || err.contains(".so");
        let mut f = Finding::new(
            if missing_lib { "GD413" } else { "GD412" },
            if missing_lib {
                Cause::EnvLibMissing
            } else {
                Cause::Other
            },
            Severity::Error,
            format!("`import {name}` fails: {err}"),
        )
        .with_evidence(evidence("python", err.clone()));
        if missing_lib {
            let lib = err
                .split_whitespace()
                .find(|w| w.contains(".so"))
                .map_or("the library", |w| {
                    w.trim_matches(|c: char| c == ':' || c == '\'' || c == '"')
                });
            let major = lib
                .rsplit(".so.")
                .next()
                .and_then(|m| m.split('.').next())
                .unwrap_or("");
            f = f.with_remedy(
                format!("Install the CUDA runtime wheel {name} was built for ({lib} is missing), or the {name} build for the CUDA you have"),
                Some(format!("pip install nvidia-cuda-runtime-cu{major}")),
                Some("a cu12 package needs libcudart.so.12, a cu13 one libcudart.so.13; the SONAME's major must match".into()),
            );
        } else {
            f = f.with_remedy(
                format!("Reinstall {name} in this environment"),
                Some(format!("pip install --force-reinstall {name}")),
                None,
            );
        }
        list.problem(format!("{name}.import"), f);
        return;
    }
    let version = fw.version.clone().unwrap_or_default();
    let how = if fw.cached_at.is_some() {
        format!(
            "{} ms when probed; reused from the probe cache, `check --fresh` probes again",
            fw.probe_ms.unwrap_or(0)
        )
    } else {
        format!("{} ms", fw.probe_ms.unwrap_or(0))
    };
    list.pass(
        format!("{name}.import"),
        format!("{} imports ({how})", label(name, fw)),
    );

    // <fw>.cuda_build
    let cuda_build = fw.cuda_build.as_deref().and_then(Version::parse);
    let is_cuda = fw.is_cuda_build.unwrap_or(cuda_build.is_some());
    if !is_cuda {
        if ctx.has_gpu {
            let mut f = Finding::new(
                "GD404",
                Cause::EnvTorchCpuBuild,
                Severity::Error,
                format!(
                    "{} is a CPU-only build, but this machine has an NVIDIA GPU",
                    label(name, fw)
                ),
            )
            .with_evidence(evidence(
                "python",
                format!(
                    "{name}: no CUDA in the build ({})",
                    fw.cuda_error.as_deref().unwrap_or("CUDA build: none")
                ),
            ));
            let (action, cmd) = cpu_build_fix(name, &version, ctx, k);
            f = f.with_remedy(action, Some(cmd), None);
            list.problem(format!("{name}.cuda_build"), f);
        } else {
            list.pass(
                format!("{name}.cuda_build"),
                format!("{} is a CPU build (no GPU here)", label(name, fw)),
            );
        }
        return;
    }
    let build_text = cuda_build
        .as_ref()
        .map_or_else(|| "an unknown CUDA".to_owned(), |v| format!("CUDA {v}"));
    let cudnn = fw
        .cudnn
        .as_deref()
        .map_or_else(String::new, |c| format!(", cuDNN {c}"));
    list.pass(
        format!("{name}.cuda_build"),
        format!("{} is built with {build_text}{cudnn}", label(name, fw)),
    );

    // <fw>.driver
    let driver_ok = match (&cuda_build, &ctx.driver_cuda) {
        (Some(need), Some(max)) => match driver_runs(k, ctx.driver.as_ref(), max, need) {
            DriverVerdict::Supported => {
                list.pass(
                    format!("{name}.driver"),
                    format!(
                        "{}; {} needs {}",
                        ctx.driver_phrase(),
                        label(name, fw),
                        need.major_minor()
                    ),
                );
                true
            }
            DriverVerdict::MinorCompat { floor } => {
                let f = Finding::new(
                    "GD403",
                    Cause::EnvDriverTooOld,
                    Severity::Warn,
                    format!(
                        "{}; {} needs CUDA {}: it runs under minor-version compatibility (driver ≥ {floor}), but PTX JIT and the newest APIs fail",
                        ctx.driver_phrase(), label(name, fw), need.major_minor()
                    ),
                )
                .with_remedy(
                    format!("Upgrade the driver to one that runs CUDA {} fully", need.major_minor()),
                    k.full_support_driver(need).map(|d| format!("sudo apt install nvidia-driver-{}-server  # ≥ {d}", d.major().max(580))),
                    None,
                );
                list.problem(format!("{name}.driver"), f);
                true
            }
            DriverVerdict::TooOld { minimum, full } => {
                let needs = match (&minimum, &full) {
                    (Some(m), Some(fl)) if m != fl => format!(
                        "≥ {m} (≥ {fl} for full CUDA {} support)",
                        need.major_minor()
                    ),
                    (Some(m), _) => format!("≥ {m}"),
                    (None, Some(fl)) => format!("≥ {fl}"),
                    (None, None) => format!("a driver for CUDA {}", need.major_minor()),
                };
                let mut f = Finding::new(
                    "GD403",
                    Cause::EnvDriverTooOld,
                    Severity::Error,
                    format!("{}; {} needs {needs}", ctx.driver_phrase(), label(name, fw)),
                )
                .with_evidence(evidence("python", format!("{name} CUDA build {need}")));
                if let Some(e) = &fw.cuda_error {
                    f = f.with_evidence(evidence("python", e.clone()));
                }
                if name == "torch"
                    && let Some(v) = best_torch_variant(&version, ctx, k, |_| true)
                {
                    f = f.with_remedy(
                        format!(
                            "Install the torch {} build for a CUDA this driver runs ({})",
                            v.torch, v.variant
                        ),
                        Some(pip_torch(&version, &v.variant)),
                        None,
                    );
                }
                f = f.with_remedy(
                    format!("Or upgrade the driver to {needs}"),
                    Some("sudo apt install nvidia-driver-580-server".into()),
                    Some("or your distribution's package for a branch that runs this CUDA; then reboot".into()),
                );
                list.problem(format!("{name}.driver"), f);
                false
            }
        },
        (_, None) => {
            list.skip(format!("{name}.driver"), "no driver to compare with");
            true
        }
        (None, _) => {
            list.skip(
                format!("{name}.driver"),
                format!("{name} does not say which CUDA it was built with"),
            );
            true
        }
    };

    // <fw>.arch
    arch(name, fw, &version, ctx, k, list);

    // tensorflow: the configuration it was tested with, for the record.
    if name == "tensorflow"
        && let Some(cfg) = Version::parse(&version).and_then(|v| k.tensorflow_config(&v))
    {
        list.pass(
            "tensorflow.tested",
            format!(
                "tensorflow {} was tested with CUDA {} and cuDNN {}",
                cfg.tensorflow, cfg.cuda, cfg.cudnn
            ),
        );
    }

    // <fw>.libraries: which copies it actually mapped.
    let loaded: Vec<String> = fw
        .loaded_libraries
        .iter()
        .filter(|(fam, _)| !matches!(fam.as_str(), "cuda" | "nvml"))
        .map(|(fam, paths)| format!("{fam} {}", paths.join(", ")))
        .collect();
    let from_ld: Vec<&String> = facts
        .variables
        .get("LD_LIBRARY_PATH")
        .map(|ld| {
            let dirs: Vec<&str> = ld.split(':').filter(|d| !d.is_empty()).collect();
            fw.loaded_libraries
                .iter()
                .filter(|(fam, _)| !matches!(fam.as_str(), "cuda" | "nvml"))
                .flat_map(|(_, p)| p)
                .filter(|p| {
                    dirs.iter()
                        .any(|d| p.starts_with(&format!("{}/", d.trim_end_matches('/'))))
                })
                .collect()
        })
        .unwrap_or_default();
    if !from_ld.is_empty() && fw.cuda_works == Some(false) {
        let f = Finding::new(
            "GD408",
            Cause::EnvLibMissing,
            Severity::Warn,
            format!(
                "{} loads CUDA libraries from LD_LIBRARY_PATH instead of its own: {}",
                label(name, fw),
                from_ld
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .confidence(0.7)
        .with_remedy(
            "Run without LD_LIBRARY_PATH (frameworks from pip find their own CUDA libraries)",
            Some("env -u LD_LIBRARY_PATH python ...".into()),
            None,
        );
        list.problem(format!("{name}.libraries"), f);
    } else if !loaded.is_empty() {
        list.pass(
            format!("{name}.libraries"),
            format!("loads {}", loaded.join("; ")),
        );
    }

    // <fw>.cuda_works
    match fw.cuda_works {
        Some(true) => {
            let devs: Vec<String> = fw
                .devices
                .iter()
                .map(|d| match &d.capability {
                    Some(c) => format!("{} (CC {c})", d.name),
                    None => d.name.clone(),
                })
                .collect();
            list.pass(
                format!("{name}.cuda_works"),
                format!(
                    "a computation on the GPU works; sees {}",
                    if devs.is_empty() {
                        "a GPU".to_owned()
                    } else {
                        devs.join(", ")
                    }
                ),
            );
        }
        Some(false) if ctx.has_gpu => {
            let explained = !driver_ok
                || list.flagged(&format!("{name}.arch"))
                || [
                    "driver.kernel_module",
                    "driver.version_mismatch",
                    "driver.stub",
                    "driver.device_nodes",
                    "env.cuda_visible_devices",
                ]
                .iter()
                .any(|id| list.flagged(id));
            let err = fw
                .cuda_error
                .clone()
                .unwrap_or_else(|| "CUDA is not available".into());
            let f = Finding::new(
                "GD412",
                Cause::Other,
                Severity::Error,
                format!("{} cannot use the GPU: {err}", label(name, fw)),
            )
            .confidence(if explained { 0.3 } else { 0.8 })
            .with_evidence(evidence("python", err))
            .with_remedy(
                if explained {
                    "Fix the failed checks above first; this one follows from them"
                } else {
                    "Run the probe by hand to see the whole error"
                },
                (!explained).then(|| probe_command(name)),
                None,
            );
            list.problem(format!("{name}.cuda_works"), f);
        }
        Some(false) => list.skip(format!("{name}.cuda_works"), "no GPU here to compute on"),
        None => list.skip(format!("{name}.cuda_works"), "not probed"),
    }
}

fn probe_command(name: &str) -> String {
    match name {
        "torch" => "python -c 'import torch; print(torch.ones(1, device=\"cuda\"))'".into(),
        "tensorflow" => {
            "python -c 'import tensorflow as tf; print(tf.config.list_physical_devices(\"GPU\"))'"
                .into()
        }
        "jax" => "python -c 'import jax; print(jax.devices())'".into(),
        _ => "python -c 'import cupy; print(cupy.ones(1))'".into(),
    }
}

/// `pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/cu121`.
fn pip_torch(version: &str, variant: &str) -> String {
    let plain = version.split('+').next().unwrap_or(version);
    format!("pip install torch=={plain} --index-url https://download.pytorch.org/whl/{variant}")
}

/// The newest wheel variant of this torch release that the driver runs (fully or by
/// minor-version compatibility) and that passes `covers`.
fn best_torch_variant<'k>(
    version: &str,
    ctx: &Context,
    k: &'k Knowledge,
    covers: impl Fn(&TorchVariant) -> bool,
) -> Option<&'k TorchVariant> {
    let v = Version::parse(version)?;
    let mut variants = k.torch_variants(&v);
    variants.sort_by(|a, b| b.cuda.cmp(&a.cuda));
    variants.into_iter().find(|t| {
        covers(t)
            && match &ctx.driver_cuda {
                Some(max) => !matches!(
                    driver_runs(k, ctx.driver.as_ref(), max, &t.cuda),
                    DriverVerdict::TooOld { .. }
                ),
                None => true,
            }
    })
}

fn cpu_build_fix(name: &str, version: &str, ctx: &Context, k: &Knowledge) -> (String, String) {
    match name {
        "torch" => match best_torch_variant(version, ctx, k, |_| true) {
            Some(t) => (
                format!("Install the CUDA build of torch {} ({}, which this driver runs)", t.torch, t.variant),
                pip_torch(version, &t.variant),
            ),
            None => (
                "Install a CUDA build of torch (pick the CUDA variant at https://pytorch.org/get-started/locally/)".into(),
                "pip install torch --index-url https://download.pytorch.org/whl/cu126".into(),
            ),
        },
        "jax" => {
            let major = ctx.driver_cuda.as_ref().map_or(12, |c| if c.major() >= 13 { 13 } else { 12 });
            (
                "Install JAX with its CUDA plugin".into(),
                format!("pip install -U \"jax[cuda{major}]\""),
            )
        }
        "cupy" => {
            let major = ctx.driver_cuda.as_ref().map_or(12, Version::major);
            ("Install the CuPy wheel for the driver's CUDA major".into(), format!("pip install cupy-cuda{major}x"))
        }
        _ => (
            "Install the GPU build of TensorFlow".into(),
            "pip install \"tensorflow[and-cuda]\"".into(),
        ),
    }
}

fn arch(
    name: &str,
    fw: &Framework,
    version: &str,
    ctx: &Context,
    k: &Knowledge,
    list: &mut Checklist,
) {
    let id = format!("{name}.arch");
    if fw.arch_list.is_empty() {
        list.skip(
            id,
            format!("{name} did not list its compiled architectures"),
        );
        return;
    }
    // GPUs from NVML, else from the framework itself.
    let mut gpus: Vec<(String, (u32, u32))> = ctx
        .gpus
        .iter()
        .filter_map(|(i, n, cc, _)| cc.map(|c| (format!("GPU {i} {n}"), (c.major, c.minor))))
        .collect();
    if gpus.is_empty() {
        gpus = fw
            .devices
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let (a, b) = d.capability.as_deref()?.split_once('.')?;
                Some((
                    format!("GPU {i} {}", d.name),
                    (a.parse().ok()?, b.parse().ok()?),
                ))
            })
            .collect();
    }
    if gpus.is_empty() {
        list.skip(id, "no GPU compute capability to compare with");
        return;
    }
    // TensorFlow lists `sm_35`, `compute_80`; torch the same; both through arch_runs_on.
    let archs: Vec<String> = fw.arch_list.iter().map(|a| normalise_arch(a)).collect();
    let unsupported: Vec<&(String, (u32, u32))> = gpus
        .iter()
        .filter(|(_, cc)| !archs.iter().any(|a| arch_runs_on(a, *cc)))
        .collect();
    if unsupported.is_empty() {
        list.pass(
            id,
            format!(
                "built for {}; covers {}",
                archs.join(" "),
                gpus.iter()
                    .map(|(_, (a, b))| format!("CC {a}.{b}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        return;
    }
    let (gpu, cc) = unsupported[0];
    let mut f = Finding::new(
        "GD405",
        Cause::EnvArchUnsupported,
        Severity::Error,
        format!(
            "{} has no code for {gpu} (compute capability {}.{}): it is built for {}; kernels fail with \"no kernel image is available for execution on the device\"",
            label(name, fw), cc.0, cc.1, archs.join(" ")
        ),
    )
    .with_evidence(evidence("python", format!("{name} arch list: {}", fw.arch_list.join(" "))));
    if name == "torch" {
        let covers = |t: &TorchVariant| {
            t.archs
                .iter()
                .any(|a| arch_runs_on(&format!("sm_{}{}", a.0, a.1), *cc))
                || (t.ptx && t.archs.last().is_some_and(|l| *cc >= *l))
        };
        if let Some(t) = best_torch_variant(version, ctx, k, covers) {
            f = f.with_remedy(
                format!(
                    "Install the torch {} {} build, which has code for CC {}.{}",
                    t.torch, t.variant, cc.0, cc.1
                ),
                Some(pip_torch(version, &t.variant)),
                None,
            );
        } else if let Some(t) = k
            .torch
            .iter()
            .filter(|t| covers(t))
            .max_by(|a, b| a.torch.cmp(&b.torch).then(a.cuda.cmp(&b.cuda)))
        {
            f = f.with_remedy(
                format!(
                    "No torch {version} wheel covers CC {}.{}; torch {} {} does",
                    cc.0, cc.1, t.torch, t.variant
                ),
                Some(format!(
                    "pip install -U torch --index-url https://download.pytorch.org/whl/{}",
                    t.variant
                )),
                None,
            );
        }
    } else {
        f = f.with_remedy(
            format!(
                "Install a {name} build that lists compute capability {}.{}",
                cc.0, cc.1
            ),
            None,
            None,
        );
    }
    f = f.with_remedy(
        "For your own CUDA extensions, rebuild them for this GPU",
        Some(format!("TORCH_CUDA_ARCH_LIST=\"{}.{}\" pip install --no-build-isolation --force-reinstall <extension>", cc.0, cc.1)),
        None,
    );
    list.problem(id, f);
}

/// `sm_90`, `compute_90`, also TensorFlow's `sm_35` / `compute_80` and bare `8.0`.
fn normalise_arch(a: &str) -> String {
    if a.starts_with("sm_") || a.starts_with("compute_") {
        a.to_owned()
    } else {
        format!("sm_{}", a.replace('.', ""))
    }
}
