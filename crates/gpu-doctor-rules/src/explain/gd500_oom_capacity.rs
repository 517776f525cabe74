//! GD500: the job needs more GPU memory than there is.

use super::oom::OomAnalysis;
use super::{Hit, Input, evidence_with, ranks_phrase, size};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::Framework;
use std::fmt::Write as _;

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD500",
    name: "oom-capacity",
    cause: Some(Cause::OomCapacity),
    summary: "Out of memory: the job needs more GPU memory than the GPU has free",
    body: r#"## What it does
Finds out-of-memory errors (PyTorch of every version, TensorFlow, JAX, CuPy, cuBLAS/cuDNN
allocation failures) whose numbers show that the memory simply ran out: the allocator held
little reserved-but-unused memory, no other process held what was missing, and memory did not
climb step by step before the failure.

## Why is this bad?
The job cannot run at this size on this GPU. Retrying, `empty_cache()` or allocator settings
will not help: the peak must come down or the GPU must get bigger.

## Example
```
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a total
capacity of 139.80 GiB of which 19.29 GiB is free. ... Of the allocated memory 120.00 GiB is
allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.
```

## How to fix
The finding says how much memory was missing. Cut the peak by at least that much:
1. a smaller batch (activation memory scales with it), keeping the effective batch with
   gradient accumulation;
2. mixed precision (`torch.autocast("cuda", dtype=torch.bfloat16)`): activations in 2 bytes
   instead of 4;
3. activation checkpointing (`model.gradient_checkpointing_enable()` or
   `torch.utils.checkpoint`): keeps only layer inputs, at about a third more compute;
4. shard the model (FSDP, ZeRO) or use a GPU with more memory.
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    match &input.oom {
        Some(a) if a.cause == Cause::OomCapacity && !a.request_exceeds_gpu => vec![finding(a)],
        _ => Vec::new(),
    }
}

/// The numbers of an OOM as evidence values.
pub(crate) fn oom_evidence(a: &OomAnalysis) -> gpu_doctor_model::Evidence {
    let i = &a.info;
    evidence_with(
        &a.primary,
        &[
            ("requested_bytes", i.requested_bytes),
            ("total_bytes", i.total_bytes),
            ("free_bytes", i.free_bytes),
            ("this_process_bytes", i.this_process_bytes),
            ("allocated_bytes", i.allocated_bytes),
            ("reserved_unallocated_bytes", i.reserved_unallocated_bytes),
            ("allowed_bytes", i.allowed_bytes),
            ("private_pool_bytes", i.private_pool_bytes),
            ("other_processes_bytes", a.others_bytes),
            ("missing_bytes", a.missing_bytes),
        ],
    )
}

/// "The job asked for 200.00 GiB on GPU 0 with 19.29 GiB free (139.80 GiB total)".
pub(crate) fn asked_phrase(a: &OomAnalysis) -> String {
    let i = &a.info;
    let gpu = i.gpu.map(|g| format!(" on GPU {g}")).unwrap_or_default();
    let ranks = ranks_phrase(&a.all.iter().collect::<Vec<_>>());
    match (i.requested_bytes, i.free_bytes, i.total_bytes) {
        (Some(req), Some(free), Some(total)) => format!(
            "the job asked for {}{gpu}{ranks} with {} free ({} total)",
            size(req),
            size(free),
            size(total)
        ),
        (Some(req), Some(free), None) => {
            format!(
                "the job asked for {}{gpu}{ranks} with {} free",
                size(req),
                size(free)
            )
        }
        (Some(req), None, Some(total)) => {
            format!(
                "the job asked for {}{gpu}{ranks} ({} total)",
                size(req),
                size(total)
            )
        }
        (Some(req), None, None) => format!("the job asked for {}{gpu}{ranks}", size(req)),
        _ if i.style == Some(gpu_doctor_scan::OomStyle::KvCache) => {
            match (
                tokens_after(&a.primary.text, "max seq len"),
                tokens_after(&a.primary.text, "stored in KV cache"),
            ) {
                (Some(context), Some(room)) => format!(
                    "the model's context of {context} tokens needs more KV cache than fits in the GPU memory vLLM may use after the weights (room for {room} tokens){gpu}{ranks}"
                ),
                _ => format!(
                    "no GPU memory is left for vLLM's KV cache after the weights{gpu}{ranks}"
                ),
            }
        }
        _ if i.style == Some(gpu_doctor_scan::OomStyle::SharedMemory) => {
            match (
                number_after(&a.primary.text, "Required:"),
                number_after(&a.primary.text, "Hardware limit:"),
            ) {
                (Some(needed), Some(limit)) => format!(
                    "a Triton kernel needs {needed} bytes of shared memory per block and this GPU has {limit}{gpu}{ranks}"
                ),
                _ => format!(
                    "a Triton kernel needs more shared memory per block than this GPU has{gpu}{ranks}"
                ),
            }
        }
        _ if i.style == Some(gpu_doctor_scan::OomStyle::Library) => format!(
            "a CUDA library (cuBLAS/cuDNN) could not get memory for its handle or workspace{gpu}{ranks}"
        ),
        _ => format!("an allocation failed{gpu}{ranks}"),
    }
}

