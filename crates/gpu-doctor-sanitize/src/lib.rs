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
pub use parse::{Parser, Tool};

use gpu_doctor_model::Finding;
use std::io::{BufRead as _, Read as _};

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

/// [`condense_log_named`] over a reader, a line at a time: memory stays bounded however
/// long the log (lines are cut at [`parse::MAX_LINE_BYTES`]).
pub fn condense_read(
    reader: impl std::io::BufRead,
    source: &str,
) -> std::io::Result<Option<Vec<Finding>>> {
    let mut reader = reader;
    let mut parser = Parser::new();
    let mut condenser = Condenser::new(None);
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        // `take` bounds one line's bytes; the rest of an over-long line is skipped below.
        let n = (&mut reader)
            .take(parse::MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        if !line.ends_with(b"\n") && n > parse::MAX_LINE_BYTES {
            skip_rest_of_line(&mut reader)?;
        }
        for event in parser.push_bytes(&line) {
            condenser.add(event);
        }
    }
    for event in parser.finish() {
        condenser.add(event);
    }
    let totals = condenser.totals();
    Ok(totals
        .recognised
        .then(|| findings::findings(condenser.defects(), &totals, source)))
}

fn skip_rest_of_line(reader: &mut impl std::io::BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        if let Some(i) = buf.iter().position(|&b| b == b'\n') {
            reader.consume(i + 1);
            return Ok(());
        }
        let len = buf.len();
        reader.consume(len);
    }
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
