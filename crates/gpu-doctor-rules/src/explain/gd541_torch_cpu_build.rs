//! GD541: a CPU-only `PyTorch`.

use super::{Hit, Input, env_detail, env_observations, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{EnvKind, Observation, detail};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD541",
    name: "torch-cpu-build",
    cause: Some(Cause::EnvTorchCpuBuild),
    summary: "PyTorch was installed without CUDA (a CPU-only wheel)",
    body: r#"## What it does
Finds `Torch not compiled with CUDA enabled` and `compiled without CUDA support`; also
TensorFlow's `is_built_with_cuda()` answering `False`, conda's `cpuonly` builds and JAX's `a
CUDA-enabled jaxlib is not installed`. A framework that only says it sees no GPU
(`torch.cuda.is_available()` answering `False`, TensorFlow's `[]` for
`list_physical_devices('GPU')`, `Num GPUs Available: 0`, `Device mapping: no known
devices.`) is reported with low confidence, below any other environment finding, which would
say why.

## Why is this bad?
The installed PyTorch is a CPU-only build (`torch.__version__` ends in `+cpu`,
`torch.version.cuda` is `None`). It cannot use the GPU at all, whatever the driver. This
happens when pip picks the default wheel on a platform whose default is CPU-only, or when
another package pulls a CPU build over a CUDA one.

## Example
```
AssertionError: Torch not compiled with CUDA enabled
```

## How to fix
Reinstall from PyTorch's CUDA index, choosing the tag not newer than the CUDA version
`nvidia-smi` shows:
```
pip install --force-reinstall torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu128
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"
```
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = env_observations(input, EnvKind::TorchCpuBuild);
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let f = match env_detail(&hits).as_deref() {
        Some(d) if d == detail::TENSORFLOW_CPU => tensorflow(&hits),
        Some(d) if d == detail::CONDA_CPU => conda(&hits),
        Some(d) if d == detail::JAX_CPU => jax(&hits),
        Some(d) if d == detail::JAX_CPU_FALLBACK => jax_fallback(&hits),
        Some(d) if d == detail::TORCH_NO_GPU => torch_no_gpu(&hits),
        Some(d) if d == detail::TENSORFLOW_NO_GPU => tensorflow_no_gpu(&hits),
        Some(d) if d == detail::ONNXRUNTIME_CPU => onnxruntime(&hits),
        Some(d) if d == detail::PADDLE_CPU => paddle(&hits),
        Some(d) if d.starts_with(detail::PACKAGE_WITHOUT_CUDA) => {
            package_without_cuda(&hits, &d[detail::PACKAGE_WITHOUT_CUDA.len()..])
        }
        _ => pytorch(&hits),
    };
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

fn pytorch(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        "The installed PyTorch is a CPU-only build: it cannot use the GPU whatever the driver.",
        0.95,
        hits,
    )
    .with_remedy(
        "Reinstall PyTorch from its CUDA index (pick the cuXYZ tag not newer than the CUDA version `nvidia-smi` shows: cu126, cu128 or cu130)",
        Some("pip install --force-reinstall torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu128".to_owned()),
        Some("a version ending in +cpu, or torch.version.cuda == None, is the CPU-only build".to_owned()),
    )
    .with_remedy(
        "Check the result",
        Some("python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\"".to_owned()),
        None,
    )
}

/// conda resolved the CPU-only build (`cpuonly`, `py3.8_cpu_0`), often because another
/// package in the environment pulled it in.
fn conda(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        "conda installed the CPU-only PyTorch build (the `cpuonly` package, a `_cpu_` build string): it cannot use the GPU.",
        0.9,
        hits,
    )
    .with_remedy(
        "Remove `cpuonly` and ask for the CUDA build explicitly",
        Some("conda remove cpuonly && conda install pytorch pytorch-cuda=12.1 -c pytorch -c nvidia".to_owned()),
        Some("if another package in the environment file pulls `cpuonly` back in, pin pytorch-cuda there too".to_owned()),
    )
    .with_remedy(
        "Check the build string: it should name cuda, not cpu",
        Some("conda list | grep -E '^(pytorch|pytorch-mutex|cpuonly) '".to_owned()),
        None,
    )
}

/// JAX with only the CPU jaxlib: `a CUDA-enabled jaxlib is not installed. Falling back to cpu.`
fn jax(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        "JAX has no CUDA plugin installed (a plain `pip install jax` is CPU-only): it falls back to the CPU whatever the driver.",
        0.95,
        hits,
    )
    .with_remedy(
        "Install JAX with its CUDA plugin and libraries (cuda13 for a driver that shows CUDA 13 in nvidia-smi)",
        Some("pip install -U 'jax[cuda12]'".to_owned()),
        None,
    )
    .with_remedy(
        "Check the result",
        Some("python -c \"import jax; print(jax.devices())\"".to_owned()),
        None,
    )
}

/// JAX before 0.4.14 said only that it found no GPU: a CPU-only jaxlib most often, else a CUDA
/// jaxlib whose backend failed. A warning, so that such an error printed before it ranks first.
fn jax_fallback(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Warn,
        "JAX found no GPU and fell back to the CPU: most often the installed jaxlib is the CPU-only build (a plain `pip install jax`); with a CUDA jaxlib, an error printed before this says why its GPU backend did not start.",
        0.6,
        hits,
    )
    .with_remedy(
        "See which jaxlib is installed: a CUDA build names cuda in its version or has the jax-cuda plugin",
        Some("pip list 2>/dev/null | grep -i -E '^jax'".to_owned()),
        None,
    )
    .with_remedy(
        "Install JAX with its CUDA plugin and libraries",
        Some("pip install -U 'jax[cuda12]'".to_owned()),
        None,
    )
}

/// `torch.cuda.is_available()` answered False and nothing printed says why. The CPU-only
/// wheel is the most common reason (pip's default on Windows and macOS, a dependency that
/// pulled `torch` from PyPI's CPU index); the others are a driver missing or older than the
/// build's CUDA, and a container without GPUs. The remedies check them in that order.
fn torch_no_gpu(hits: &[&Observation]) -> Finding {
    let f = finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        format!("{} (torch.cuda.is_available() is False) and the output does not say why: most often the installed torch is a CPU-only build; with a CUDA build, the driver is missing or older than the build's CUDA, or the container was started without GPUs.", SEES_NO_GPU[0]),
        0.45,
        hits,
    )
    .with_remedy(
        "See which build is installed: a CPU-only one prints None for its CUDA version (or +cpu in its version)",
        Some("python -c \"import torch; print(torch.__version__, torch.version.cuda)\"".to_owned()),
        None,
    )
    .with_remedy(
        "If it is a CUDA build, see whether the driver answers and which CUDA it supports (at least the build's)",
        Some("nvidia-smi   # in a container: docker run --gpus all ...".to_owned()),
        None,
    )
    .with_remedy(
        "If it is the CPU build, install a CUDA one from PyTorch's index",
        Some("pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126".to_owned()),
        None,
    );
    // `torch.load` of a GPU checkpoint: on a machine meant to run on the CPU, the tensors
    // must be mapped there.
    if hits
        .iter()
        .any(|o| o.text.contains("deserialize object on a CUDA device"))
    {
        f.with_remedy(
            "If this machine is meant to run on the CPU, load the checkpoint onto it",
            Some("torch.load(path, map_location=\"cpu\")".to_owned()),
            None,
        )
    } else {
        f
    }
}

/// How the findings start that say only that a framework sees no GPU: a symptom, which any
/// other environment finding explains (see `root_rank`).
pub(crate) const SEES_NO_GPU: [&str; 2] = ["PyTorch sees no GPU", "TensorFlow sees no GPU"];

/// TensorFlow lists no GPU and says nothing of why (its `Could not load dynamic library`
/// warnings would have been found by GD543).
fn tensorflow_no_gpu(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        format!("{} and the output does not say why: most often the installed TensorFlow has no GPU support (native Windows builds since 2.11, `pip install tensorflow` without `[and-cuda]` on Linux, no tensorflow-metal on a Mac); otherwise the driver is missing or the container was started without GPUs.", SEES_NO_GPU[1]),
        0.45,
        hits,
    )
    .with_remedy(
        "See whether this TensorFlow was built with CUDA and why it skips the GPU (its log says so at level 0)",
        Some("TF_CPP_MIN_LOG_LEVEL=0 python -c \"import tensorflow as tf; print(tf.__version__, tf.test.is_built_with_cuda(), tf.config.list_physical_devices('GPU'))\"".to_owned()),
        None,
    )
    .with_remedy(
        "On Linux x86_64, install TensorFlow with its CUDA libraries",
        Some("pip install 'tensorflow[and-cuda]'".to_owned()),
        Some("on native Windows use WSL2 (or TensorFlow 2.10, the last with GPU support there); on a Mac, pip install tensorflow-metal".to_owned()),
    )
}

/// onnxruntime offers no CUDA provider: the CPU-only `onnxruntime` package is installed, alone
/// or beside `onnxruntime-gpu`, whose files it then overwrites.
fn onnxruntime(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        "onnxruntime has no CUDA provider: the CPU-only `onnxruntime` package is what Python loads (alone, or installed beside onnxruntime-gpu and overwriting its files).",
        0.85,
        hits,
    )
    .with_remedy(
        "Remove both packages and install only the GPU one",
        Some("pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu".to_owned()),
        Some("a package that depends on `onnxruntime` pulls the CPU one back in: install it first, then the steps above".to_owned()),
    )
    .with_remedy(
        "Check the result",
        Some("python -c \"import onnxruntime as ort; print(ort.get_available_providers())\"".to_owned()),
        None,
    )
}

/// Another package built without CUDA (CTranslate2, XGBoost, ...): its own words name it.
fn package_without_cuda(hits: &[&Observation], package: &str) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        format!(
            "The installed {package} was built without GPU support: it cannot use the GPU whatever the driver."
        ),
        0.9,
        hits,
    )
    .with_remedy(
        format!("Install {package}'s GPU build for your platform and CUDA, or rebuild it with CUDA enabled"),
        // torchcodec's CUDA builds are on PyTorch's index, not on PyPI.
        (package == "torchcodec").then(|| {
            "pip install --force-reinstall torchcodec --index-url https://download.pytorch.org/whl/cu128"
                .to_owned()
        }),
        Some("prebuilt wheels for some platforms (aarch64, Jetson, Windows) are CPU-only; a source build needs its CUDA option on (e.g. -DUSE_CUDA=ON / -DWITH_CUDA=ON)".to_owned()),
    )
    .with_remedy(
        "See which build is installed and where it came from",
        Some(format!("pip show {} 2>/dev/null || conda list | grep -i {}", package.to_ascii_lowercase(), package.to_ascii_lowercase())),
        None,
    )
}

fn paddle(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        "The installed PaddlePaddle is the CPU-only package (`paddlepaddle`): it cannot use the GPU whatever the driver.",
        0.95,
        hits,
    )
    .with_remedy(
        "Replace it with the GPU package for the CUDA the driver supports",
        Some("pip uninstall -y paddlepaddle && pip install paddlepaddle-gpu".to_owned()),
        Some("PaddlePaddle's install page gives the index URL for each CUDA version".to_owned()),
    )
    .with_remedy(
        "Check the result",
        Some("python -c \"import paddle; paddle.utils.run_check()\"".to_owned()),
        None,
    )
}

fn tensorflow(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        "The installed TensorFlow was built without CUDA (`tf.test.is_built_with_cuda()` is False): it cannot use the GPU.",
        0.9,
        hits,
    )
    .with_remedy(
        "On Linux x86_64, install TensorFlow with its CUDA libraries",
        Some("pip install 'tensorflow[and-cuda]'".to_owned()),
        Some("TensorFlow's PyPI wheels for native Windows (since 2.11) and for aarch64 are CPU-only: use WSL2, or NVIDIA's NGC container or JetPack builds".to_owned()),
    )
    .with_remedy(
        "Check the result",
        Some("python -c \"import tensorflow as tf; print(tf.test.is_built_with_cuda(), tf.config.list_physical_devices('GPU'))\"".to_owned()),
        None,
    )
}
