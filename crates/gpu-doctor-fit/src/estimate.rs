//! The memory model: from a [`ModelSpec`] and [`Settings`] to the peak bytes PyTorch
//! allocates ([`Estimate`]), phase by phase.
//!
//! The model follows what PyTorch eager keeps alive, as measured on an H200 with torch 2.11
//! and transformers 5.17 (`testdata/fit/h200-calibration/`, method in `docs/fit.md`):
//!
//! * training: weights, then at the start of backward every tensor the forward saved
//!   (activations, the fp32 log-softmax of the logits, autocast's 16-bit weight copies)
//!   plus the gradient of the loss over the vocabulary; at the optimizer step weights,
//!   gradients, states and the foreach temporaries. From the second step on the states exist
//!   during forward and backward too, so both phases include them.
//! * inference with `--new-tokens`: the prefill (prompt KV cache plus one layer's
//!   temporaries) or the last decode step (full KV cache plus the copy `torch.cat` makes).
//!
//! Activation bytes per token and layer come from walking the autograd graph of each family
//! at each precision (`validation/fit/probe.py`); they are exact for that code path, so the
//! error left is in what the graph walk cannot see (allocator rounding, temporaries).

use crate::model::{Family, ModelSpec};
use serde::Serialize;

const MIB: u64 = 1 << 20;

/// CUDA context plus cuBLAS/cuDNN workspaces of a PyTorch process (766.8 MiB measured on the
/// H200, torch 2.11, CUDA 13); outside `max_memory_allocated`, inside what NVML shows.
pub const CUDA_CONTEXT_BYTES: u64 = 768 * MIB;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Train,
    Infer,
}

/// The dtype of the weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    Fp32,
    Bf16,
    Fp16,
}

/// Autocast's compute dtype over fp32 weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Amp {
    Bf16,
    Fp16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Optimizer {
    Adamw,
    Adam,
    Sgd,
    Adamw8bit,
}

/// Everything about a run that decides its memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    pub mode: Mode,
    /// Micro-batch per GPU.
    pub batch: u64,
    /// Tokens per example (ignored for a model that fixes it, such as ViT).
    pub seq: u64,
    /// Tokens generated after the prompt, with a KV cache (inference).
    pub new_tokens: u64,
    pub dtype: Dtype,
    pub amp: Option<Amp>,
    pub optimizer: Optimizer,
    pub checkpointing: bool,
    /// DeepSpeed ZeRO stage (0 to 3); 3 is also FSDP's full sharding.
    pub zero: u8,
    /// GPUs the states are sharded over.
    pub gpus: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            mode: Mode::Train,
            batch: 1,
            seq: 512,
            new_tokens: 0,
            dtype: Dtype::Fp32,
            amp: None,
            optimizer: Optimizer::Adamw,
            checkpointing: false,
            zero: 0,
            gpus: 1,
        }
    }
}

/// How the arithmetic is done, which decides what is saved and in which dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precision {
    Fp32,
    /// 16-bit weights and activations.
    Half,
    /// fp32 weights, 16-bit matmuls under autocast.
    Amp,
}

impl Settings {
    fn precision(&self) -> Precision {
        match (self.dtype, self.amp) {
            (Dtype::Fp32, None) => Precision::Fp32,
            (Dtype::Fp32, Some(_)) => Precision::Amp,
            _ => Precision::Half,
        }
    }

    fn shards(&self) -> u64 {
        if self.zero > 0 { self.gpus.max(1) } else { 1 }
    }
}

/// The phase at which memory peaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Start of backward: every saved activation plus the loss gradient.
    Backward,
    /// Late backward with checkpointing: one layer recomputed, gradients nearly complete.
    BackwardRecompute,
    /// `optimizer.step()`: weights, gradients, states and temporaries.
    OptimizerStep,
    /// One forward pass without gradients.
    Forward,
    /// Generation: the forward over the prompt.
    Prefill,
    /// Generation: the last token, with the full KV cache.
    Decode,
}

