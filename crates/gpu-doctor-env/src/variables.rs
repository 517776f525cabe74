//! The variables probe: the environment variables that change which GPUs CUDA shows, in what
//! order, which libraries load and how torch allocates. Only set ones are kept (an empty
//! value is kept too: `CUDA_VISIBLE_DEVICES=` hides every GPU).

use crate::Probe;
use crate::facts::VariableFacts;
use crate::host::Host;

/// The variables `check` reads.
pub const WATCHED: [&str; 16] = [
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_MODULE_LOADING",
    "CUDA_LAUNCH_BLOCKING",
    "TORCH_CUDA_ARCH_LIST",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "TF_FORCE_GPU_ALLOW_GROWTH",
];

#[derive(Debug, Clone, Default)]
pub struct VariablesProbe;

impl Probe for VariablesProbe {
    type Facts = VariableFacts;
    const NAME: &'static str = "variables";

    fn probe(&self, host: &Host) -> VariableFacts {
        VariableFacts {
            set: WATCHED
                .iter()
                .filter_map(|name| host.var(name).map(|v| ((*name).to_owned(), v.to_owned())))
                .collect(),
        }
    }
}
