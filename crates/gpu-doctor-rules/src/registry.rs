//! Every rule's documentation, for `gpu-doctor rule CODE` and `gpu-doctor rule --all`.
//!
//! Each module that owns rules exports a slice of [`RuleDoc`]s (`pub static RULES: &[&RuleDoc]`);
//! this file only concatenates them. To register a module's rules, add one line to
//! [`MODULES`].

use gpu_doctor_model::Cause;

/// The documentation of one rule, in ruff's shape: the body has the sections
/// `## What it does`, `## Why is this bad?`, `## Example` and `## How to fix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleDoc {
    /// The stable code, e.g. `GD501`.
    pub code: &'static str,
    /// A kebab-case name, e.g. `oom-fragmentation`.
    pub name: &'static str,
    /// The cause its findings carry (the usual one, when a rule can give several).
    pub cause: Option<Cause>,
    /// One line for listings.
    pub summary: &'static str,
    /// The Markdown body.
    pub body: &'static str,
}

/// The rule modules. Add one line per module.
const MODULES: &[&[&RuleDoc]] = &[
    crate::explain::RULES,
    crate::memory::RULES,
    crate::env::RULES,
    crate::history::RULES,
    crate::sanitize::RULES,
    crate::sharing::RULES,
];

/// All rules, sorted by code.
pub fn all() -> Vec<&'static RuleDoc> {
    let mut rules: Vec<&'static RuleDoc> = MODULES.iter().flat_map(|m| m.iter().copied()).collect();
    rules.sort_by(|a, b| a.code.cmp(b.code));
    rules
}

/// The rule with this code (case-insensitive) or kebab-case name.
pub fn find(code_or_name: &str) -> Option<&'static RuleDoc> {
    let wanted = code_or_name.trim();
    all()
        .into_iter()
        .find(|r| r.code.eq_ignore_ascii_case(wanted) || r.name.eq_ignore_ascii_case(wanted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_docs_have_every_section() {
        let rules = all();
        assert!(!rules.is_empty());
        for pair in rules.windows(2) {
            assert_ne!(pair[0].code, pair[1].code, "duplicate code");
        }
        let mut names: Vec<_> = rules.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), rules.len(), "duplicate name");
        for r in &rules {
            assert!(r.code.starts_with("GD") && r.code.len() == 5, "{}", r.code);
            for section in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## How to fix",
            ] {
                assert!(r.body.contains(section), "{} lacks {section}", r.code);
            }
        }
    }

    #[test]
    fn finds_by_code_or_name() {
        let r = find("gd501").expect("GD501 exists");
        assert_eq!(r.code, "GD501");
        assert_eq!(find(r.name).map(|r| r.code), Some("GD501"));
        assert!(find("GD999").is_none());
    }
}
