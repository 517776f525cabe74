//! GD549: TensorFlow could not place an operation on the GPU.

use super::{Hit, Input, finding_from, observations_where};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::ObsKind;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD549",
    name: "tf-device-placement",
    cause: Some(Cause::Other),
    summary: "TensorFlow could not put an operation on the GPU: the op has no GPU kernel, or TensorFlow has no GPU",
    body: r"## What it does
Finds TensorFlow's placer errors: `Cannot assign a device for operation MatMul: Could not
satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU
devices is available`, TensorFlow 1's `... because the node was colocated with a group of
nodes that required incompatible device`, and `... because no devices matching that
specification are registered in this process`.

## Why is this bad?
An operation pinned to the GPU (`with tf.device('/GPU:0')`, or colocated with variables
there) that has no GPU kernel (sparse optimizer updates, string ops, some int32 ops) cannot
run, and with soft placement off TensorFlow stops. That is a placement problem in the model
code, not in the GPU or its driver. When no GPU is registered at all, TensorFlow does not see
the GPU: the reason is printed earlier (a library it could not load, a CPU-only build,
`CUDA_VISIBLE_DEVICES`).

## Example
```
Cannot assign a device for operation MatMul: Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available.
```

## How to fix
1. Let TensorFlow move such ops to the CPU: `tf.config.set_soft_device_placement(True)`
   (TF 1: `tf.ConfigProto(allow_soft_placement=True)`).
2. Or pin only the ops that have GPU kernels; keep sparse optimizer state on the CPU.
3. No GPU registered: run `tf.config.list_physical_devices('GPU')` and read the start-up log
   for the library that failed to load.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits = observations_where(input, |k| matches!(k, ObsKind::TfPlacement { .. }));
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let (no_gpu_kernel, op) = match &first.kind {
        ObsKind::TfPlacement { no_gpu_kernel, op } => (*no_gpu_kernel, op.as_deref()),
        _ => return Vec::new(),
    };
    let op = op.map(|o| format!(" ({o})")).unwrap_or_default();
    let f = if no_gpu_kernel {
        finding_from(
            "GD549",
            Cause::Other,
            Severity::Error,
            format!(
                "TensorFlow could not put an operation{op} on the GPU: it has no GPU kernel (or is colocated with one that has none), and soft placement is off. The model's device placement, not the GPU, is at fault."
            ),
            0.8,
            &hits,
        )
        .with_remedy(
            "Let TensorFlow run ops without a GPU kernel on the CPU",
            Some("tf.config.set_soft_device_placement(True)".to_owned()),
            Some("TensorFlow 1: tf.Session(config=tf.ConfigProto(allow_soft_placement=True))".to_owned()),
        )
        .with_remedy(
            "Or stop pinning that op (and the variables it updates) to the GPU",
            Some("with tf.device('/CPU:0'): ...  # around the op, or its optimizer's sparse update".to_owned()),
            None,
        )
    } else {
        finding_from(
            "GD549",
            Cause::EnvVisibleDevices,
            Severity::Warn,
            format!(
                "TensorFlow has no GPU device to put an operation{op} on: it does not see the GPU (a library it could not load, a CPU-only build or CUDA_VISIBLE_DEVICES; the reason is printed at start-up)."
            ),
            0.5,
            &hits,
        )
        .with_remedy(
            "See which devices TensorFlow has, and why not the GPU",
            Some("python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'), tf.test.is_built_with_cuda())\"".to_owned()),
            Some("the start-up log's `Could not load dynamic library` lines name what is missing".to_owned()),
        )
        .with_remedy(
            "Check that the GPU is not hidden from the job",
            Some("echo $CUDA_VISIBLE_DEVICES; nvidia-smi -L".to_owned()),
            None,
        )
    };
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
