//! What the estimator knows about a model: its shape ([`ModelSpec`]), read from a Hugging
//! Face `config.json` or given as numbers, and its parameter count computed from that shape.
//!
//! Only the facts that decide memory are kept: layer count, widths, heads, vocabulary, and
//! the family, which decides which tensors PyTorch saves for backward (see `estimate`).

use crate::FitError;
use serde_json::Value;
use std::path::Path;

/// A config.json larger than this is not a model config (a big `id2label` table is still far
/// below it); the bound keeps a hostile file from eating memory.
pub const MAX_CONFIG_BYTES: u64 = 8 << 20;

/// How a family of models spends activation memory; each is measured in `docs/fit.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// GPT-2: pre-LayerNorm, fused QKV, the Python `gelu_new`, dropout, tied LM head.
    Gpt2,
    /// Llama, Mistral, Qwen2: RMSNorm, rotary, grouped-query attention, SwiGLU MLP.
    Llama,
    /// BERT-style encoder (post-LayerNorm, GELU), with a masked-LM head.
    Bert,
    /// ViT: a BERT-style encoder over image patches with a classification head.
    Vit,
    /// T5: encoder-decoder, relative position bias, ReLU or gated-GELU MLP.
    T5,
}

impl Family {
    /// Whether the model predicts tokens (and so has logits over a vocabulary).
    pub fn has_lm_head(self) -> bool {
        !matches!(self, Family::Vit)
    }

    /// Whether it can generate with a KV cache.
    pub fn can_generate(self) -> bool {
        matches!(self, Family::Gpt2 | Family::Llama | Family::T5)
    }

    /// Whether transformers' loss upcasts the logits to fp32 (`ForCausalLMLoss` does
    /// `logits.float()`; the BERT and T5 heads call `CrossEntropyLoss` on them as they are).
    pub fn loss_upcasts_logits(self) -> bool {
        matches!(self, Family::Gpt2 | Family::Llama)
    }
}

/// The shape of a model, as far as memory is concerned.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelSpec {
    /// `model_type` from config.json, or `custom`.
    pub model_type: String,
    pub family: Family,
    /// Transformer layers (the encoder's for T5).
    pub layers: u64,
    /// Decoder layers (T5 only; 0 otherwise).
    pub decoder_layers: u64,
    pub hidden: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    pub intermediate: u64,
    /// Vocabulary size (0 for a vision model).
    pub vocab: u64,
    /// Classes of a classification head (ViT).
    pub num_labels: u64,
    /// Tokens per example when the model fixes it (ViT: patches + 1).
    pub fixed_seq: Option<u64>,
    /// Image side in pixels (ViT).
    pub image_size: u64,
    pub max_positions: u64,
    /// Whether dropout is active in training (it saves a mask per dropout).
    pub dropout: bool,
    /// Whether the LM head shares the embedding matrix.
    pub tied_embeddings: bool,
    /// Parameters, as `sum(p.numel() for p in model.parameters())` counts them.
    pub params: u64,
    /// Parameters of matrix multiplications in one layer (what autocast casts to 16 bits).
    pub matmul_params_per_layer: u64,
    /// Parameters of matrix multiplications outside the layers (the LM head).
    pub head_matmul_params: u64,
}

/// The numbers a user gives instead of a config.json (`--layers 32 --hidden 4096 ...`).
#[derive(Debug, Clone, Default)]
pub struct ShapeArgs {
    pub params: Option<u64>,
    pub layers: Option<u64>,
    pub hidden: Option<u64>,
    pub heads: Option<u64>,
    pub kv_heads: Option<u64>,
    pub vocab: Option<u64>,
    pub intermediate: Option<u64>,
}

