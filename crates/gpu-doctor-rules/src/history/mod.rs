//! Rules over series in time: leaks (GD581), little headroom left (GD580).
//!
//! The inputs are plain series of `(timestamp_ms, bytes)` that `watch`, `report` and the
//! exporter pull from live samples, a recording or the history store; the rules never read
//! a clock or a file.

pub mod alerts;
pub mod headroom;
pub mod leak;

pub use alerts::{Alert, history_alerts};
pub use headroom::headroom_finding;
pub use leak::{LeakConfig, LeakVerdict, Point, detect_leak, leak_finding};

use crate::registry::RuleDoc;

/// The docs of the rules over history (`gpu-doctor rule GD581`).
pub static RULES: &[&RuleDoc] = &[&headroom::DOC, &leak::DOC];
