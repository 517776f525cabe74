//! GD543: a CUDA library (or another shared library the job needs) cannot be loaded.

use super::{Hit, Input, env_detail, env_observations, finding_from, has_detail};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{EnvKind, Observation, detail};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD543",
    name: "cuda-library-missing",
    cause: Some(Cause::EnvLibMissing),
    summary: "A CUDA library (libcudart, libcudnn, libcublas, ...), or another shared library the job needs, cannot be loaded",
    body: r"## What it does
Finds `libcudart.so.12: cannot open shared object file`, TensorFlow's `Could not load dynamic
library 'libcudnn.so.8'` (and its summary `Cannot dlopen some GPU libraries`), `Could not load
library libcudnn_cnn_infer.so.8` and the Windows `cudart64_110.dll` forms, and names the CUDA
major version the library belongs to. Also finds a library that loads but is the wrong
version: `undefined symbol: ..., version libcublasLt.so.11`, and JAX's or TensorFlow's `Loaded
runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0`, and a compiled extension
built against another PyTorch (`_scatter_cuda.so: undefined symbol: _ZN3c10...`: a symbol in
one of PyTorch's C++ namespaces), with the install line of the packages that ship a wheel per
PyTorch release (PyG's, flash-attn, fbgemm-gpu, torchvision/torchaudio). Any other shared library
the loader cannot find (a GPU stack's, such as ROCm's `libhsa-runtime64.so.1`; a package's own,
such as `libfaiss.so`; Windows' `Error loading ...caffe2_nvrtc.dll or one of its
dependencies`; macOS's `Library not loaded`; the loader's `prog: error while loading shared
libraries: ...`) is reported too, as a missing library of the installation. So are builds
that find no CUDA header (`fatal error: cuda.h`, TensorRT's `NvInfer.h`) or no cuDNN (CMake's
`Could NOT find CUDNN`), pip without a release of a package built for a CUDA version
(`No matching distribution found for cupy-cuda90`), ONNX Runtime's CUDA provider library that
would not load or could not be created (`Failed to create CUDAExecutionProvider`: the CUDA or
cuDNN its release was built for is missing), Windows' `DLL load failed while importing
<module>`, and OpenGL with no driver it could load (`libGL error: failed to load driver:
swrast`: in a container, the NVIDIA GL libraries come only with the graphics capability; when
Mesa's loader names `GLIBCXX_`, a conda environment's older libstdc++).

## Why is this bad?
The library's file name carries the CUDA (or cuDNN) major version it was built against. A
package built for CUDA 11 looks for `libcudart.so.11.0` and does not accept CUDA 12's. When it
is missing, or not on the loader's path, the package cannot use the GPU. An older copy found
first on the loader's path (a system CUDA before pip's `nvidia-*` wheels, or the reverse) fails
the same way, with a missing symbol or a version check.

## Example
```
ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory
```

## How to fix
1. Find what is installed: `ldconfig -p | grep libcudart` and `pip list | grep nvidia-`.
2. Install the runtime for that major version from pip (`pip install nvidia-cuda-runtime-cu12`,
   `nvidia-cudnn-cu12`) or the toolkit, or install the package build matching the CUDA you
   have (`cupy-cuda12x`, `jax[cuda12]`, `torch ... cu126`).
3. If the file exists, put its directory on `LD_LIBRARY_PATH` (but JAX wants it unset).
",
};

/// The pip package that ships a library of this name, when there is one.
fn pip_package(lib: &str) -> Option<String> {
    let (stem, version) = lib.split_once(".so.")?;
    let major: String = version.chars().take_while(char::is_ascii_digit).collect();
    let cuda_major = match stem {
        "libcudnn" | "libcudnn_cnn_infer" | "libcudnn_ops_infer" | "libcudnn_adv_infer" => {
            // cuDNN 8 wheels exist for CUDA 11 and 12, cuDNN 9 for 12 and 13; pick 12.
            return Some("nvidia-cudnn-cu12".to_owned());
        }
        _ => major.parse::<u32>().ok()?,
    };
    let package = match stem {
        "libcudart" => "nvidia-cuda-runtime",
        "libcublas" | "libcublasLt" => "nvidia-cublas",
        "libcufft" => "nvidia-cufft",
        "libcurand" => "nvidia-curand",
        "libcusparse" => "nvidia-cusparse",
        "libcusolver" => "nvidia-cusolver",
        "libnvrtc" => "nvidia-cuda-nvrtc",
        _ => return None,
    };
    (10..=13)
        .contains(&cuda_major)
        .then(|| format!("{package}-cu{cuda_major}"))
}

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let all = env_observations(input, EnvKind::LibMissing);
    // TensorRT and the CUDA profiler's library are optional for TensorFlow: its "could not
    // load libnvinfer / libcupti" warnings are noise next to anything else.
    let (optional, hits): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|o| o.text.contains("libnvinfer") || o.text.contains("libcupti"));
    let tensorrt: Vec<_> = optional
        .into_iter()
        .filter(|o| o.text.contains("libnvinfer"))
        .collect();
    if hits.is_empty() && !tensorrt.is_empty() {
        return vec![tensorrt_missing(&tensorrt)];
    }
    let Some(first) = hits.first() else {
        // Only a wrong version, nothing missing (a missing library is the finding otherwise).
        let mismatched = env_observations(input, EnvKind::LibMismatch);
        return if mismatched.is_empty() {
            Vec::new()
        } else {
            vec![wrong_version(&mismatched)]
        };
    };
    // onnxruntime's `Failed to create CUDAExecutionProvider` comes after the line that names
    // the library it could not load, when it printed one: that library says more.
    let named: Vec<&Observation> = hits
        .iter()
        .copied()
        .filter(|o| !has_detail(o, detail::ORT_CUDA_PROVIDER))
        .collect();
    let lib = env_detail(&named)
        .or_else(|| env_detail(&hits))
        .map(|l| l.replace(',', "."));
    if let Some(finding) = lib.as_deref().and_then(|l| variant(&hits, l)) {
        return vec![Hit {
            finding,
            seq: first.seq,
        }];
    }
    let message = match &lib {
        Some(l) => format!(
            "{l} cannot be loaded: the CUDA library the package was built against is missing or not on the loader's path."
        ),
        None => {
            "A CUDA library cannot be loaded: it is missing or not on the loader's path.".to_owned()
        }
    };
    let mut f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        message,
        0.85,
        &hits,
    );
    let stem = lib.as_deref().map_or_else(
        || "libcudart".to_owned(),
        |l| l.split(".so").next().unwrap_or(l).to_owned(),
    );
    f = f.with_remedy(
        "See which versions are installed and where",
        Some(format!(
            "ldconfig -p | grep {stem}; pip list 2>/dev/null | grep -i nvidia-"
        )),
        None,
    );
    match lib.as_deref().and_then(pip_package) {
        Some(pkg) => {
            f = f.with_remedy(
                "Install the matching runtime from pip, or install the package build for the CUDA you have",
                Some(format!("pip install {pkg}")),
                Some("the number after .so. is the CUDA (or cuDNN) major version the package needs".to_owned()),
            );
        }
        None => {
            f = f.with_remedy(
                "Install the CUDA runtime the package needs, or the package build for the CUDA you have (e.g. cupy-cuda12x, jax[cuda12])",
                None,
                Some("the number after .so. is the major version the package needs".to_owned()),
            );
        }
    }
    f = f.with_remedy(
        "If the file exists elsewhere, put its directory on the loader's path",
        Some("export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH".to_owned()),
        Some("not for JAX, which wants LD_LIBRARY_PATH unset".to_owned()),
    );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// `libfoo.DLL` has the extension `dll`.
/// The finding for a library (or a detail) that has a variant of its own: the linker's, a
/// build's header, a driver's library, PyTorch's own, a non-CUDA library, and so on. `None`
/// for a CUDA library, which gets the rule's main finding.
fn variant(hits: &[&Observation], lib: &str) -> Option<Finding> {
    if let Some(l) = lib.strip_prefix(detail::FOR_THE_LINKER) {
        return Some(linker_library(hits, l));
    }
    if lib == detail::XLA_CUDA_DIR {
        return Some(xla_cuda_dir(hits));
    }
    if lib.starts_with(detail::PTXAS_TOO_OLD) {
        return Some(ptxas_too_old(hits, lib));
    }
    if let Some(header) = lib.strip_prefix(detail::CUDA_HEADER) {
        return Some(cuda_header_missing(hits, header));
    }
    if let Some(header) = lib.strip_prefix(detail::BUILD_HEADER) {
        return Some(header_missing(hits, header));
    }
    if let Some(module) = lib.strip_prefix(detail::COMPILED_EXTENSION) {
        return Some(compiled_extension_missing(hits, module));
    }
    if let Some(package) = lib.strip_prefix(detail::PIP_CUDA_BUILD) {
        return Some(pip_cuda_build(hits, package));
    }
    if matches!(lib, detail::GL_DRIVER | detail::GL_LIBSTDCXX) {
        return Some(opengl_driver(hits, lib == detail::GL_LIBSTDCXX));
    }
    if lib == detail::ORT_CUDA_PROVIDER {
        return Some(onnxruntime_cuda_provider(hits));
    }
    if lib == detail::CUDA_HOME_UNSET {
        return Some(cuda_home_unset(hits));
    }
    if lib == detail::STUB_DRIVER_LIBRARY {
        return Some(stub_driver_library(hits));
    }
    if lib.starts_with("libcuda.") || lib.starts_with("libnvidia-ml") {
        return Some(driver_library(hits, lib));
    }
    if lib.starts_with("libnvcuvid") || lib.starts_with("libnvidia-encode") {
        return Some(driver_video_library(hits, lib));
    }
    if lib.starts_with("libtorch_cuda") || lib.starts_with("libc10_cuda") {
        return Some(torch_library(hits, lib));
    }
    (!gpu_doctor_scan::is_cuda_library(lib)).then(|| other_library(hits, lib))
}

fn has_extension(lib: &str, ext: &str) -> bool {
    std::path::Path::new(lib)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// A library that is not CUDA's own: a GPU stack's, the package's, a dependency's.
fn other_library(hits: &[&Observation], lib: &str) -> Finding {
    let message = format!(
        "{lib} cannot be loaded: a shared library the job needs is missing or not on the loader's path (it is not one of CUDA's libraries: it comes with the package that loads it, its GPU stack or a dependency)."
    );
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        message,
        0.7,
        hits,
    );
    let stem = lib.split(".so").next().unwrap_or(lib);
    if has_extension(lib, "dll") {
        return f
            .with_remedy(
                "Find the DLL and what it depends on",
                Some(format!("where /R C:\\ {lib}")),
                Some("a DLL that is there fails the same way when one of its own dependencies is missing".to_owned()),
            )
            .with_remedy(
                "Put the folder of the DLL (and of its dependencies, e.g. a GPU SDK's bin) on PATH, or reinstall the package",
                None,
                None,
            );
    }
    if has_extension(lib, "dylib") {
        return f
            .with_remedy(
                "See which libraries the binary needs and where it looks for them",
                Some(format!("otool -L <the binary or .so that loads it>; find / -name '{lib}' 2>/dev/null | head")),
                None,
            )
            .with_remedy(
                "Install the package that provides it, or put its folder on the loader's path",
                Some("export DYLD_LIBRARY_PATH=/path/to/its/dir:$DYLD_LIBRARY_PATH".to_owned()),
                None,
            );
    }
    f.with_remedy(
        "Find the library, if it is installed at all",
        Some(format!("ldconfig -p | grep {stem}; find / -name '{stem}*' 2>/dev/null | head")),
        None,
    )
    .with_remedy(
        "If it is there, put its directory on the loader's path",
        Some("export LD_LIBRARY_PATH=/path/to/its/dir:$LD_LIBRARY_PATH".to_owned()),
        Some("launchers (IDEs, services, job schedulers) often start jobs without the shell's LD_LIBRARY_PATH".to_owned()),
    )
    .with_remedy(
        "If not, install the package (or GPU stack) that provides it, in the build the software was made for",
        None,
        None,
    )
}

/// How a missing driver library's finding begins; the ranking puts it above the "driver too
/// old" error (35) that a missing libcuda also causes.
pub(crate) const DRIVER_LIBRARY: &str = "The NVIDIA driver's own library";

/// libcuda or libnvidia-ml, which come with the driver rather than with CUDA.
fn driver_library(hits: &[&Observation], lib: &str) -> Finding {
    let message = format!(
        "{DRIVER_LIBRARY} {lib} cannot be loaded: the driver is not installed, or its libraries are not where the loader looks (a container started without the NVIDIA runtime, WSL's /usr/lib/wsl/lib, a broken symlink, an empty copy baked into an image)."
    );
    finding_from("GD543", Cause::EnvLibMissing, Severity::Error, message, 0.8, hits)
        .with_remedy(
            "Find the driver's libraries and the links to them",
            Some("ldconfig -p | grep -E 'libcuda|libnvidia-ml'; ls -l /usr/lib/x86_64-linux-gnu/libcuda.so* /usr/lib/wsl/lib 2>/dev/null".to_owned()),
            Some("no copy at all: install the driver (outside a container) or start the container with --gpus all".to_owned()),
        )
        .with_remedy(
            "Under WSL, put WSL's driver directory on the loader's path",
            Some("export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH".to_owned()),
            None,
        )
        .with_remedy(
            "Re-create a missing or dangling versioned link",
            Some("sudo ln -sf libcuda.so.<driver version> /usr/lib/x86_64-linux-gnu/libcuda.so.1 && sudo ldconfig".to_owned()),
            None,
        )
}

/// XLA (JAX, TensorFlow's XLA-compiled ops) compiles kernels itself and needs CUDA's
/// libdevice (`nvvm/libdevice/libdevice.10.bc`) and ptxas: `Can't find libdevice directory
/// ${CUDA_DIR}/nvvm/libdevice`, TensorFlow's bare `JIT compilation failed. [Op:FloorMod]`.
fn xla_cuda_dir(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "XLA could not compile its GPU kernels: it needs CUDA's libdevice (nvvm/libdevice/libdevice.10.bc) and ptxas, and found them neither in the CUDA directory it was built for nor in pip's nvidia-cuda-nvcc wheel.",
        0.8,
        hits,
    )
    .with_remedy(
        "Install the CUDA compiler pieces from pip (JAX's and TensorFlow's CUDA extras bring them)",
        Some("pip install -U \"jax[cuda12]\"  # TensorFlow: pip install \"tensorflow[and-cuda]\"; or: pip install nvidia-cuda-nvcc-cu12".to_owned()),
        None,
    )
    .with_remedy(
        "Or point XLA at a CUDA toolkit that has them",
        Some("export XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda   # the directory that holds nvvm/libdevice and bin/ptxas".to_owned()),
        None,
    )
}