impl ModelSpec {
    /// Reads a Hugging Face config.json.
    pub fn from_config_file(path: &Path) -> Result<ModelSpec, FitError> {
        let read_err = |e: std::io::Error| FitError::Read {
            path: path.to_owned(),
            reason: e.to_string(),
        };
        let len = std::fs::metadata(path).map_err(read_err)?.len();
        if len > MAX_CONFIG_BYTES {
            return Err(FitError::TooLarge {
                path: path.to_owned(),
                limit: MAX_CONFIG_BYTES,
            });
        }
        let text = std::fs::read_to_string(path).map_err(read_err)?;
        let value: Value = serde_json::from_str(&text).map_err(|e| FitError::Json {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        ModelSpec::from_config(&value)
    }

    /// Builds the spec from a parsed config.json.
    pub fn from_config(cfg: &Value) -> Result<ModelSpec, FitError> {
        let model_type = cfg
            .get("model_type")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                // Some configs only name the class (`"architectures": ["LlamaForCausalLM"]`).
                cfg.get("architectures")?
                    .get(0)?
                    .as_str()
                    .map(str::to_ascii_lowercase)
            })
            .ok_or(FitError::MissingField {
                field: "model_type",
            })?;
        let mt = model_type.to_ascii_lowercase();
        let c = Cfg(cfg);
        let spec = if mt.starts_with("gpt2") {
            let hidden = c.req(&["n_embd", "hidden_size"], "n_embd")?;
            let pdrop = c.float(&["resid_pdrop"]).unwrap_or(0.1);
            ModelSpec::gpt2(
                &model_type,
                c.req(&["n_layer", "num_hidden_layers"], "n_layer")?,
                hidden,
                c.req(&["n_head", "num_attention_heads"], "n_head")?,
                c.opt(&["n_inner"]).unwrap_or(4 * hidden),
                c.opt(&["vocab_size"]).unwrap_or(50257),
                c.opt(&["n_positions"]).unwrap_or(1024),
                pdrop > 0.0,
            )
        } else if mt.starts_with("llama") || mt.starts_with("mistral") || mt.starts_with("qwen2") {
            let hidden = c.req(&["hidden_size"], "hidden_size")?;
            let heads = c.req(&["num_attention_heads"], "num_attention_heads")?;
            let qwen = mt.starts_with("qwen2");
            let bias = c.bool(&["attention_bias"]).unwrap_or(qwen);
            let mut spec = ModelSpec::llama(
                &model_type,
                c.req(&["num_hidden_layers"], "num_hidden_layers")?,
                hidden,
                heads,
                c.opt(&["num_key_value_heads"]).unwrap_or(heads),
                c.opt(&["intermediate_size"]).unwrap_or(4 * hidden),
                c.opt(&["vocab_size"]).unwrap_or(32000),
                c.bool(&["tie_word_embeddings"]).unwrap_or(false),
                c.opt(&["head_dim"]),
                bias,
            );
            spec.max_positions = c.opt(&["max_position_embeddings"]).unwrap_or(2048);
            spec
        } else if mt == "bert" || mt == "roberta" {
            ModelSpec::bert(
                &model_type,
                c.req(&["num_hidden_layers"], "num_hidden_layers")?,
                c.req(&["hidden_size"], "hidden_size")?,
                c.req(&["num_attention_heads"], "num_attention_heads")?,
                c.req(&["intermediate_size"], "intermediate_size")?,
                c.opt(&["vocab_size"]).unwrap_or(30522),
                c.opt(&["max_position_embeddings"]).unwrap_or(512),
                c.opt(&["type_vocab_size"]).unwrap_or(2),
                c.float(&["hidden_dropout_prob"]).unwrap_or(0.1) > 0.0,
            )
        } else if mt == "vit" {
            let labels = cfg
                .get("id2label")
                .and_then(Value::as_object)
                .map_or(2, |m| m.len() as u64);
            ModelSpec::vit(
                c.req(&["num_hidden_layers"], "num_hidden_layers")?,
                c.req(&["hidden_size"], "hidden_size")?,
                c.req(&["num_attention_heads"], "num_attention_heads")?,
                c.req(&["intermediate_size"], "intermediate_size")?,
                c.opt(&["image_size"]).unwrap_or(224),
                c.opt(&["patch_size"]).unwrap_or(16),
                c.opt(&["num_channels"]).unwrap_or(3),
                labels,
                c.float(&["hidden_dropout_prob"]).unwrap_or(0.0) > 0.0,
            )
        } else if mt == "t5" || mt == "mt5" {
            let layers = c.req(&["num_layers"], "num_layers")?;
            let gated = cfg
                .get("feed_forward_proj")
                .and_then(Value::as_str)
                .is_some_and(|s| s.starts_with("gated"));
            ModelSpec::t5(
                &model_type,
                layers,
                c.opt(&["num_decoder_layers"]).unwrap_or(layers),
                c.req(&["d_model"], "d_model")?,
                c.req(&["num_heads"], "num_heads")?,
                c.opt(&["d_kv"]).unwrap_or(64),
                c.req(&["d_ff"], "d_ff")?,
                c.opt(&["vocab_size"]).unwrap_or(32128),
                c.opt(&["relative_attention_num_buckets"]).unwrap_or(32),
                gated,
                c.bool(&["tie_word_embeddings"]).unwrap_or(true),
                c.float(&["dropout_rate"]).unwrap_or(0.1) > 0.0,
            )
        } else {
            return Err(FitError::UnknownArchitecture { model_type });
        };
        spec.validate()?;
        Ok(spec)
    }

