//! GD541: a CPU-only `PyTorch`.

use super::{Hit, Input, env_observations, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::EnvKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD541",
    name: "torch-cpu-build",
    cause: Some(Cause::EnvTorchCpuBuild),
    summary: "PyTorch was installed without CUDA (a CPU-only wheel)",
    body: r#"## What it does
Finds `Torch not compiled with CUDA enabled` and `compiled without CUDA support`.

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
    let mut f = finding_from(
        "GD541",
        Cause::EnvTorchCpuBuild,
        Severity::Error,
        "The installed PyTorch is a CPU-only build: it cannot use the GPU whatever the driver.",
        0.95,
        &hits,
    );
    f = f
        .with_remedy(
            "Reinstall PyTorch from its CUDA index (pick the cuXYZ tag not newer than the CUDA version `nvidia-smi` shows: cu126, cu128 or cu130)",
            Some("pip install --force-reinstall torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu128".to_owned()),
            Some("a version ending in +cpu, or torch.version.cuda == None, is the CPU-only build".to_owned()),
        )
        .with_remedy(
            "Check the result",
            Some("python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\"".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