/// Building a CUDA extension (`pip install` of apex, flash-attn, a research repo's ops) needs
/// the CUDA toolkit's nvcc; PyTorch's wheels bring the runtime, not the compiler.
fn cuda_home_unset(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "A CUDA extension could not be built: PyTorch found no CUDA toolkit (CUDA_HOME is not set and no nvcc is on the PATH). PyTorch's wheels bring CUDA's runtime libraries, not its compiler.",
        0.85,
        hits,
    )
    .with_remedy(
        "Install the CUDA toolkit of the version PyTorch was built with, and point CUDA_HOME at it",
        Some("python -c 'import torch; print(torch.version.cuda)'; export CUDA_HOME=/usr/local/cuda-12.8 PATH=/usr/local/cuda-12.8/bin:$PATH".to_owned()),
        Some("conda: conda install -c nvidia cuda-toolkit=12.8; or install a prebuilt wheel of the extension instead of building it".to_owned()),
    )
}

/// pip found no release of a package built for the CUDA version its name carries
/// (`cupy-cuda90`, `cumm-cu100`): the project publishes builds for other CUDA versions only,
/// so the environment's CUDA is too old (or too new) for the release asked for.
fn pip_cuda_build(hits: &[&Observation], package: &str) -> Finding {
    // The name without its version constraint: `cupy-cuda90<10.>=9` -> `cupy-cuda90`.
    let name = package
        .split(['<', '>', '=', '!', '~', ' ', '['])
        .next()
        .unwrap_or(package);
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        format!("pip has no release of `{name}` that fits: the package is built per CUDA version, and the CUDA version in its name (or the release asked for) is one the project no longer or not yet publishes, so the environment's CUDA is too old or too new for it."),
        0.8,
        hits,
    )
    .with_remedy(
        "See which releases of this CUDA build exist, and which CUDA the machine has",
        Some(format!("pip index versions {name}; nvidia-smi | head -4; nvcc --version")),
        None,
    )
    .with_remedy(
        "Install the package's build for a CUDA version the project publishes and the driver runs (a newer CUDA toolkit, or an older release of the package)",
        None,
        None,
    )
}