    /// A Llama-style decoder from numbers (`--layers 32 --hidden 4096 --heads 32 ...`).
    /// `params`, when given, replaces the computed count for the weights.
    pub fn from_shape(shape: &ShapeArgs) -> Result<ModelSpec, FitError> {
        let layers = shape
            .layers
            .ok_or(FitError::MissingField { field: "--layers" })?;
        let hidden = shape
            .hidden
            .ok_or(FitError::MissingField { field: "--hidden" })?;
        let heads = shape
            .heads
            .ok_or(FitError::MissingField { field: "--heads" })?;
        // Llama's rule for the MLP width: 2/3 of 4h, rounded up to a multiple of 256.
        let intermediate = shape
            .intermediate
            .unwrap_or_else(|| (8 * hidden / 3).div_ceil(256) * 256);
        let mut spec = ModelSpec::llama(
            "custom",
            layers,
            hidden,
            heads,
            shape.kv_heads.unwrap_or(heads),
            intermediate,
            shape.vocab.unwrap_or(32000),
            false,
            None,
            false,
        );
        if let Some(p) = shape.params {
            spec.params = p;
        }
        spec.validate()?;
        Ok(spec)
    }

    fn validate(&self) -> Result<(), FitError> {
        let invalid = |field, reason: &str| FitError::Invalid {
            field,
            reason: reason.to_owned(),
        };
        if self.layers == 0 || self.hidden == 0 || self.heads == 0 {
            return Err(invalid(
                "the shape",
                "layers, hidden size and heads must be > 0",
            ));
        }
        if self.kv_heads == 0 || self.heads % self.kv_heads != 0 {
            return Err(invalid(
                "kv heads",
                "the number of key/value heads must divide the number of heads",
            ));
        }
        // 2^40 elements per dimension is far beyond any model; it keeps every product below
        // u64::MAX / 2^20 so the arithmetic in `estimate` cannot overflow.
        for (name, v) in [
            ("layers", self.layers),
            ("hidden", self.hidden),
            ("intermediate", self.intermediate),
            ("vocab", self.vocab),
        ] {
            if v > 1 << 24 {
                return Err(invalid(name, "is implausibly large (over 16M)"));
            }
        }
        Ok(())
    }

    /// GPT-2 (`GPT2LMHeadModel`): tied LM head, biases everywhere.
    #[allow(clippy::too_many_arguments)]
    pub fn gpt2(
        model_type: &str,
        layers: u64,
        hidden: u64,
        heads: u64,
        inner: u64,
        vocab: u64,
        positions: u64,
        dropout: bool,
    ) -> ModelSpec {
        let h = hidden;
        let per_layer = 2 * h // ln_1
            + h * 3 * h + 3 * h // c_attn
            + h * h + h // c_proj
            + 2 * h // ln_2
            + h * inner + inner // c_fc
            + inner * h + h; // mlp c_proj
        let params = vocab * h + positions * h + layers * per_layer + 2 * h;
        ModelSpec {
            model_type: model_type.to_owned(),
            family: Family::Gpt2,
            layers,
            decoder_layers: 0,
            hidden,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            intermediate: inner,
            vocab,
            num_labels: 0,
            fixed_seq: None,
            image_size: 0,
            max_positions: positions,
            dropout,
            tied_embeddings: true,
            params,
            matmul_params_per_layer: 4 * h * h + 2 * h * inner,
            head_matmul_params: vocab * h,
        }
    }

