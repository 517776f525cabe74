//! [`CheckResult`] and the [`Checklist`] rules append to.

use super::Report;
use gpu_doctor_model::{Finding, RuleCode, Severity};
use serde::{Deserialize, Serialize};

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Pass,
    Skip,
    Warn,
    Fail,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Skip => "skip",
            CheckStatus::Warn => "warn",
            CheckStatus::Fail => "fail",
        }
    }
}

/// One line of the checklist. `id`, `status`, `message` and `fix` are the JSON interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// Stable: `driver.version_mismatch`, `torch.cuda_build`, `gpu0.ecc`, ...
    pub id: String,
    pub status: CheckStatus,
    pub message: String,
    /// The exact command or setting that fixes it (`None` when it passed or was skipped).
    pub fix: Option<String>,
    /// The rule code of the finding behind a `warn` or `fail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<RuleCode>,
    /// The finding itself (rendered separately, not repeated in the check's JSON).
    #[serde(skip)]
    pub finding: Option<Finding>,
}

impl CheckResult {
    pub fn pass(id: impl Into<String>, message: impl Into<String>) -> Self {
        CheckResult {
            id: id.into(),
            status: CheckStatus::Pass,
            message: message.into(),
            fix: None,
            code: None,
            finding: None,
        }
    }

    pub fn skip(id: impl Into<String>, message: impl Into<String>) -> Self {
        CheckResult {
            status: CheckStatus::Skip,
            ..CheckResult::pass(id, message)
        }
    }

    /// A check that did not pass: its status follows the finding's severity (error → fail,
    /// warn or info → warn), its message is the finding's and its fix the first remedy's
    /// command (or action).
    pub fn problem(id: impl Into<String>, finding: Finding) -> Self {
        let status = if finding.severity == Severity::Error {
            CheckStatus::Fail
        } else {
            CheckStatus::Warn
        };
        let fix = finding
            .remedies
            .first()
            .map(|r| r.command.clone().unwrap_or_else(|| r.action.clone()));
        CheckResult {
            id: id.into(),
            status,
            message: finding.message.clone(),
            fix,
            code: Some(finding.code.clone()),
            finding: Some(finding),
        }
    }
}

/// The checks so far, in the order they run.
#[derive(Debug, Clone, Default)]
pub struct Checklist {
    pub checks: Vec<CheckResult>,
}

impl Checklist {
    pub fn push(&mut self, check: CheckResult) {
        self.checks.push(check);
    }

    pub fn pass(&mut self, id: impl Into<String>, message: impl Into<String>) {
        self.push(CheckResult::pass(id, message));
    }

    pub fn skip(&mut self, id: impl Into<String>, message: impl Into<String>) {
        self.push(CheckResult::skip(id, message));
    }

    pub fn problem(&mut self, id: impl Into<String>, finding: Finding) {
        self.push(CheckResult::problem(id, finding));
    }

    /// Whether a check with this id failed or warned (later rules lower their confidence
    /// when an earlier one already explains the symptom).
    pub fn flagged(&self, id: &str) -> bool {
        self.checks
            .iter()
            .any(|c| c.id == id && matches!(c.status, CheckStatus::Warn | CheckStatus::Fail))
    }

    /// The report: checks in order; findings worst first, then most confident, then by
    /// checklist order.
    pub fn into_report(self) -> Report {
        let mut findings: Vec<(usize, gpu_doctor_model::Finding)> = self
            .checks
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.finding.clone().map(|f| (i, f)))
            .collect();
        findings.sort_by(|(ia, a), (ib, b)| {
            b.severity
                .cmp(&a.severity)
                .then(b.confidence.total_cmp(&a.confidence))
                .then(ia.cmp(ib))
        });
        Report {
            checks: self.checks,
            findings: findings.into_iter().map(|(_, f)| f).collect(),
        }
    }
}