impl Phase {
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Backward => "start of backward",
            Phase::BackwardRecompute => "backward, recomputing a layer",
            Phase::OptimizerStep => "optimizer step",
            Phase::Forward => "forward",
            Phase::Prefill => "prefill",
            Phase::Decode => "last decode step",
        }
    }
}

/// Bytes of each part of memory at the peak. The allocated parts add up to
/// `peak_allocated_bytes`; `allocator_overhead` brings that to `peak_reserved_bytes`, and
/// `cuda_context` is what the process holds outside PyTorch's allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Breakdown {
    pub weights: u64,
    pub gradients: u64,
    pub optimizer_states: u64,
    pub optimizer_temporaries: u64,
    pub activations: u64,
    pub autocast_weight_copies: u64,
    pub logits: u64,
    pub loss_backward: u64,
    pub kv_cache: u64,
    pub inputs: u64,
    pub allocator_overhead: u64,
    pub cuda_context: u64,
}

impl Breakdown {
    fn allocated(&self) -> u64 {
        self.weights
            + self.gradients
            + self.optimizer_states
            + self.optimizer_temporaries
            + self.activations
            + self.autocast_weight_copies
            + self.logits
            + self.loss_backward
            + self.kv_cache
            + self.inputs
    }

    /// The parts as (name, bytes), in display order.
    pub fn parts(&self) -> [(&'static str, u64); 12] {
        [
            ("weights", self.weights),
            ("gradients", self.gradients),
            ("optimizer_states", self.optimizer_states),
            ("optimizer_temporaries", self.optimizer_temporaries),
            ("activations", self.activations),
            ("autocast_weight_copies", self.autocast_weight_copies),
            ("logits", self.logits),
            ("loss_backward", self.loss_backward),
            ("kv_cache", self.kv_cache),
            ("inputs", self.inputs),
            ("allocator_overhead", self.allocator_overhead),
            ("cuda_context", self.cuda_context),
        ]
    }
}

/// The predicted memory of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// What `torch.cuda.max_memory_allocated()` would report.
    pub peak_allocated_bytes: u64,
    /// What `torch.cuda.max_memory_reserved()` would report.
    pub peak_reserved_bytes: u64,
    /// Reserved plus the CUDA context: what must be free on the GPU.
    pub total_device_bytes: u64,
    pub peak_phase: Phase,
    /// The parts at the peak.
    pub breakdown: Breakdown,
    /// Allocated bytes at each phase considered.
    pub phases: Vec<(Phase, u64)>,
    /// Tokens per example used (ViT: patches + 1).
    pub seq: u64,
}

/// Predicts the peak memory of `settings` on `model`.
pub fn estimate(model: &ModelSpec, settings: &Settings) -> Estimate {
    match settings.mode {
        Mode::Train => train(model, settings),
        Mode::Infer => infer(model, settings),
    }
}

/// Tokens per example.
fn seq_of(model: &ModelSpec, settings: &Settings) -> u64 {
    model.fixed_seq.unwrap_or(settings.seq).max(1)
}

