//! Pure diagnosis: facts in, findings out, one file per rule, knowledge tables as data.
//!
//! - [`registry`]: every rule's documentation (`gpu-doctor rule CODE`), gathered from the
//!   modules that own the rules.
//! - [`explain`]: the rules over job output and kernel logs (GD200–GD249, GD500–GD549,
//!   GD570–GD579) and [`explain::diagnose`], which orders their findings so the root cause
//!   comes first.
pub mod env;
pub mod explain;
pub mod health;
pub mod history;
pub mod memory;
pub mod registry;
pub mod sanitize;
pub mod sharing;
