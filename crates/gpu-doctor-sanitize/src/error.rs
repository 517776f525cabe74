//! The errors `sanitize` can fail with, each with a hint a user can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SanitizeError {
    /// compute-sanitizer is on none of the places looked at.
    #[error("compute-sanitizer was not found (looked on PATH and in {})", render_places(.searched))]
    NotFound { searched: Vec<PathBuf> },
    /// It exists but could not be started.
    #[error("could not start {}: {source}", .program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Waiting for the job or reading its output failed.
    #[error("lost track of the job: {0}")]
    Io(#[from] std::io::Error),
    /// No command after `--`.
    #[error("no command to run")]
    NoCommand,
}

impl SanitizeError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            SanitizeError::NotFound { .. } => {
                "compute-sanitizer ships with the CUDA toolkit (NVIDIA's `cuda-toolkit` package, or `cuda-sanitizer-<version>` from NVIDIA's apt/dnf repository); put its folder on PATH, set CUDA_HOME, or pass `--sanitizer PATH`"
            }
            SanitizeError::Spawn { .. } => {
                "check that the file is compute-sanitizer and is executable (`compute-sanitizer --version`)"
            }
            SanitizeError::Io(_) => {
                "run the job again; if it keeps failing, run compute-sanitizer by hand"
            }
            SanitizeError::NoCommand => {
                "put the job after `--`: gpu-doctor sanitize --tool memcheck -- ./my_app args"
            }
        }
    }
}

fn render_places(places: &[PathBuf]) -> String {
    if places.is_empty() {
        return "no other folder".to_owned();
    }
    places
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