/// Bytes one token saves for backward in one layer (T5: the mean of an encoder and a decoder
/// layer), from the autograd-graph walk in `validation/fit/probe.py`.
// The formulas use the usual notation: h hidden, i intermediate, a heads, s sequence.
#[allow(clippy::many_single_char_names)]
fn saved_per_token_layer(m: &ModelSpec, p: Precision, seq: u64) -> u64 {
    let h = m.hidden;
    let i = m.intermediate;
    let a = m.heads;
    let s = seq;
    let qd = m.heads * m.head_dim;
    let kvd = m.kv_heads * m.head_dim;
    let masks = |hm: u64| if m.dropout { hm } else { 0 };
    match m.family {
        // LayerNorm inputs, the three matmul inputs, fused QKV, contiguous K and V, and the
        // Python gelu_new's five 4h tensors; one byte per element for each dropout mask.
        Family::Gpt2 => match p {
            Precision::Fp32 => (10 * h + 5 * i) * 4 + masks(2 * h),
            Precision::Half => (10 * h + 5 * i) * 2 + masks(2 * h),
            // LayerNorms run in fp32 on the fp32 residual; gelu_new's pow/tanh in fp32.
            Precision::Amp => 24 * h + 16 * i + masks(2 * h),
        },
        Family::Llama => match p {
            // fp32 SDPA took the math path: repeated K/V and the softmax (a x s) are saved.
            Precision::Fp32 => 4 * (6 * h + qd) + 12 * qd + 16 * i + 4 * a * s,
            // RMSNorm keeps an fp32 copy; SDPA (cuDNN/flash) keeps q, k, v and the LSE.
            Precision::Half => 12 * h + 2 * (2 * h + qd) + 2 * qd + 4 * kvd + 8 * i + 4 * a,
            // Autocast casts the norm output once per projection (q, k, v, gate, up).
            Precision::Amp => 16 * h + 2 * (5 * h + qd) + 2 * qd + 4 * kvd + 8 * i + 4 * a,
        },
        Family::Bert | Family::Vit => match p {
            Precision::Fp32 => 32 * h + 8 * i + masks(2 * h),
            Precision::Half => 16 * h + 4 * i + masks(2 * h),
            Precision::Amp => 24 * h + 4 * i + masks(2 * h),
        },
        // Per encoder+decoder pair, halved: relative position bias forces the eager
        // attention (scores and softmax of a x s each) in both self-attentions.
        Family::T5 => {
            let pair = match p {
                Precision::Fp32 => 108 * h + 16 * i + 16 * a * s,
                Precision::Half => 54 * h + 8 * i + 8 * a * s,
                Precision::Amp => 98 * h + 8 * i + 16 * a * s,
            } + if m.dropout {
                5 * h + 2 * i + 2 * a * s
            } else {
                0
            };
            pair / 2
        }
    }
}

/// Bytes per token saved outside the layers (embeddings, final norm, head input).
fn rest_per_token(m: &ModelSpec, p: Precision) -> u64 {
    let e = residual_bytes(p);
    match m.family {
        Family::Bert => 8 * m.hidden * e,
        Family::Vit => m.hidden * e,
        _ => 4 * m.hidden * e,
    }
}

/// The residual stream's dtype: fp32 unless the weights are 16-bit.
fn residual_bytes(p: Precision) -> u64 {
    if p == Precision::Half { 2 } else { 4 }
}

/// Bytes of one element of the matmul outputs (the KV cache, the logits before the loss).
fn compute_bytes(p: Precision) -> u64 {
    if p == Precision::Fp32 { 4 } else { 2 }
}

fn weight_bytes(dtype: Dtype) -> u64 {
    if dtype == Dtype::Fp32 { 4 } else { 2 }
}

/// Bytes per element of the logits the loss saves: the fp32 log-softmax when the loss
/// upcasts, else the dtype they come in (autocast runs cross-entropy in fp32 and keeps the
/// 16-bit logits too).
fn saved_logit_bytes(m: &ModelSpec, p: Precision) -> u64 {
    if m.family.loss_upcasts_logits() {
        4
    } else {
        match p {
            Precision::Fp32 => 4,
            Precision::Half => 2,
            Precision::Amp => 6,
        }
    }
}

/// Bytes the tokens of the batch take (ids and labels as int64; images as fp32 pixels).
fn input_bytes(m: &ModelSpec, batch: u64, seq: u64, train: bool) -> u64 {
    if m.family == Family::Vit {
        batch * 3 * m.image_size * m.image_size * 4 + if train { batch * 8 } else { 0 }
    } else {
        batch * seq * 8 * if train { 2 } else { 1 }
    }
}

fn round_up(bytes: u64, to: u64) -> u64 {
    bytes.div_ceil(to) * to
}

