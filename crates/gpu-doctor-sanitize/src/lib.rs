//! Runs compute-sanitizer and condenses its reports into a few findings.
//!
//! compute-sanitizer prints one report per faulting thread: a single missing bound check
//! in a kernel launched over 16 384 threads is 16 384 near-identical reports, and people
//! stop reading. This crate turns that into one finding per distinct defect.
//!
//! The flow, one module per step:
//! - [`locate`]: find the compute-sanitizer executable ([`locate::SearchPlaces`]).
//! - [`runner`]: run the job under it, stream its output through, forward signals.
//! - [`parse`]: the streaming line parser, lines in, [`parse::Event`]s out.
//! - [`condense`]: group reports into [`condense::Defect`]s, bounded in memory.
//! - [`findings`]: the rules GD601–GD610, defects in, [`Finding`]s out.
//!
//! [`condense_log`] does the last three over a saved log, for `gpu-doctor explain`.

pub mod condense;
pub mod error;
pub mod findings;
pub mod locate;
pub mod parse;
pub mod runner;

pub use condense::{Condenser, Defect, Totals};
pub use error::SanitizeError;
pub use findings::RULES;
pub use parse::{Parser, Tool};

use gpu_doctor_model::Finding;

/// Condenses a saved compute-sanitizer log into findings; `None` when `bytes` is not one
/// (no line carries the sanitizer's prefix with a report, summary or banner).
pub fn condense_log(bytes: &[u8]) -> Option<Vec<Finding>> {
    condense_log_named(bytes, "log")
}

/// [`condense_log`], naming the source in each finding's evidence (`source` is usually
/// the file name).
pub fn condense_log_named(bytes: &[u8], source: &str) -> Option<Vec<Finding>> {
    let condenser = condense_bytes(bytes, None);
    let totals = condenser.totals();
    if !totals.recognised {
        return None;
    }
    Some(findings::findings(condenser.defects(), &totals, source))
}

/// Parses and groups a whole log in memory (lines split on `\n`, any encoding).
pub fn condense_bytes(bytes: &[u8], tool: Option<Tool>) -> Condenser {
    let mut parser = Parser::new();
    let mut condenser = Condenser::new(tool);
    for line in bytes.split(|&b| b == b'\n') {
        for event in parser.push_bytes(line) {
            condenser.add(event);
        }
    }
    for event in parser.finish() {
        condenser.add(event);
    }
    condenser
}