    /// Llama / Mistral / Qwen2 (`*ForCausalLM`).
    #[allow(clippy::too_many_arguments)]
    pub fn llama(
        model_type: &str,
        layers: u64,
        hidden: u64,
        heads: u64,
        kv_heads: u64,
        intermediate: u64,
        vocab: u64,
        tied: bool,
        head_dim: Option<u64>,
        qkv_bias: bool,
    ) -> ModelSpec {
        let h = hidden;
        let d = head_dim.unwrap_or(hidden / heads.max(1));
        let q = heads * d;
        let kv = kv_heads * d;
        let matmul = h * q + 2 * h * kv + q * h + 3 * h * intermediate;
        let bias = if qkv_bias { q + 2 * kv } else { 0 };
        let per_layer = matmul + bias + 2 * h;
        let params = vocab * h + layers * per_layer + h + if tied { 0 } else { vocab * h };
        ModelSpec {
            model_type: model_type.to_owned(),
            family: Family::Llama,
            layers,
            decoder_layers: 0,
            hidden,
            heads,
            kv_heads,
            head_dim: d,
            intermediate,
            vocab,
            num_labels: 0,
            fixed_seq: None,
            image_size: 0,
            max_positions: 2048,
            dropout: false,
            tied_embeddings: tied,
            params,
            matmul_params_per_layer: matmul,
            head_matmul_params: vocab * h,
        }
    }

    /// BERT with its masked-LM head (`BertForMaskedLM`: no pooler, decoder tied).
    #[allow(clippy::too_many_arguments)]
    pub fn bert(
        model_type: &str,
        layers: u64,
        hidden: u64,
        heads: u64,
        intermediate: u64,
        vocab: u64,
        positions: u64,
        type_vocab: u64,
        dropout: bool,
    ) -> ModelSpec {
        let h = hidden;
        let embeddings = vocab * h + positions * h + type_vocab * h + 2 * h;
        let per_layer = 4 * (h * h + h)
            + 2 * h
            + h * intermediate
            + intermediate
            + intermediate * h
            + h
            + 2 * h;
        // cls.predictions: transform dense + LayerNorm, and the decoder's bias (its weight
        // is the word embeddings).
        let head = h * h + h + 2 * h + vocab;
        ModelSpec {
            model_type: model_type.to_owned(),
            family: Family::Bert,
            layers,
            decoder_layers: 0,
            hidden,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            intermediate,
            vocab,
            num_labels: 0,
            fixed_seq: None,
            image_size: 0,
            max_positions: positions,
            dropout,
            tied_embeddings: true,
            params: embeddings + layers * per_layer + head,
            matmul_params_per_layer: 4 * h * h + 2 * h * intermediate,
            head_matmul_params: vocab * h + h * h,
        }
    }

    /// The parameters `BertModel` (with its pooler) has, as model cards quote them.
    pub fn bert_base_model_params(&self) -> u64 {
        let h = self.hidden;
        self.params - (h * h + h + 2 * h + self.vocab) + (h * h + h)
    }