/// onnxruntime-gpu could not create its CUDA provider and runs the model on the CPU. Each
/// release is built for one CUDA major and one cuDNN major (CUDA 12 and cuDNN 9 on PyPI since
/// 1.19; cuDNN 8 and 9 do not mix), and loads them from the loader's path, PyTorch's copy or
/// the `nvidia-*` wheels (`preload_dlls`, since 1.21).
fn onnxruntime_cuda_provider(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "onnxruntime could not create its CUDA provider, so the model runs on the CPU: the CUDA or cuDNN libraries its release was built for (CUDA 12 and cuDNN 9 for onnxruntime-gpu 1.19 and later on PyPI) are missing, or of another major version.",
        0.8,
        hits,
    )
    .with_remedy(
        "See which release is installed and what it finds, then compare with the requirements table of onnxruntime's CUDA provider",
        Some("python -c \"import onnxruntime as ort; print(ort.__version__, ort.get_available_providers()); ort.print_debug_info()\"".to_owned()),
        Some("print_debug_info exists from 1.21; the table: https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements".to_owned()),
    )
    .with_remedy(
        "Install CUDA and cuDNN from pip with it, and load them before the first session",
        Some("pip install \"onnxruntime-gpu[cuda,cudnn]\"  # then in Python: onnxruntime.preload_dlls()".to_owned()),
        Some("importing torch (a CUDA 12 build) before onnxruntime also makes its CUDA and cuDNN libraries available".to_owned()),
    )
    .with_remedy(
        "Or install the onnxruntime-gpu release built for the CUDA and cuDNN the machine has (1.18 or older for CUDA 11 and cuDNN 8)",
        None,
        None,
    )
}