// The formulas use the usual notation: h hidden, i intermediate, a heads, s sequence.
#[allow(clippy::many_single_char_names)]
fn train(m: &ModelSpec, st: &Settings) -> Estimate {
    let p = st.precision();
    let seq = seq_of(m, st);
    let b = st.batch;
    let n = b * seq;
    let shards = st.shards();
    let wb = weight_bytes(st.dtype);
    let params = m.params;
    let layers = m.total_layers();

    let full_weights = params * wb;
    let weights = if st.zero >= 3 {
        // Sharded, plus the full parameters of the layer being computed and the next one
        // (prefetch).
        full_weights / shards + 2 * (m.matmul_params_per_layer * wb)
    } else {
        full_weights
    };
    let gradients = if st.zero >= 2 {
        full_weights / shards
    } else {
        full_weights
    };
    let (state_bytes, temp_bytes) = match st.optimizer {
        // torch's AdamW keeps exp_avg and exp_avg_sq in the parameter's dtype; the foreach
        // step allocates one more parameter-sized temporary (the sqrt of exp_avg_sq).
        Optimizer::Adamw | Optimizer::Adam => (2 * wb, wb),
        Optimizer::Sgd => (wb, 0),
        // bitsandbytes: two 8-bit states (plus block-wise scales, under 1 %); fused kernel.
        Optimizer::Adamw8bit => (2, 0),
    };
    let optimizer_states = params * state_bytes / shards;
    let optimizer_temporaries = params * temp_bytes / shards;

    let per_layer = saved_per_token_layer(m, p, seq);
    let rest = rest_per_token(m, p);
    let copies = if p == Precision::Amp {
        let layers_cast = if st.checkpointing { 1 } else { layers };
        2 * (layers_cast * m.matmul_params_per_layer + m.head_matmul_params)
    } else {
        0
    };
    let out_tokens = if m.family.has_lm_head() { n } else { 0 };
    let logits = out_tokens * m.vocab * saved_logit_bytes(m, p);
    let loss_backward = if m.family.has_lm_head() {
        // The gradient of the loss over the vocabulary and of its input, side by side (fp32
        // when the loss runs in fp32). Under autocast, a head that does not upcast computes the
        // loss on autocast's fp32 copy and only one fp32 gradient is alive at a time.
        let (copies_alive, g) = match (m.family.loss_upcasts_logits(), p) {
            (true, _) | (false, Precision::Fp32) => (2, 4),
            (false, Precision::Half) => (2, 2),
            (false, Precision::Amp) => (1, 4),
        };
        copies_alive * out_tokens * m.vocab * g
    } else {
        // No vocabulary: the first gradients are one layer's widest tensors.
        n * (m.intermediate + m.hidden) * compute_bytes(p)
    };
    let inputs = input_bytes(m, b, seq, true);

    let activations = if st.checkpointing {
        // Only each layer's input stays; a layer's activations return during its backward.
        n * (layers * m.hidden * residual_bytes(p) + rest)
    } else {
        n * (layers * per_layer + rest)
    };
    let base = Breakdown {
        weights,
        inputs,
        ..Breakdown::default()
    };
    let backward = Breakdown {
        optimizer_states,
        activations,
        autocast_weight_copies: copies,
        logits,
        loss_backward,
        ..base
    };
    let mut phases = vec![(Phase::Backward, backward)];
    if st.checkpointing {
        let recompute = Breakdown {
            gradients,
            optimizer_states,
            activations: activations + n * per_layer,
            autocast_weight_copies: copies,
            logits,
            ..base
        };
        phases.push((Phase::BackwardRecompute, recompute));
    }
    let step = Breakdown {
        gradients,
        optimizer_states,
        optimizer_temporaries,
        ..base
    };
    phases.push((Phase::OptimizerStep, step));
    let reserve_factor = if st.checkpointing { 1.32 } else { 1.09 };
    finish(&phases, reserve_factor, 0, seq)
}