    /// ViT for image classification (`ViTForImageClassification`).
    #[allow(clippy::too_many_arguments)]
    pub fn vit(
        layers: u64,
        hidden: u64,
        heads: u64,
        intermediate: u64,
        image_size: u64,
        patch: u64,
        channels: u64,
        labels: u64,
        dropout: bool,
    ) -> ModelSpec {
        let h = hidden;
        let patches = (image_size / patch.max(1)).pow(2);
        let embeddings = channels * patch * patch * h + h + h + (patches + 1) * h;
        let per_layer =
            4 * (h * h + h) + 4 * h + h * intermediate + intermediate + intermediate * h + h;
        let params = embeddings + layers * per_layer + 2 * h + h * labels + labels;
        ModelSpec {
            model_type: "vit".to_owned(),
            family: Family::Vit,
            layers,
            decoder_layers: 0,
            hidden,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            intermediate,
            vocab: 0,
            num_labels: labels,
            fixed_seq: Some(patches + 1),
            image_size,
            max_positions: patches + 1,
            dropout,
            tied_embeddings: false,
            params,
            matmul_params_per_layer: 4 * h * h + 2 * h * intermediate,
            head_matmul_params: h * labels + channels * patch * patch * h,
        }
    }

    /// T5 (`T5ForConditionalGeneration`).
    #[allow(clippy::too_many_arguments)]
    pub fn t5(
        model_type: &str,
        layers: u64,
        decoder_layers: u64,
        d_model: u64,
        heads: u64,
        d_kv: u64,
        d_ff: u64,
        vocab: u64,
        buckets: u64,
        gated: bool,
        tied: bool,
        dropout: bool,
    ) -> ModelSpec {
        let d = d_model;
        let inner = heads * d_kv;
        let attn = 4 * d * inner;
        let ff = if gated { 3 * d * d_ff } else { 2 * d * d_ff };
        let enc_layer = attn + d + ff + d;
        let dec_layer = 2 * attn + 3 * d + ff;
        let params = vocab * d
            + layers * enc_layer
            + decoder_layers * dec_layer
            + 2 * buckets * heads
            + 2 * d
            + if tied { 0 } else { vocab * d };
        let matmul_total = layers * (attn + ff) + decoder_layers * (2 * attn + ff);
        ModelSpec {
            model_type: model_type.to_owned(),
            family: Family::T5,
            layers,
            decoder_layers,
            hidden: d,
            heads,
            kv_heads: heads,
            head_dim: d_kv,
            intermediate: d_ff,
            vocab,
            num_labels: 0,
            fixed_seq: None,
            image_size: 0,
            max_positions: 512,
            dropout,
            tied_embeddings: tied,
            params,
            matmul_params_per_layer: matmul_total / (layers + decoder_layers).max(1),
            head_matmul_params: vocab * d,
        }
    }

    /// Layers whose activations are stored (T5 counts encoder and decoder).
    pub fn total_layers(&self) -> u64 {
        self.layers + self.decoder_layers
    }
}

/// Typed access to a config.json object.
struct Cfg<'a>(&'a Value);

impl Cfg<'_> {
    fn opt(&self, keys: &[&str]) -> Option<u64> {
        keys.iter().find_map(|k| self.0.get(*k)?.as_u64())
    }
    fn req(&self, keys: &[&str], field: &'static str) -> Result<u64, FitError> {
        self.opt(keys).ok_or(FitError::MissingField { field })
    }
    fn float(&self, keys: &[&str]) -> Option<f64> {
        keys.iter().find_map(|k| self.0.get(*k)?.as_f64())
    }
    fn bool(&self, keys: &[&str]) -> Option<bool> {
        keys.iter().find_map(|k| self.0.get(*k)?.as_bool())
    }
}

