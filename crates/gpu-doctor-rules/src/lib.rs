//! Pure diagnosis: facts in, findings out, one file per rule, knowledge tables as data.
//!
//! - [`registry`]: every rule's documentation (`gpu-doctor rule CODE`), gathered from the
//!   modules that own the rules.
//! - [`explain`]: the rules over job output and kernel logs (GD200–GD249, GD500–GD549,
//!   GD570–GD579) and [`explain::diagnose`], which orders their findings so the root cause
//!   comes first.

/// Declares rule docs in ruff's four sections from one line each, and the module's `RULES`
/// slice that `registry` gathers: `rule_docs! { GD100 = ("GD100", "name", Cause, what, why,
/// example, fix), ... }`.
macro_rules! rule_docs {
    ($( $ident:ident = ($code:literal, $name:literal, $cause:ident, $what:literal, $why:literal, $example:literal, $fix:literal) ),* $(,)?) => {
        $(
            static $ident: $crate::registry::RuleDoc = $crate::registry::RuleDoc {
                code: $code,
                name: $name,
                cause: Some(gpu_doctor_model::Cause::$cause),
                summary: $what,
                body: concat!(
                    "## What it does\n", $what, "\n\n## Why is this bad?\n", $why,
                    "\n\n## Example\n```\n", $example, "\n```\n\n## How to fix\n", $fix, "\n"
                ),
            };
        )*
        /// This module's rules, by code.
        pub static RULES: &[&$crate::registry::RuleDoc] = &[$(&$ident),*];
    };
}
pub(crate) use rule_docs;

pub mod env;
pub mod explain;
pub mod health;
pub mod history;
pub mod memory;
pub mod registry;
pub mod sanitize;
pub mod sharing;
