//! GD542: no GPU code for this GPU's architecture.

use super::{Hit, Input, env_detail, env_observations, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::{EnvKind, Framework, Observation, detail};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD542",
    name: "arch-unsupported",
    cause: Some(Cause::EnvArchUnsupported),
    summary: "The software has no kernels for this GPU's architecture (sm_XX)",
    body: r#"## What it does
Finds `no kernel image is available for execution on the device` (CUDA 209), `CUDA
capability sm_XX is not compatible with the current PyTorch installation`, `PyTorch no longer
supports this GPU because it is too old`, PyTorch's range check (`Found GPU0 ... which is of
cuda capability 6.1.` ... `(7.5) - (12.0)`: a GPU below the range, or of a newer major; a newer
minor of the highest major runs its kernels, so that warning is no finding) and `invalid device
function`; and software that
needs a newer GPU than this one: `FlashAttention only supports Ampere GPUs or newer`,
`Bfloat16 is only supported on GPUs with compute capability of at least 8.0`, AliceVision's
`CUDA-Enabled GPU detected, but the compute capabilities is not enough`, and NVIDIA's
containers on a GPU newer than their release (`Detected NVIDIA ... GPU, which is not yet
supported in this version of the container`). Builds for
another architecture in the words of their own tools: Kokkos' `running kernels compiled for
compute capability ... on device with compute capability 5.0` (with the `Kokkos_ARCH_` option
to build with), text-embeddings-inference's `Runtime compute cap 75 is not compatible with
compile time compute cap 80`, ptxas given PTX for a newer GPU (`SM version specified by
.target is higher than default SM version assumed`), and nvcc without an atomic's overload at
the architecture it builds for (`no instance of overloaded function "atomicAdd" matches the
argument list`: atomicAdd on double needs sm_60).

## Why is this bad?
GPU code is compiled per architecture. A wheel or extension built without this GPU's
architecture (a new GPU with an old wheel, an old GPU dropped from a new wheel, a custom
extension compiled for other GPUs) cannot run anything on it.

## Example
```
NVIDIA A100-PCIE-40GB with CUDA capability sm_80 is not compatible with the current PyTorch
installation. The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75.
```

## How to fix
1. Compare `torch.cuda.get_arch_list()` with `torch.cuda.get_device_capability()`.
2. Install a build that includes the architecture: Blackwell (sm_100, sm_120) needs cu128 or
   newer (PyTorch ≥ 2.7); Hopper sm_90 cu118+; very old GPUs (sm_35/sm_37 K80) need old releases.
3. Rebuild custom extensions for it: `TORCH_CUDA_ARCH_LIST="8.0;9.0" pip install --no-build-isolation .`
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = env_observations(input, EnvKind::ArchUnsupported);
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let sm = env_detail(&hits);
    if let Some(arch) = sm
        .as_deref()
        .and_then(|d| d.strip_prefix(detail::PTX_JIT_ONLY))
    {
        return vec![ptx_jit_only(&hits, arch.trim())];
    }
    if let Some(arch) = sm
        .as_deref()
        .and_then(|d| d.strip_prefix(detail::COMPILER_TOO_OLD))
    {
        return vec![compiler_too_old(&hits, arch)];
    }
    if let Some(function) = sm
        .as_deref()
        .and_then(|d| d.strip_prefix(detail::ATOMIC_OVERLOAD))
    {
        return vec![atomic_overload(&hits, function)];
    }
    if sm.as_deref() == Some(detail::PTX_TARGET_NEWER) {
        return vec![ptx_target_newer(&hits)];
    }
    if sm.as_deref() == Some(detail::CONTAINER_GPU) {
        return vec![container_gpu(&hits)];
    }
    if let Some(cc) = sm
        .as_deref()
        .and_then(|d| d.strip_prefix(detail::KOKKOS_ARCH))
    {
        return vec![kokkos_arch(&hits, cc)];
    }
    // "needs sm_80": the software asks for kernels of a newer architecture than this GPU has.
    if let Some(needed) = sm.as_deref().and_then(|d| d.strip_prefix("needs ")) {
        return vec![needs_newer_gpu(&hits, needed)];
    }
    let message = match &sm {
        Some(sm) => format!(
            "The installed build has no kernels for this GPU's architecture ({sm}): nothing can run on it."
        ),
        None => "The software has no GPU code for this GPU's architecture: nothing can run on it."
            .to_owned(),
    };
    let mut f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Error,
        message,
        0.9,
        &hits,
    );
    let cc: Option<u32> = sm
        .as_deref()
        .and_then(|s| s.trim_start_matches("sm_").parse().ok());
    let advice = match cc {
        Some(c) if c >= 100 => Some((
            "Blackwell GPUs need a CUDA 12.8+ build (PyTorch ≥ 2.7)",
            "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128",
        )),
        Some(c) if c >= 80 => Some((
            "this GPU needs a CUDA 11+ build",
            "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126",
        )),
        // PyTorch's CUDA 12.6 builds keep sm_50 to sm_90; its CUDA 12.8 builds start at sm_70
        // (2.8) and its CUDA 13 builds at sm_75.
        Some(c) if (50..75).contains(&c) => Some((
            "the CUDA 12.6 builds keep Maxwell, Pascal and Volta (the CUDA 12.8 and 13 builds start at sm_70 or sm_75)",
            "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126",
        )),
        Some(c) if c < 50 => Some((
            "this GPU is too old for current builds: use an old release or build from source",
            "pip install torch==1.12.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113",
        )),
        _ => None,
    };
    // Software other than PyTorch (a container image, a C++ library, ONNX Runtime) gets the
    // steps that apply to any build, not PyTorch's wheels.
    let pytorch = input.facts.frameworks.contains(&Framework::Pytorch)
        || hits
            .iter()
            .any(|o| o.framework == Some(Framework::Pytorch) || o.text.contains("torch"));
    if !pytorch {
        f = f
            .with_remedy(
                "See the GPU's compute capability (sm_86 is 8.6)",
                Some("nvidia-smi --query-gpu=name,compute_cap --format=csv".to_owned()),
                None,
            )
            .with_remedy(
                "Install a build of the software that includes this architecture: a newer release (or the image built for this GPU) for a new GPU, an older release for a GPU it dropped; or build it from source for this GPU",
                None,
                Some("source builds take the architecture as an option: CMake -DCMAKE_CUDA_ARCHITECTURES=86, nvcc -arch=sm_86".to_owned()),
            );
        return vec![Hit {
            finding: f,
            seq: first.seq,
        }];
    }
    f = f.with_remedy(
        "Compare the architectures the build has with the GPU's",
        Some("python -c \"import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())\"".to_owned()),
        None,
    );
    if let Some((why, cmd)) = advice {
        f = f.with_remedy(
            format!("Install a build with this architecture: {why}"),
            Some(cmd.to_owned()),
            None,
        );
    } else {
        f = f.with_remedy(
            "Install a build that includes this GPU's architecture (cu128+ for Blackwell, cu118+ for Hopper)",
            Some("pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128".to_owned()),
            None,
        );
    }
    f = f.with_remedy(
        "Rebuild custom CUDA extensions for this GPU",
        Some(
            "TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" pip install --no-build-isolation --force-reinstall ."
                .to_owned(),
        ),
        Some("list this GPU's compute capability (e.g. 8.6 for sm_86)".to_owned()),
    );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// The first CUDA toolkit whose compiler knows an architecture (`sm_86`, `compute_90a`).
fn first_toolkit_for(arch: &str) -> Option<&'static str> {
    let digits: String = arch
        .split('_')
        .nth(1)?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some(match digits.parse::<u32>().ok()? {
        100.. => "12.8",
        89 | 90 => "11.8",
        87 => "11.4",
        86 => "11.1",
        80 => "11.0",
        75 => "10.0",
        70 | 72 => "9.0",
        _ => return None,
    })
}

/// nvcc was asked for an architecture newer than itself: the toolkit predates the GPU.
fn compiler_too_old(hits: &[&Observation], arch: &str) -> Hit {
    let needs = first_toolkit_for(arch)
        .map(|v| format!(" ({arch} needs CUDA {v} or newer)"))
        .unwrap_or_default();
    let message = format!(
        "The CUDA compiler does not know {arch}: the installed CUDA toolkit is older than this GPU's architecture{needs}, so nothing can be built for it."
    );
    let f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Error,
        message,
        0.9,
        hits,
    )
    .with_remedy(
        "See which toolkit builds the code, and the GPU's architecture",
        Some("nvcc --version; nvidia-smi --query-gpu=name,compute_cap --format=csv".to_owned()),
        None,
    )
    .with_remedy(
        "Install a CUDA toolkit that knows the architecture and put it first on the PATH (or build for an architecture this toolkit knows)",
        Some("export PATH=/usr/local/cuda-12.8/bin:$PATH CUDA_HOME=/usr/local/cuda-12.8".to_owned()),
        Some("nvcc --list-gpu-arch prints the architectures a toolkit knows".to_owned()),
    );
    Hit {
        seq: hits[0].seq,
        finding: f,
    }
}

/// nvcc has no overload of an atomic function for the argument types at the architecture it
/// compiles for: the build targets an older architecture than the code needs (nvcc's default
/// when no `-arch` is given, or a GPU list that starts too low).
fn atomic_overload(hits: &[&Observation], function: &str) -> Hit {
    // CUDA C++ Programming Guide, "Atomic Functions": the overloads that came after sm_30.
    let needs = match function {
        "atomicAdd" => {
            "on double it needs sm_60, on __half2 sm_60, on __half sm_70, on __nv_bfloat16 sm_80"
        }
        "atomicMin" | "atomicMax" | "atomicAnd" | "atomicOr" | "atomicXor" => {
            "on 64-bit integers it needs sm_35"
        }
        _ => "its overload for these argument types needs a newer architecture",
    };
    let message = format!(
        "nvcc has no `{function}` for these argument types at the architecture it compiles for ({needs}): the build targets an older GPU architecture than the code needs."
    );
    let f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Error,
        message,
        0.85,
        hits,
    )
    .with_remedy(
        "Build for the GPU you run on: find its compute capability and pass it to the build",
        Some("nvidia-smi --query-gpu=name,compute_cap --format=csv".to_owned()),
        Some("nvcc -arch=sm_86 ...; CMake: -DCMAKE_CUDA_ARCHITECTURES=86; PyTorch extensions: TORCH_CUDA_ARCH_LIST=\"8.6\"".to_owned()),
    )
    .with_remedy(
        "If the GPU itself is older than the overload, use a release of the software that still supports it, or a newer GPU",
        None,
        None,
    );
    Hit {
        seq: hits[0].seq,
        finding: f,
    }
}

/// ptxas was given PTX whose `.target` is a newer GPU than the one it compiles for (the
/// driver's JIT compiles for the GPU it runs on): the PTX was generated for a newer GPU.
fn ptx_target_newer(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Error,
        "The PTX was generated for a newer GPU architecture (its `.target`) than this GPU's: the driver cannot compile it for this GPU.",
        0.85,
        hits,
    )
    .with_remedy(
        "Generate the PTX for this GPU's architecture or an older one (PTX runs on newer GPUs, never on older ones)",
        Some("nvidia-smi --query-gpu=name,compute_cap --format=csv".to_owned()),
        Some("then build with that architecture: nvcc -arch=compute_50 ..., or the project's own target-architecture setting".to_owned()),
    );
    Hit {
        seq: hits[0].seq,
        finding: f,
    }
}

/// An NGC container (or one built from NGC's images) checks the GPU at start-up against the
/// architectures its release was built for: a GPU newer than the release is refused.
fn container_gpu(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Error,
        "This release of the container was not built for this GPU (NVIDIA's containers check the GPU at start-up): the GPU is newer than the CUDA and libraries in the image.",
        0.9,
        hits,
    )
    .with_remedy(
        "Use a newer release of the container (its release notes list the GPUs and driver it supports)",
        Some("nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv".to_owned()),
        Some("a newer release may need a newer driver too".to_owned()),
    );
    Hit {
        seq: hits[0].seq,
        finding: f,
    }
}

/// Kokkos was configured for another GPU architecture than the one it runs on; its CMake
/// option names the architecture (`Kokkos_ARCH_MAXWELL50`).
fn kokkos_arch(hits: &[&Observation], cc: &str) -> Hit {
    // Kokkos' CMake keywords (kokkos.org, "CMake Keywords": architecture options).
    let option = match cc {
        "3.0" => Some("KEPLER30"),
        "3.5" => Some("KEPLER35"),
        "3.7" => Some("KEPLER37"),
        "5.0" => Some("MAXWELL50"),
        "5.2" => Some("MAXWELL52"),
        "5.3" => Some("MAXWELL53"),
        "6.0" => Some("PASCAL60"),
        "6.1" => Some("PASCAL61"),
        "7.0" => Some("VOLTA70"),
        "7.2" => Some("VOLTA72"),
        "7.5" => Some("TURING75"),
        "8.0" => Some("AMPERE80"),
        "8.6" => Some("AMPERE86"),
        "8.9" => Some("ADA89"),
        "9.0" => Some("HOPPER90"),
        _ => None,
    };
    let f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Error,
        format!(
            "Kokkos was built for another GPU architecture than this GPU's (compute capability {cc}): its kernels cannot run here, or would give wrong results."
        ),
        0.9,
        hits,
    )
    .with_remedy(
        "Configure Kokkos (and the code built on it) for this GPU's architecture and rebuild",
        Some(match option {
            Some(name) => format!("cmake -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_{name}=ON ..."),
            None => "cmake -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_<ARCH>=ON ...  # the option for this compute capability".to_owned(),
        }),
        Some("a code that builds Kokkos itself has its own switch for it (KOKKOS_ARCH=... in a Makefile build)".to_owned()),
    );
    Hit {
        seq: hits[0].seq,
        finding: f,
    }
}

/// The software has kernels only from `needed` (`sm_80`) on and refused this GPU. Usually
/// the GPU is older (a T4 or V100 for FlashAttention 2), and the fix is another code path or
/// another GPU; but FlashAttention's check lists the architectures it knows, so a GPU newer
/// than the installed build (Blackwell with an old flash-attn) gets the same message.
fn needs_newer_gpu(hits: &[&Observation], needed: &str) -> Hit {
    let message = format!(
        "The software runs only on GPUs of architecture {needed} or newer and refused this one: usually the GPU is older, else it is newer than the installed build knows."
    );
    // sm_80 is where bfloat16 and FlashAttention 2 begin; they have fallbacks.
    let ampere = needed
        .trim_start_matches("sm_")
        .parse::<u32>()
        .is_ok_and(|cc| cc >= 80);
    let f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Error,
        message,
        0.9,
        hits,
    );
    let triton = hits.iter().any(|o| o.text.contains("triton"));
    let f = if triton {
        f.with_remedy(
            "Run without Triton: this GPU can still run the model uncompiled, or compiled by a backend that does not generate Triton kernels",
            Some("torch.compile(model, backend=\"aot_eager\")   # or no torch.compile; TORCHDYNAMO_DISABLE=1 turns it off".to_owned()),
            None,
        )
    } else {
        f
    };
    let f = if ampere {
        f.with_remedy(
            "Use the code path this GPU has: half precision instead of bfloat16, PyTorch's own attention instead of FlashAttention 2",
            Some("--dtype=half  # transformers: attn_implementation=\"sdpa\" (or \"eager\")".to_owned()),
            None,
        )
    } else {
        f
    };
    let f = f
        .with_remedy(
            format!("Check the GPU's compute capability: below {needed}, run on a newer GPU; above it, upgrade the package"),
            Some("nvidia-smi --query-gpu=name,compute_cap --format=csv".to_owned()),
            None,
        );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// TensorFlow has no compiled kernels for the GPU but PTX it can JIT-compile: the job runs, after
/// a start-up that can take half an hour (the driver caches the result).
fn ptx_jit_only(hits: &[&Observation], arch: &str) -> Hit {
    let f = finding_from(
        "GD542",
        Cause::EnvArchUnsupported,
        Severity::Warn,
        format!(
            "The installed TensorFlow has no compiled kernels for this GPU ({arch}): it JIT-compiles them from PTX at start-up, which can take 30 minutes or more (then cached), and any kernel without PTX will not run."
        ),
        0.85,
        hits,
    )
    .with_remedy(
        "Install a TensorFlow build whose kernels include this GPU's architecture (a newer release, or NVIDIA's NGC container)",
        Some("pip install -U 'tensorflow[and-cuda]'".to_owned()),
        None,
    )
    .with_remedy(
        "Meanwhile, give the JIT cache room so the compilation happens once",
        Some("export CUDA_CACHE_MAXSIZE=4294967296".to_owned()),
        None,
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}
