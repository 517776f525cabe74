//! Exit statuses and how a failed command is reported.
//!
//! 0: nothing wrong; 1: a problem was found (the command worked); 2: gpu-doctor itself could
//! not do what was asked (bad usage, unreadable input, no driver). Scripts rely on these.

use gpu_doctor_source::SourceError;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Nothing wrong.
    Success,
    /// The command worked and found a problem.
    Findings,
    /// gpu-doctor could not do its job.
    Error,
    /// Pass a child's status through (`run`, `sanitize`).
    Code(i32),
}

impl ExitStatus {
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Findings => 1,
            ExitStatus::Error => 2,
            ExitStatus::Code(c) => c,
        }
    }
}

/// An error with a hint on how to fix it, for errors that no library type already explains.
#[derive(Debug)]
pub struct Hinted {
    pub message: String,
    pub hint: String,
}

impl Hinted {
    /// Builds the error (as an `anyhow::Error`, which is what verbs return).
    #[allow(clippy::new_ret_no_self)]
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(Hinted {
            message: message.into(),
            hint: hint.into(),
        })
    }
}

impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Hinted {}

/// Prints `error: ...` and, when one is known, `hint: ...`; returns the exit status.
/// A closed stdout (`gpu-doctor status | head`) is not an error.
pub fn report_error(err: &anyhow::Error, color: bool) -> ExitStatus {
    for cause in err.chain() {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::BrokenPipe
        {
            return ExitStatus::Success;
        }
    }
    let (red, yellow, reset) = if color {
        ("\x1b[1;31m", "\x1b[1;33m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    eprintln!("{red}error{reset}: {err:#}");
    let hint = err.chain().find_map(|cause| {
        if let Some(h) = cause.downcast_ref::<Hinted>() {
            Some(h.hint.clone())
        } else {
            cause
                .downcast_ref::<SourceError>()
                .and_then(SourceError::hint)
                .map(str::to_owned)
        }
    });
    if let Some(hint) = hint {
        eprintln!("{yellow}hint{reset}: {hint}");
    }
    ExitStatus::Error
}