/// OpenGL could not load a driver. libGL tries the NVIDIA GL library first when it is there
/// (the driver installs it; the NVIDIA container runtime mounts it only with the `graphics`
/// capability) and falls back to Mesa's drivers; Mesa's `swrast` failing means neither
/// worked. A conda environment's older libstdc++ breaks Mesa's drivers in its own way.
fn opengl_driver(hits: &[&Observation], libstdcxx: bool) -> Finding {
    if libstdcxx {
        return finding_from(
            "GD543",
            Cause::EnvLibMissing,
            Severity::Error,
            "OpenGL could not load its driver: the system's Mesa driver needs a newer libstdc++ than the one the environment (a conda environment, most often) puts first on the loader's path.",
            0.8,
            hits,
        )
        .with_remedy(
            "Give the environment a libstdc++ as new as the system's",
            Some("conda install -c conda-forge 'libstdcxx-ng>=12'".to_owned()),
            Some("or load the system's first: export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6".to_owned()),
        );
    }
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "OpenGL could not load a driver: no NVIDIA GL library was found, so libGL fell back to Mesa's software renderer, which failed too. In a container the NVIDIA runtime mounts the GL libraries only when the graphics capability is asked for; on a host the driver's GL part is missing or another libGL shadows it.",
        0.75,
        hits,
    )
    .with_remedy(
        "In a container, ask for the graphics capability along with the GPUs",
        Some("docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all ...".to_owned()),
        Some("or install, inside the image, the NVIDIA GL libraries of exactly the host driver's version".to_owned()),
    )
    .with_remedy(
        "See which GL library is loaded, and whether NVIDIA's is there",
        Some("glxinfo -B | grep -i 'vendor\\|renderer'; ldconfig -p | grep -i 'libGLX_nvidia\\|libGL.so'".to_owned()),
        None,
    )
}

/// A package's compiled extension is not installed: its wheel had no build for this platform,
/// Python, PyTorch or CUDA (and pip installed the pure-Python part), or the build failed.
fn compiled_extension_missing(hits: &[&Observation], module: &str) -> Finding {
    let package = module
        .split('.')
        .next()
        .unwrap_or(module)
        .trim_end_matches("_ext")
        .trim_end_matches("_cuda");
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        format!("The compiled extension `{module}` is not installed: the package's wheel had no build for this platform, Python, PyTorch or CUDA, or building it failed, so only its Python part is there."),
        0.8,
        hits,
    )
    .with_remedy(
        "Reinstall the package built for the installed torch and CUDA, and read the build's output if pip builds it",
        Some(format!("pip install --force-reinstall --no-cache-dir --no-build-isolation {package} -v 2>&1 | tail -40")),
        Some("or install the release wheel named for this torch, CUDA and Python from the project's releases".to_owned()),
    )
}

/// A build that cannot find a CUDA header: the toolkit (or the library's development
/// package: cuDNN, NCCL) is not installed, or not on the compiler's include path.
fn cuda_header_missing(hits: &[&Observation], header: &str) -> Finding {
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        format!("The build cannot find the CUDA header `{header}`: the CUDA toolkit (or the library's development package) is not installed, or its include folder is not on the compiler's include path."),
        0.8,
        hits,
    )
    .with_remedy(
        "Find the header, then put its folder on the include path (or point CUDA_HOME at the toolkit)",
        Some(format!("find / -name '{}' -path '*include*' 2>/dev/null | head; export CUDA_HOME=/usr/local/cuda CPATH=$CUDA_HOME/include:$CPATH", header.rsplit('/').next().unwrap_or(header))),
        Some("nvcc: -I$CUDA_HOME/include; CMake: find_package(CUDAToolkit)".to_owned()),
    )
    .with_remedy(
        "If it is not there, install the toolkit's (or the library's) development files",
        Some("sudo apt install cuda-toolkit-12-8   # cuDNN: libcudnn9-dev-cuda-12; NCCL: libnccl-dev; pip: nvidia-cuda-runtime-cu12 ships cuda_runtime.h".to_owned()),
        None,
    )
}