/// The number right after `label` in Triton's message: `Required: 110592`.
fn number_after<'t>(text: &'t str, label: &str) -> Option<&'t str> {
    let rest = text[text.find(label)? + label.len()..].trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The number in `(...)` right after `label` in vLLM's message: `max seq len (4096)`.
fn tokens_after<'t>(text: &'t str, label: &str) -> Option<&'t str> {
    let rest = &text[text.find(label)? + label.len()..];
    let digits = rest.strip_prefix(" (")?;
    let end = digits.find(')')?;
    let n = &digits[..end];
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
}

/// PyTorch's allocator words its own failures `CUDA out of memory. Tried to allocate ...`; a
/// bare `CUDA error: out of memory` came from a CUDA call outside it, and carries no numbers.
fn outside_torch_allocator(a: &OomAnalysis) -> bool {
    let i = &a.info;
    i.style == Some(gpu_doctor_scan::OomStyle::CudaCall)
        && a.framework == Some(gpu_doctor_scan::Framework::Pytorch)
        && i.requested_bytes.is_none()
        && i.free_bytes.is_none()
}

fn finding(a: &OomAnalysis) -> Hit {
    let i = &a.info;
    if outside_torch_allocator(a) {
        return unnumbered_cuda_call(a);
    }
    let mut message = format!("Out of memory: {}", asked_phrase(a));
    if let Some(m) = a.missing_bytes.filter(|m| *m > 0 && i.free_bytes.is_some()) {
        let _ = write!(message, "; it needs about {} more", size(m));
    }
    if let (Some(allowed), Some(total)) = (i.allowed_bytes, i.total_bytes)
        && allowed < total
    {
        let _ = write!(
            message,
            " and the process is limited to {} of it",
            size(allowed)
        );
    }
    message.push('.');
    let confidence = if i.requested_bytes.is_some() && i.free_bytes.is_some() {
        0.8
    } else {
        0.6
    };
    let mut f = Finding::new("GD500", Cause::OomCapacity, Severity::Error, message)
        .confidence(confidence)
        .with_evidence(oom_evidence(a));
    if let Some(g) = i.gpu {
        f = f.on_gpu(gpu_doctor_model::GpuIndex(g));
    }
    for r in capacity_remedies(a) {
        f = f.with_remedy(r.0, r.1, r.2);
    }
    Hit {
        finding: f,
        seq: a.primary.seq,
    }
}

type RemedyParts = (String, Option<String>, Option<String>);

