//! Renders findings for people and for scripts. Every verb that produces findings prints
//! them through here, so they look the same in `explain`, `check`, `snapshot` and `run`.

use gpu_doctor_model::{Finding, SCHEMA_VERSION, Severity};
use std::fmt::Write as _;

/// ANSI styles, or nothing when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    pub fn red(self, text: &str) -> String {
        self.paint("1;31", text)
    }
    pub fn yellow(self, text: &str) -> String {
        self.paint("1;33", text)
    }
    pub fn green(self, text: &str) -> String {
        self.paint("1;32", text)
    }
    pub fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }
    pub fn severity(self, severity: Severity) -> String {
        match severity {
            Severity::Error => self.red("error"),
            Severity::Warn => self.yellow("warn"),
            Severity::Info => self.cyan("info"),
        }
    }
}

/// Findings as a person reads them: the primary one first, each with its evidence and
/// numbered remedies.
pub fn findings_text(findings: &[Finding], style: Style) -> String {
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let gpu = f.gpu.map(|g| format!(" [GPU {g}]")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{}[{}] {}{gpu}: {}",
            style.severity(f.severity),
            f.code,
            style.bold(f.cause.as_str()),
            f.message
        );
        if !f.evidence.is_empty() {
            let _ = writeln!(out, "  {}", style.dim("evidence:"));
            for e in &f.evidence {
                let place = match e.line {
                    Some(line) => format!("{}:{line}", e.source),
                    None => e.source.clone(),
                };
                let _ = writeln!(out, "    {} {}", style.dim(&format!("{place}:")), e.text);
            }
        }
        if !f.remedies.is_empty() {
            let _ = writeln!(out, "  {}", style.dim("fix:"));
            for (n, r) in f.remedies.iter().enumerate() {
                let _ = writeln!(out, "    {}. {}", n + 1, r.action);
                if let Some(cmd) = &r.command {
                    let _ = writeln!(out, "       {}", style.green(cmd));
                }
                if let Some(detail) = &r.detail {
                    let _ = writeln!(out, "       {}", style.dim(detail));
                }
            }
        }
    }
    out
}

/// `{"schema_version": 1, "findings": [...]}` plus any extra top-level fields.
pub fn findings_json(
    findings: &[Finding],
    extra: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    obj.insert("schema_version".into(), SCHEMA_VERSION.into());
    obj.extend(extra);
    obj.insert(
        "findings".into(),
        serde_json::to_value(findings).unwrap_or_default(),
    );
    serde_json::Value::Object(obj)
}