/// A build's compiler finds no header of a library that is not CUDA's: the library's
/// development package is not installed, or its include folder is not on the include path.
fn header_missing(hits: &[&Observation], header: &str) -> Finding {
    let name = header.rsplit('/').next().unwrap_or(header);
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        format!("The build cannot find the header `{header}`: the development files of the library it belongs to are not installed, or their include folder is not on the compiler's include path."),
        0.75,
        hits,
    )
    .with_remedy(
        "Find which package ships the header, and install it (distributions name it -dev or -devel)",
        Some(format!("apt-file search {header}  # or: dnf provides '*/{header}'; conda: search the conda-forge package that ships it")),
        None,
    )
    .with_remedy(
        "If the header is already on disk, put its folder on the include path",
        Some(format!("find / -name '{name}' -path '*include*' 2>/dev/null | head; export CPATH=<that include folder>:$CPATH")),
        None,
    )
    .with_remedy(
        "If it belongs to the project or a library it vendors (CUTLASS in flash-attention, a third_party/ folder), fetch the submodules the checkout lacks",
        Some("git submodule update --init --recursive".to_owned()),
        None,
    )
}

/// CUDA's assembler run on a file by a compiler that emits newer PTX than it knows (Triton
/// with the system's ptxas, a build with an old toolkit on the PATH). The driver's own JIT
/// (`ptxas application ptx input`) failing the same way is GD540's: the driver is too old.
fn ptxas_too_old(hits: &[&Observation], what: &str) -> Finding {
    let versions = what
        .strip_prefix(detail::PTXAS_TOO_OLD)
        .unwrap_or_default()
        .trim();
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        format!("The CUDA toolkit's ptxas is older than the PTX it was given {versions}: the compiler that wrote the PTX (Triton, a newer nvcc) targets a newer CUDA than the ptxas found on the PATH or in CUDA_HOME. The driver is not the problem."),
        0.8,
        hits,
    )
    .with_remedy(
        "See which ptxas runs, and use the one that came with the compiler (Triton bundles its own)",
        Some("which ptxas; ptxas --version; echo $CUDA_HOME $TRITON_PTXAS_PATH".to_owned()),
        Some("unset TRITON_PTXAS_PATH (or point it at a ptxas at least as new as the PTX), or put a newer toolkit's bin/ first on the PATH".to_owned()),
    )
    .with_remedy(
        "Or install a CUDA toolkit whose ptxas reads this PTX version",
        Some("pip install -U nvidia-cuda-nvcc-cu12   # or the toolkit release that matches the framework".to_owned()),
        None,
    )
}

/// `libcuda.so.1 => /usr/local/cuda/lib64/stubs/libcuda.so.1`: the toolkit ships a stub of
/// the driver's library so that programs can link without a driver; loaded at run time it
/// answers every call with an error (`cuInit: CUresult(-1)`, CUDA_ERROR_STUB_LIBRARY).
fn stub_driver_library(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "The program loads the CUDA toolkit's stub of the driver library (stubs/libcuda.so.1) instead of the driver's libcuda.so.1: the stub exists only for linking and fails every call, so CUDA cannot start.",
        0.9,
        hits,
    )
    .with_remedy(
        "Take the stubs directory off the loader's path (LD_LIBRARY_PATH, /etc/ld.so.conf.d) and check what loads now",
        Some("echo $LD_LIBRARY_PATH; grep -r stubs /etc/ld.so.conf.d/; ldconfig -p | grep libcuda.so.1".to_owned()),
        None,
    )
    .with_remedy(
        "In a container, let the NVIDIA runtime mount the host's libcuda.so.1 (and keep stubs out of the image's loader paths)",
        Some("docker run --gpus all ...".to_owned()),
        None,
    )
}

/// The linker (`/usr/bin/ld: cannot find -lcuda`) wants the unversioned name, `libcuda.so`,
/// which runtime-only installs leave out: the driver ships `libcuda.so.1`, the toolkit's
/// runtime `libcudart.so.12`; the bare names come with the development packages.
fn linker_library(hits: &[&Observation], lib: &str) -> Finding {
    let stem = lib.trim_end_matches(".so");
    let message = format!(
        "The linker cannot find {lib}, the unversioned name it links against: the library is not installed, or only its versioned file ({stem}.so.<N>) is, without the {lib} link that development packages add (Triton links its launcher against libcuda.so this way)."
    );
    let f = finding_from("GD543", Cause::EnvLibMissing, Severity::Error, message, 0.8, hits)
        .with_remedy(
            "See which files of it exist and where",
            Some(format!("ldconfig -p | grep {stem}; ls -l /usr/lib/x86_64-linux-gnu/{stem}.so* /usr/local/cuda/lib64/{stem}.so* 2>/dev/null")),
            None,
        );
    if stem == "libcuda" {
        f.with_remedy(
            "Point Triton at the driver's library directory, or add the missing link",
            Some("export TRITON_LIBCUDA_PATH=/usr/lib/x86_64-linux-gnu   # or: sudo ln -s libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so && sudo ldconfig".to_owned()),
            Some("never link against the toolkit's stubs/libcuda.so at run time: it has no driver behind it".to_owned()),
        )
    } else {
        f.with_remedy(
            "Install the library's development files, or put the toolkit's library directory on the linker's path",
            Some("export LIBRARY_PATH=/usr/local/cuda/lib64:$LIBRARY_PATH".to_owned()),
            None,
        )
    }
}

