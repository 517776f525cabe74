//! One module per verb. Each exposes `XxxArgs` (its clap arguments) and
//! `run(&Context, XxxArgs) -> anyhow::Result<ExitStatus>`.

pub mod check;
pub mod env;
pub mod explain;
pub mod fit;
pub mod guard;
pub mod pick;
pub mod record;
pub mod report;
pub mod rule;
pub mod run;
pub mod sanitize;
pub mod serve;
pub mod snapshot;
pub mod status;
pub mod watch;

use crate::exit::Hinted;
use clap::{Args, ValueEnum};
use gpu_doctor_source::{GpuSource, ReplaySource};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Options every verb takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// When to colour the output.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Where GPU facts come from: `nvml` (the live driver) or `replay:FILE` (a recording).
    #[arg(long, global = true, env = "GPU_DOCTOR_SOURCE", default_value = "nvml")]
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Settings resolved once from the command line and the environment.
#[derive(Debug, Clone)]
pub struct Context {
    /// Colour on stdout.
    pub color: bool,
    pub source: SourceSpec,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// The live driver; `GPU_DOCTOR_NVML_LIB` may name the library to load.
    Nvml {
        library: Option<PathBuf>,
    },
    Replay(PathBuf),
    /// Could not be parsed; reported when a command needs a source.
    Invalid(String),
}

impl Context {
    pub fn new(global: &GlobalArgs) -> Self {
        let color = match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        let source = if global.source == "nvml" {
            SourceSpec::Nvml {
                library: std::env::var_os("GPU_DOCTOR_NVML_LIB")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from),
            }
        } else if let Some(path) = global.source.strip_prefix("replay:") {
            SourceSpec::Replay(PathBuf::from(path))
        } else {
            SourceSpec::Invalid(global.source.clone())
        };
        Context { color, source }
    }

    /// Opens the GPU source the user chose.
    pub fn open_source(&self) -> anyhow::Result<Box<dyn GpuSource>> {
        Ok(match &self.source {
            SourceSpec::Nvml { library } => {
                Box::new(gpu_doctor_nvml::NvmlSource::open(library.as_deref())?)
            }
            SourceSpec::Replay(path) => Box::new(ReplaySource::open(path)?),
            SourceSpec::Invalid(spec) => {
                return Err(Hinted::new(
                    format!("unknown source `{spec}`"),
                    "use `--source nvml` (the default) or `--source replay:FILE`",
                ));
            }
        })
    }
}
