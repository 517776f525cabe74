//! Errors of the estimator and of GPU picking, each with a hint a user can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("cannot read {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("{path} is larger than {limit} bytes; a model config.json is a few kilobytes")]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{path} is not valid JSON: {reason}")]
    Json { path: PathBuf, reason: String },
    #[error("model type `{model_type}` is not one gpu-doctor fit knows")]
    UnknownArchitecture { model_type: String },
    #[error("the model description is missing `{field}`")]
    MissingField { field: &'static str },
    #[error("invalid value for {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("cannot use the lock directory {path}: {reason}")]
    Lock { path: PathBuf, reason: String },
}

impl FitError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            FitError::Read { .. } | FitError::TooLarge { .. } | FitError::Json { .. } => {
                "pass the model's Hugging Face config.json (from the model repo or `config.save_pretrained(dir)`)"
            }
            FitError::UnknownArchitecture { .. } => {
                "supported: gpt2, llama, mistral, qwen2, bert, t5, vit; for another model describe its shape: \
                 `--params 7B --layers 32 --hidden 4096 --heads 32 [--kv-heads 8] [--vocab 32000] [--intermediate 11008]`"
            }
            FitError::MissingField { .. } | FitError::Invalid { .. } => {
                "give --config FILE, or all of --layers, --hidden and --heads (and --seq for text models)"
            }
            FitError::Lock { .. } => {
                "pass a writable directory with --lock-dir, or --no-lock to pick without a lease"
            }
        }
    }
}