/// Ways to bring the peak down, with the saving each gives where the numbers allow.
pub(crate) fn capacity_remedies(a: &OomAnalysis) -> Vec<RemedyParts> {
    let i = &a.info;
    let mut out = Vec::new();
    let held = i.allocated_bytes.or(i.this_process_bytes);
    let need = a.missing_bytes.filter(|m| *m > 0 && i.free_bytes.is_some());
    let batch_detail = match (need, held) {
        (Some(m), Some(h)) if h > 0 => {
            let share = (m as f64 / h as f64 * 100.0).ceil();
            Some(format!(
                "{} is missing, {share:.0}% of the {} the job already holds; activation memory \
                 scales with the batch, so halving it frees up to half of the activations",
                size(m),
                size(h)
            ))
        }
        (Some(m), None) => Some(format!(
            "{} is missing; activation memory scales with the batch, so halving it frees up to half of the activations",
            size(m)
        )),
        _ => Some("activation memory scales with the batch size".to_owned()),
    };
    if i.style == Some(gpu_doctor_scan::OomStyle::SharedMemory) {
        out.push((
            "Use smaller blocks or fewer pipeline stages in the kernel's configs: shared memory grows with BLOCK sizes × num_stages".to_owned(),
            Some("triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64}, num_stages=2)   # in the kernel's @triton.autotune configs".to_owned()),
            Some("consumer GPUs have about 100 KiB per block; kernels tuned on A100/H100 (164–228 KiB) may not fit".to_owned()),
        ));
        out.push((
            "With torch.compile or a library's Triton kernels: upgrade it (newer releases pick configs by the GPU's limit), or compile without max-autotune".to_owned(),
            Some("pip install -U torch triton   # torch.compile(model) instead of mode=\"max-autotune\"".to_owned()),
            None,
        ));
        return out;
    }
    if i.style == Some(gpu_doctor_scan::OomStyle::KvCache) {
        let room = tokens_after(&a.primary.text, "stored in KV cache").unwrap_or("<fewer tokens>");
        out.push((
            "Let vLLM use more of the GPU for the KV cache".to_owned(),
            Some("vllm serve MODEL --gpu-memory-utilization 0.95".to_owned()),
            Some("the default is 0.9; other processes on the GPU count against it".to_owned()),
        ));
        out.push((
            "Or shorten the context to what fits".to_owned(),
            Some(format!("vllm serve MODEL --max-model-len {room}")),
            None,
        ));
        out.push((
            "Or free memory for the cache: a quantized model, or the model split over GPUs".to_owned(),
            Some("vllm serve MODEL --tensor-parallel-size 2   # or a quantized checkpoint (AWQ, GPTQ, FP8)".to_owned()),
            None,
        ));
        return out;
    }
    match a.framework {
        Some(Framework::Jax) => {
            out.push((
                "Let JAX use more of the GPU, or allocate on demand".to_owned(),
                Some("XLA_PYTHON_CLIENT_MEM_FRACTION=.95 python train.py".to_owned()),
                Some("JAX preallocates 75% of the GPU by default; XLA_PYTHON_CLIENT_PREALLOCATE=false allocates on demand".to_owned()),
            ));
            out.push(("Use a smaller batch size".to_owned(), None, batch_detail));
        }
        Some(Framework::Tensorflow) => {
            out.push(("Use a smaller batch size".to_owned(), None, batch_detail));
            out.push((
                "Use mixed precision".to_owned(),
                Some("tf.keras.mixed_precision.set_global_policy(\"mixed_float16\")".to_owned()),
                Some(
                    "activations in 2 bytes instead of 4: about half the activation memory"
                        .to_owned(),
                ),
            ));
        }
        Some(Framework::Cupy) => {
            out.push((
                "Process the data in smaller pieces, or free arrays you no longer need".to_owned(),
                Some("cupy.get_default_memory_pool().free_all_blocks()".to_owned()),
                batch_detail,
            ));
        }
        // A program that calls CUDA itself (a check macro's report, a C++ library, llama.cpp):
        // PyTorch's levers do not apply.
        _ if !from_pytorch(a) => {
            out.push((
                "Process less at once: a smaller batch, tile, chunk, image or context".to_owned(),
                None,
                need.map(|m| format!("{} is missing", size(m))),
            ));
            out.push((
                "Keep on the GPU only what the next step needs: free buffers before the peak, or keep large data in host memory and copy it in pieces".to_owned(),
                None,
                None,
            ));
            out.push((
                "Use the program's own memory options where it has them (lower precision, fewer layers on the GPU, a memory limit)".to_owned(),
                None,
                None,
            ));
        }
        _ => {
            out.push((
                "Use a smaller batch and keep the effective batch with gradient accumulation"
                    .to_owned(),
                None,
                batch_detail,
            ));
            out.push((
                "Train in mixed precision".to_owned(),
                Some("with torch.autocast(\"cuda\", dtype=torch.bfloat16): loss = model(batch)".to_owned()),
                Some(match i.allocated_bytes {
                    Some(h) => format!(
                        "activations in bf16 take half the bytes of fp32: up to {} of the {} held if it is mostly fp32 activations",
                        size(h / 2),
                        size(h)
                    ),
                    None => "activations in bf16 take half the bytes of fp32".to_owned(),
                }),
            ));
            out.push((
                "Checkpoint activations".to_owned(),
                Some("model.gradient_checkpointing_enable()  # or torch.utils.checkpoint.checkpoint(block, x)".to_owned()),
                Some("stores only each block's input and recomputes the rest: activation memory falls from one copy per layer to about one layer's worth, for ~30% more compute".to_owned()),
            ));
        }
    }
    out
}

/// Whether the OOM came from PyTorch (or a program whose framework the log does not name but
/// whose messages are PyTorch's): its levers are batch size, mixed precision, checkpointing.
fn from_pytorch(a: &OomAnalysis) -> bool {
    match a.framework {
        Some(Framework::Pytorch) => true,
        Some(Framework::Cuda | Framework::Other) => false,
        _ => a
            .all
            .iter()
            .any(|o| o.text.contains("torch") || o.text.contains("Tried to allocate")),
    }
}

/// A `CUDA error: out of memory` from PyTorch without numbers: say what is and is not known,
/// and put the check that tells capacity from another process first.
fn unnumbered_cuda_call(a: &OomAnalysis) -> Hit {
    let gpu = a
        .info
        .gpu
        .map(|g| format!(" on GPU {g}"))
        .unwrap_or_default();
    let mut f = Finding::new(
        "GD500",
        Cause::OomCapacity,
        Severity::Error,
        format!(
            "Out of memory in a CUDA call outside PyTorch's allocator{gpu} (creating the CUDA context at the first CUDA use, or a cuBLAS/cuDNN workspace); the message carries no numbers, so it does not tell a job too big for the GPU from a GPU that another process had filled."
        ),
    )
    .confidence(0.4)
    .with_evidence(oom_evidence(a));
    if let Some(g) = a.info.gpu {
        f = f.on_gpu(gpu_doctor_model::GpuIndex(g));
    }
    f = f.with_remedy(
        "First see whether another process holds the GPU (if it failed at the first CUDA use, that is the likely cause)",
        Some("nvidia-smi --query-compute-apps=pid,used_memory,name --format=csv".to_owned()),
        Some("or explain it again with what the GPUs show now: gpu-doctor explain --live FILE".to_owned()),
    );
    for r in capacity_remedies(a) {
        f = f.with_remedy(r.0, r.1, r.2);
    }
    Hit {
        finding: f,
        seq: a.primary.seq,
    }
}