/// cuFFT's catch-all error. The known case behind most reports: the cuFFT of CUDA 11.7 (as in
/// PyTorch's cu117 wheels) fails on RTX 40-series GPUs; CUDA 11.8's works.
fn cufft_internal(hits: &[&Observation]) -> Hit {
    let message = "cuFFT failed with CUFFT_INTERNAL_ERROR: most often a cuFFT too old for the GPU (CUDA 11.7's cuFFT, as in PyTorch's cu117 builds, fails on RTX 40-series GPUs); otherwise an FFT plan that did not fit in the free memory.".to_owned();
    let f = finding_from("GD543", Cause::EnvLibMissing, Severity::Error, message, 0.55, hits)
        .with_remedy(
            "See which CUDA the framework's cuFFT comes from, and the GPU",
            Some("python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())\"".to_owned()),
            None,
        )
        .with_remedy(
            "Install a build for CUDA 11.8 or newer",
            Some("pip install --force-reinstall torch torchaudio --index-url https://download.pytorch.org/whl/cu121".to_owned()),
            Some("if it already is, try a smaller FFT (a shorter signal, a smaller batch) to rule out memory".to_owned()),
        );
    Hit {
        seq: hits.first().map_or(0, |o| o.seq),
        finding: f,
    }
}

/// XLA checks the ptxas it finds against versions known to miscompile its kernels and stops.
fn ptxas_refused(hits: &[&Observation], version: &str) -> Hit {
    let message = format!(
        "XLA refuses ptxas {version}, a CUDA compiler version with a bug known to miscompile its kernels: the ptxas on the PATH (or in the pip CUDA packages) must be another version."
    );
    let f = finding_from("GD543", Cause::EnvLibMissing, Severity::Error, message, 0.9, hits)
        .with_remedy(
            "See which ptxas XLA finds",
            Some("which -a ptxas; ptxas --version; pip list 2>/dev/null | grep -i nvidia-cuda-nvcc".to_owned()),
            None,
        )
        .with_remedy(
            "Install another version, e.g. the newest pip CUDA compiler, or put another toolkit's bin first on the PATH",
            Some("pip install -U nvidia-cuda-nvcc-cu12".to_owned()),
            Some("JAX's jax[cuda12] extra installs a ptxas of its own".to_owned()),
        );
    Hit {
        seq: hits[0].seq,
        finding: f,
    }
}

/// The driver's video decoder or encoder library (FFmpeg's `Cannot load libnvcuvid.so.1`):
/// the NVIDIA container runtime mounts it only for the `video` capability, which its default
/// (`compute,utility`) leaves out.
fn driver_video_library(hits: &[&Observation], lib: &str) -> Finding {
    let message = format!(
        "The NVIDIA driver's video library {lib} cannot be loaded: in a container, the NVIDIA runtime mounts it only when NVIDIA_DRIVER_CAPABILITIES includes `video` (the default is `compute,utility`); outside one, the driver's decode/encode package is not installed."
    );
    finding_from("GD543", Cause::EnvLibMissing, Severity::Error, message, 0.8, hits)
        .with_remedy(
            "Start the container with the video capability",
            Some("docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,video ...".to_owned()),
            Some("Kubernetes: set NVIDIA_DRIVER_CAPABILITIES=all (or add video) in the pod's env".to_owned()),
        )
        .with_remedy(
            "Outside a container, check that the driver's video libraries are installed",
            Some("ldconfig -p | grep -E 'libnvcuvid|libnvidia-encode'".to_owned()),
            Some("Debian/Ubuntu: install libnvidia-decode-<version> and libnvidia-encode-<version> matching the driver".to_owned()),
        )
}