/// Parses a parameter count such as `7B`, `1.1b`, `350M`, `124439808`.
pub fn parse_count(text: &str) -> Result<u64, FitError> {
    let t = text.trim();
    let invalid = || FitError::Invalid {
        field: "--params",
        reason: format!("`{text}` is not a count like 7B, 350M or 124439808"),
    };
    let (num, mult) = match t.chars().last() {
        Some('b' | 'B') => (&t[..t.len() - 1], 1e9),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        _ => (t, 1.0),
    };
    let v: f64 = num.trim().parse().map_err(|_| invalid())?;
    if !v.is_finite() || v <= 0.0 || v * mult > 1e15 {
        return Err(invalid());
    }
    Ok((v * mult).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gpt2_sizes_match_the_published_counts() {
        let small = ModelSpec::gpt2("gpt2", 12, 768, 12, 3072, 50257, 1024, true);
        assert_eq!(small.params, 124_439_808);
        let medium = ModelSpec::gpt2("gpt2", 24, 1024, 16, 4096, 50257, 1024, true);
        assert_eq!(medium.params, 354_823_168);
        let large = ModelSpec::gpt2("gpt2", 36, 1280, 20, 5120, 50257, 1024, true);
        assert_eq!(large.params, 774_030_080);
    }

    #[test]
    fn llama2_7b_matches_the_published_count() {
        let spec = ModelSpec::llama("llama", 32, 4096, 32, 32, 11008, 32000, false, None, false);
        assert_eq!(spec.params, 6_738_415_616);
    }

    #[test]
    fn tinyllama_gqa_matches_what_torch_counted_on_the_h200() {
        // testdata/fit/h200-calibration/llama1b-train-amp.json: "params": 1100048384
        let spec = ModelSpec::llama("llama", 22, 2048, 32, 4, 5632, 32000, false, None, false);
        assert_eq!(spec.params, 1_100_048_384);
    }

    #[test]
    fn bert_base_matches_with_and_without_the_pooler() {
        let mlm = ModelSpec::bert("bert", 12, 768, 12, 3072, 30522, 512, 2, true);
        // BertForMaskedLM as torch counted it on the H200.
        assert_eq!(mlm.params, 109_514_298);
        // bert-base-uncased's BertModel, pooler included.
        assert_eq!(mlm.bert_base_model_params(), 109_482_240);
    }

    #[test]
    fn t5_and_vit_match_what_torch_counted() {
        let t5s = ModelSpec::t5("t5", 6, 6, 512, 8, 64, 2048, 32128, 32, false, true, true);
        assert_eq!(t5s.params, 60_506_624);
        let t5b = ModelSpec::t5(
            "t5", 12, 12, 768, 12, 64, 3072, 32128, 32, false, true, true,
        );
        assert_eq!(t5b.params, 222_903_552);
        let vit = ModelSpec::vit(12, 768, 12, 3072, 224, 16, 3, 1000, false);
        assert_eq!(vit.params, 86_567_656);
        assert_eq!(vit.fixed_seq, Some(197));
    }

    #[test]
    fn reads_every_committed_config() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fit/configs");
        let cal = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fit/h200-calibration");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let spec = ModelSpec::from_config_file(&path).unwrap();
            // The count torch printed for the same config on the H200.
            let measured: Value = serde_json::from_str(
                &std::fs::read_to_string(cal.join(path.file_name().unwrap())).unwrap(),
            )
            .unwrap();
            assert_eq!(
                spec.params,
                measured["params"].as_u64().unwrap(),
                "{}",
                path.display()
            );
            n += 1;
        }
        assert!(n >= 10);
    }

    #[test]
    fn qwen2_has_qkv_bias_and_unknown_types_are_refused() {
        let cfg = json!({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
            "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
            "vocab_size": 151_936, "tie_word_embeddings": true});
        // Qwen2-0.5B: 494,032,768 parameters.
        assert_eq!(ModelSpec::from_config(&cfg).unwrap().params, 494_032_768);
        let err = ModelSpec::from_config(&json!({"model_type": "mamba"})).unwrap_err();
        assert!(matches!(err, FitError::UnknownArchitecture { .. }));
        let err = ModelSpec::from_config(&json!({"model_type": "llama"})).unwrap_err();
        assert!(matches!(err, FitError::MissingField { .. }), "{err}");
        let bad = json!({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 3});
        assert!(matches!(
            ModelSpec::from_config(&bad),
            Err(FitError::Invalid { .. })
        ));
    }

    #[test]
    fn parses_counts() {
        assert_eq!(parse_count("7B").unwrap(), 7_000_000_000);
        assert_eq!(parse_count("1.1b").unwrap(), 1_100_000_000);
        assert_eq!(parse_count("350M").unwrap(), 350_000_000);
        assert_eq!(parse_count("124439808").unwrap(), 124_439_808);
        assert!(parse_count("lots").is_err());
        assert!(parse_count("-1B").is_err());
    }
}