// The formulas use the usual notation: h hidden, i intermediate, a heads, s sequence.
#[allow(clippy::many_single_char_names)]
fn infer(m: &ModelSpec, st: &Settings) -> Estimate {
    let p = st.precision();
    let seq = seq_of(m, st);
    let b = st.batch;
    let n = b * seq;
    let e = compute_bytes(p);
    let h = m.hidden;
    let i = m.intermediate;
    let weights = m.params * weight_bytes(st.dtype);
    // The largest set of temporaries alive inside one layer without autograd.
    let transient_per_token = match m.family {
        Family::Gpt2 => (5 * i + 2 * h) * e,
        Family::Llama => {
            (4 * i + 2 * h) * e
                + 4 * h
                + if p == Precision::Fp32 {
                    8 * m.heads * seq
                } else {
                    0
                }
        }
        Family::Bert | Family::Vit => (2 * i + 2 * h) * e,
        Family::T5 => (2 * i + 2 * h) * e + 8 * m.heads * seq,
    };
    let inputs = input_bytes(m, b, seq, false);
    let base = Breakdown {
        weights,
        inputs,
        ..Breakdown::default()
    };
    if st.new_tokens == 0 || !m.family.can_generate() {
        let forward = Breakdown {
            activations: n * transient_per_token,
            logits: if m.family.has_lm_head() {
                n * m.vocab * e
            } else {
                b * m.num_labels * e
            },
            ..base
        };
        return finish(&[(Phase::Forward, forward)], 1.05, 0, seq);
    }
    // T5's decoder caches only what it generated; the prompt is the encoder's input.
    let t5 = m.family == Family::T5;
    let total = if t5 {
        st.new_tokens + 1
    } else {
        seq + st.new_tokens
    };
    let (cache_layers, kv_width) = match m.family {
        Family::T5 => (m.decoder_layers, m.heads * m.head_dim),
        _ => (m.layers, m.kv_heads * m.head_dim),
    };
    let kv = |tokens: u64| 2 * cache_layers * b * tokens * kv_width * e;
    // T5's decoder also caches the cross-attention keys and values over the encoder output.
    let cross = if t5 { kv(seq) } else { 0 };
    // generate() asks for the last position's logits only and keeps them in fp32.
    let step_logits = b * m.vocab * 4;
    let prefill = Breakdown {
        kv_cache: if t5 { cross } else { kv(seq) },
        activations: n * transient_per_token,
        logits: step_logits,
        ..base
    };
    let full = kv(total) + cross;
    let decode = Breakdown {
        // DynamicCache grows by torch.cat: one layer's new K (or V) exists beside the old.
        kv_cache: full + kv(total) / (2 * cache_layers.max(1)),
        logits: 2 * step_logits,
        ..base
    };
    // Each torch.cat leaves the old block behind in the cache: the reserve grows by about
    // the cache's final size.
    finish(
        &[(Phase::Prefill, prefill), (Phase::Decode, decode)],
        1.05,
        full,
        seq,
    )
}

fn finish(
    phases: &[(Phase, Breakdown)],
    reserve_factor: f64,
    extra_reserve: u64,
    seq: u64,
) -> Estimate {
    let (peak_phase, mut breakdown) = phases
        .iter()
        .copied()
        .max_by_key(|(_, b)| b.allocated())
        .unwrap_or((Phase::Forward, Breakdown::default()));
    let allocated = breakdown.allocated();
    // The caching allocator rounds blocks up (to 512 B, and 2 MiB segments) and keeps freed
    // blocks; the factor is the reserved/allocated ratio measured on the H200.
    let reserved = round_up(
        (allocated as f64 * reserve_factor) as u64 + extra_reserve,
        2 * MIB,
    );
    breakdown.allocator_overhead = reserved - allocated;
    breakdown.cuda_context = CUDA_CONTEXT_BYTES;
    Estimate {
        peak_allocated_bytes: allocated,
        peak_reserved_bytes: reserved,
        total_device_bytes: reserved + CUDA_CONTEXT_BYTES,
        peak_phase,
        breakdown,
        phases: phases.iter().map(|(ph, b)| (*ph, b.allocated())).collect(),
        seq,
    }
}