/// Only TensorRT is missing: TensorFlow runs without it, but TF-TRT (and code that imports
/// TensorRT) does not.
fn tensorrt_missing(hits: &[&Observation]) -> Hit {
    let lib = env_detail(hits).unwrap_or_else(|| "libnvinfer".to_owned());
    let version = lib.split_once(".so.").map(|(_, v)| v.to_owned());
    let message = format!(
        "TensorRT ({lib}) cannot be loaded: TensorFlow and ONNX Runtime run without it (ONNX Runtime falls back to its CUDA provider), but TF-TRT, ONNX Runtime's TensorRT provider and anything that builds or runs a TensorRT engine fail."
    );
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Warn,
        message,
        0.7,
        hits,
    )
    .with_remedy(
        "If the job uses TensorRT (TF-TRT, ONNX Runtime's TensorRT provider), install the version the build names",
        Some(match &version {
            Some(v) => format!("pip install tensorrt=={v}  # or the matching TensorRT tarball"),
            None => "pip install tensorrt".to_owned(),
        }),
        Some("a newer TensorRT (libnvinfer.so.10) does not satisfy a build that asks for 8.x: its major version is part of the name".to_owned()),
    )
    .with_remedy(
        "See which TensorRT is installed and where",
        Some("ldconfig -p | grep libnvinfer; pip list 2>/dev/null | grep -i tensorrt".to_owned()),
        None,
    )
    .with_remedy(
        "Otherwise the warning is harmless: silence TensorFlow's start-up warnings",
        Some("export TF_CPP_MIN_LOG_LEVEL=2".to_owned()),
        None,
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// PyTorch's own CUDA library (`libtorch_cuda_cpp.so`, `libc10_cuda.so`): an extension built
/// against another PyTorch release, or a broken PyTorch install.
fn torch_library(hits: &[&Observation], lib: &str) -> Finding {
    let message = format!(
        "{lib} cannot be loaded: it is PyTorch's own CUDA library, so an extension was built against another PyTorch release (libtorch_cuda_cpp.so and libtorch_cuda_cu.so existed only in 1.8 to 1.10), or PyTorch's install is a CPU build or broken."
    );
    finding_from("GD543", Cause::EnvLibMissing, Severity::Error, message, 0.8, hits)
        .with_remedy(
            "Reinstall the extension built for the installed PyTorch (its wheels name the torch and CUDA versions)",
            Some("python -c \"import torch; print(torch.__version__, torch.version.cuda)\"; pip install --force-reinstall --no-cache-dir <extension>".to_owned()),
            Some("extensions built from source (setup.py, JIT-compiled ops) must be rebuilt after a PyTorch upgrade".to_owned()),
        )
        .with_remedy(
            "Check that PyTorch's own libraries are there",
            Some("ls $(python -c \"import torch, os; print(os.path.dirname(torch.__file__))\")/lib | grep -E 'torch_cuda|c10_cuda'".to_owned()),
            None,
        )
}

/// NVRTC rejected a compile option: usually `--gpu-architecture` for a GPU newer than it.
fn nvrtc_option(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "NVRTC rejected a compile option (NVRTC_ERROR_INVALID_OPTION): usually the GPU's architecture, which an NVRTC older than the GPU does not know; an older libnvrtc is loaded than this GPU needs.",
        0.7,
        hits,
    )
    .with_remedy(
        "See which NVRTC is loaded, and the GPU's compute capability",
        Some("ldconfig -p | grep libnvrtc; pip list 2>/dev/null | grep -i nvrtc; nvidia-smi --query-gpu=name,compute_cap --format=csv".to_owned()),
        Some("CUDA 11.8 knows up to sm_90, 12.8 up to sm_120".to_owned()),
    )
    .with_remedy(
        "Install an NVRTC new enough for the GPU (and the package build for that CUDA)",
        Some("pip install -U nvidia-cuda-nvrtc-cu12  # with cupy-cuda12x, numba-cuda[cu12]".to_owned()),
        Some("on a GPU older than the NVRTC supports (compute_21, compute_30), use an older CUDA instead".to_owned()),
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// The image carries copies of the driver's libraries (committed from a running container, or
/// installed by a driver package in the Dockerfile); the NVIDIA container runtime must mount
/// the host's own there and refuses to overwrite them.
fn image_driver_libraries(hits: &[&Observation]) -> Hit {
    // Cause `other`: nothing the job needs is missing or of the wrong version (the host's
    // libraries are fine); the image's packaging keeps the container from starting.
    let f = finding_from(
        "GD543",
        Cause::Other,
        Severity::Error,
        "The container image carries its own copies of the NVIDIA driver's libraries (libnvidia-ml, libcuda), so the NVIDIA container runtime cannot mount the host's: an image committed from a running GPU container, or one that installs a driver package.",
        0.85,
        hits,
    )
    .with_remedy(
        "Remove the driver's libraries from the image (and any driver package from its Dockerfile)",
        Some("RUN rm -f /usr/lib/x86_64-linux-gnu/libnvidia-ml.so* /usr/lib/x86_64-linux-gnu/libcuda.so*".to_owned()),
        Some("the runtime mounts the host driver's libraries, which must match the host's kernel module".to_owned()),
    )
    .with_remedy(
        "Build images from a Dockerfile rather than `docker commit` of a container that ran with GPUs",
        None,
        None,
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// torchvision or torchaudio built for another CUDA than the installed PyTorch.
fn companion_mismatch(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "torchvision or torchaudio was built for another CUDA version than the installed PyTorch: the three must come from the same release and the same CUDA index.",
        0.9,
        hits,
    )
    .with_remedy(
        "Reinstall the three together from one CUDA index (the cuXYZ tag of the installed torch)",
        Some("pip install --force-reinstall torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu128".to_owned()),
        Some("python -c \"import torch; print(torch.__version__, torch.version.cuda)\" shows the tag to use".to_owned()),
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// xFormers' compiled kernels were built for another PyTorch (and CUDA, Python) than the
/// installed one: it goes on without them, or fails where they are needed.
fn extension_mismatch(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "xFormers' C++/CUDA extensions do not load: the installed xFormers was built for another PyTorch, CUDA or Python than the ones installed, so its kernels are missing (memory-efficient attention falls back or fails).",
        0.8,
        hits,
    )
    .with_remedy(
        "Install the xFormers built for the installed torch, from the same CUDA index",
        Some("pip install -U xformers --index-url https://download.pytorch.org/whl/cu128   # the cuXYZ tag of torch.version.cuda".to_owned()),
        Some("python -m xformers.info shows what it was built for and what is available".to_owned()),
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// A compiled extension that lacks a C++ symbol of the installed PyTorch: its binary was built
/// against another PyTorch (each PyTorch release changes its C++ ABI). The packages that ship
/// per-PyTorch wheels get their own install line.
fn torch_extension_mismatch(hits: &[&Observation], extension: &str) -> Hit {
    let package = extension.split('/').next().unwrap_or(extension);
    let command = if [
        "torch_scatter",
        "torch_sparse",
        "torch_cluster",
        "torch_spline_conv",
        "pyg_lib",
    ]
    .contains(&package)
    {
        "pip install --force-reinstall --no-cache-dir torch-scatter torch-sparse -f https://data.pyg.org/whl/torch-<torch.__version__ without +cuXYZ>+<cuXYZ>.html"
    } else if package.starts_with("flash_attn") {
        "pip install --force-reinstall --no-build-isolation --no-cache-dir flash-attn   # or the release wheel named for this torch, CUDA and Python"
    } else if package.starts_with("fbgemm_gpu") {
        "pip install --force-reinstall fbgemm-gpu --index-url https://download.pytorch.org/whl/<cuXYZ>   # the fbgemm-gpu release made with this torch release"
    } else if ["torchaudio", "torchvision", "_torchaudio"].contains(&package) {
        "pip install --force-reinstall torch torchvision torchaudio --index-url https://download.pytorch.org/whl/<cuXYZ>   # the three from one release"
    } else {
        "pip install --force-reinstall --no-build-isolation --no-cache-dir <the extension's package>   # built against the installed torch"
    };
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        format!(
            "The compiled extension `{extension}` was built against another PyTorch than the one installed: it needs a C++ symbol that this torch does not have, so it cannot load."
        ),
        0.8,
        hits,
    )
    .with_remedy(
        "See which torch and CUDA are installed: the extension must be the build for exactly these",
        Some("python -c 'import torch; print(torch.__version__, torch.version.cuda)'".to_owned()),
        None,
    )
    .with_remedy(
        "Reinstall the extension built for this torch (or install the torch it was built for)",
        Some(command.to_owned()),
        None,
    );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// A CUDA library that loads but is not the version the package was built against.
/// A compiled extension needs a C++ standard-library symbol that the loaded libstdc++ does
/// not have: it was built with a newer compiler than the runtime that comes first (a conda
/// environment's older libstdc++, or an old system one under a newer toolchain's build).
fn older_libstdcxx(hits: &[&Observation]) -> Hit {
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        "A compiled extension needs a C++ standard-library symbol that the loaded libstdc++ does not export: it was built with another compiler or C++ runtime than this environment's (for another environment, or with a newer compiler while an older libstdc++ comes first on the loader's path).",
        0.8,
        hits,
    )
    .with_remedy(
        "Install the extension's prebuilt build for this environment (its Python, PyTorch and CUDA), or build it here with this environment's compiler",
        None,
        None,
    )
    .with_remedy(
        "See which libstdc++ is loaded and which versions it offers",
        Some("python -c \"import ctypes.util; print(ctypes.util.find_library('stdc++'))\"; strings \"$CONDA_PREFIX/lib/libstdc++.so.6\" | grep GLIBCXX_ | tail -3".to_owned()),
        None,
    )
    .with_remedy(
        "In a conda environment whose libstdc++ is older than the compiler's, install a newer one",
        Some("conda install -c conda-forge libstdcxx-ng".to_owned()),
        None,
    );
    Hit {
        seq: hits[0].seq,
        finding: f,
    }
}

fn wrong_version(hits: &[&Observation]) -> Hit {
    let what = env_detail(hits).unwrap_or_else(|| "A CUDA library".to_owned());
    if what.starts_with(detail::CUDA_TOOLKIT) {
        return toolkit_mismatch(hits, &what);
    }
    if what.starts_with(detail::COMPANION_BUILD) {
        return companion_mismatch(hits);
    }
    if what == detail::NVRTC_OPTION {
        return nvrtc_option(hits);
    }
    if what == detail::EXTENSION_BUILD {
        return extension_mismatch(hits);
    }
    if let Some(extension) = what.strip_prefix(detail::TORCH_EXTENSION) {
        return torch_extension_mismatch(hits, extension);
    }
    if what == detail::IMAGE_DRIVER_LIBRARIES {
        return image_driver_libraries(hits);
    }
    if what == detail::CUFFT_INTERNAL {
        return cufft_internal(hits);
    }
    if what == detail::OLDER_LIBSTDCXX {
        return older_libstdcxx(hits);
    }
    if let Some(version) = what.strip_prefix(detail::PTXAS_REFUSED) {
        return ptxas_refused(hits, version);
    }
    let message = format!(
        "{what} is loaded, but it is not the version the package was built against: an older (or other) copy comes first on the loader's path, or the installed one is too old."
    );
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        message,
        0.8,
        hits,
    );
    let f = f
        .with_remedy(
            "See which copies are installed and which one is loaded first",
            Some("ldconfig -p | grep -E 'libcudnn|libcublas|libcudart'; pip list 2>/dev/null | grep -i nvidia-; echo $LD_LIBRARY_PATH".to_owned()),
            None,
        )
        .with_remedy(
            "Upgrade the library to the version the package wants (pip's nvidia-* wheels), or install the package build that matches the one you have",
            Some("pip install --upgrade nvidia-cudnn-cu12 nvidia-cublas-cu12  # for the library named above".to_owned()),
            None,
        )
        .with_remedy(
            "Take older copies off the loader's path (a system CUDA in LD_LIBRARY_PATH shadows pip's wheels)",
            Some("unset LD_LIBRARY_PATH  # JAX and pip-installed PyTorch find their own libraries".to_owned()),
            None,
        );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}

/// Building a CUDA extension with an nvcc whose version is not the CUDA PyTorch was built with.
fn toolkit_mismatch(hits: &[&Observation], what: &str) -> Hit {
    let f = finding_from(
        "GD543",
        Cause::EnvLibMissing,
        Severity::Error,
        format!(
            "The extension is being compiled with {what}: PyTorch refuses to build a CUDA extension with another CUDA toolkit than its own."
        ),
        0.9,
        hits,
    )
    .with_remedy(
            "See which CUDA PyTorch was built with and which nvcc is found",
            Some("python -c 'import torch; print(torch.version.cuda)'; which nvcc; nvcc --version; echo $CUDA_HOME".to_owned()),
            None,
        )
        .with_remedy(
            "Point the build at a toolkit of PyTorch's CUDA version (or install the PyTorch build for the toolkit you have)",
            Some("export CUDA_HOME=/usr/local/cuda-<torch.version.cuda> && export PATH=$CUDA_HOME/bin:$PATH".to_owned()),
            None,
        );
    Hit {
        finding: f,
        seq: hits[0].seq,
    }
}
