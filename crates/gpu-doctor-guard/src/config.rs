//! The budget file of `gpu-doctor guard`: who may hold how much GPU memory, and what happens
//! when they hold more.
//!
//! ```toml
//! interval = "5s"            # how often the GPUs are sampled
//!
//! [[budget]]
//! user = "alice"             # or: group = "students"
//! gpu = [0, 1]               # optional; every GPU when absent
//! limit = "40GiB"            # or: fraction = 0.5 (of each GPU's memory)
//! action = "stop"            # "warn" (the default) or "stop"
//! grace = "30s"              # SIGTERM, then SIGKILL after this long
//! ```
//!
//! This module owns parsing and validating that file. Every error names the line it is
//! about, because the person reading it is editing a file by hand. Unknown keys are refused:
//! a typo such as `limt` must not silently leave a user without a budget.

use gpu_doctor_model::units::{parse_bytes, parse_duration};
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

/// Budget files larger than this are refused; a real one is a few hundred bytes.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// More rules than this is a generated file gone wrong.
pub const MAX_BUDGETS: usize = 10_000;
/// Sampling faster than this would cost more than it saves.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// Default sampling interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
/// Default grace between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);
/// The longest grace accepted: a process that ignores SIGTERM for an hour is not stopping.
pub const MAX_GRACE: Duration = Duration::from_secs(3600);

/// The whole budget file.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// How often the guard samples the GPUs.
    pub interval: Duration,
    /// In file order; see [`crate::policy`] for which rule applies to a process.
    pub budgets: Vec<Budget>,
}

/// Whom a budget is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    User(String),
    Group(String),
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::User(u) => write!(f, "user {u}"),
            Subject::Group(g) => write!(f, "group {g}"),
        }
    }
}

/// How much memory a budget allows on one GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    Bytes(u64),
    /// A fraction (0 < f <= 1) of the GPU's total memory.
    Fraction(f64),
}

impl Limit {
    /// The limit in bytes on a GPU with `total` bytes (`None` for a fraction when the total
    /// is not known).
    pub fn bytes(self, total: Option<u64>) -> Option<u64> {
        match self {
            Limit::Bytes(b) => Some(b),
            Limit::Fraction(f) => total.map(|t| (t as f64 * f).floor() as u64),
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Bytes(b) => f.write_str(&gpu_doctor_model::units::format_bytes(*b)),
            Limit::Fraction(x) => write!(f, "{:.0}% of the GPU", x * 100.0),
        }
    }
}

/// What the guard does about a process over budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Say so (a line on stderr and a finding), nothing else.
    Warn,
    /// SIGTERM, wait `grace`, SIGKILL.
    Stop,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Warn => "warn",
            Action::Stop => "stop",
        }
    }
}

/// One `[[budget]]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub subject: Subject,
    /// NVML GPU indices it applies to; `None`: every GPU.
    pub gpus: Option<Vec<u32>>,
    pub limit: Limit,
    pub action: Action,
    pub grace: Duration,
    /// 1-based line of the `[[budget]]` header, for messages.
    pub line: usize,
}

impl Budget {
    /// Whether this budget covers GPU `gpu`.
    pub fn covers_gpu(&self, gpu: u32) -> bool {
        self.gpus.as_ref().is_none_or(|g| g.contains(&gpu))
    }
}

/// Why a budget file cannot be used. Each error says where, and what to write instead.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read budget file {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("budget file {path} is larger than {max} bytes")]
    TooLarge { path: String, max: u64 },
    #[error("{path}, line {line}: {message}")]
    Invalid {
        path: String,
        line: usize,
        message: String,
    },
}

impl ConfigError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            ConfigError::Io { .. } => {
                "pass the budget file with --config FILE (see contrib/guard.example.toml)"
            }
            ConfigError::TooLarge { .. } => {
                "a budget file is a few [[budget]] tables; check the path"
            }
            ConfigError::Invalid { .. } => {
                "each [[budget]] needs `user` or `group`, and `limit` (e.g. \"40GiB\") or `fraction` (e.g. 0.5); \
                 see docs/guard.md"
            }
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    interval: Option<Spanned<String>>,
    #[serde(default)]
    budget: Vec<Spanned<RawBudget>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBudget {
    user: Option<String>,
    group: Option<String>,
    gpu: Option<Vec<u32>>,
    limit: Option<String>,
    fraction: Option<f64>,
    action: Option<Action>,
    grace: Option<String>,
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).unwrap_or(text).matches('\n').count() + 1
}

/// Reads and parses a budget file (bounded to [`MAX_CONFIG_BYTES`]).
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    use std::io::Read as _;
    let shown = path.display().to_string();
    let io = |e: std::io::Error| ConfigError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: shown,
            max: MAX_CONFIG_BYTES,
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| ConfigError::Invalid {
        path: shown.clone(),
        line: line_of(
            &String::from_utf8_lossy(e.as_bytes()),
            e.utf8_error().valid_up_to(),
        ),
        message: "the file is not UTF-8 text".into(),
    })?;
    parse(&text, &shown)
}

/// Parses the text of a budget file; `path` is only used in messages.
pub fn parse(text: &str, path: &str) -> Result<Config, ConfigError> {
    let invalid = |line: usize, message: String| ConfigError::Invalid {
        path: path.to_owned(),
        line,
        message,
    };
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        // toml's message repeats the source line and a caret; the first line is the reason.
        let message = e
            .message()
            .lines()
            .next()
            .unwrap_or("invalid TOML")
            .to_owned();
        invalid(line, message)
    })?;
    let interval = match &raw.interval {
        None => DEFAULT_INTERVAL,
        Some(s) => {
            let line = line_of(text, s.span().start);
            let d =
                parse_duration(s.get_ref()).map_err(|e| invalid(line, format!("interval: {e}")))?;
            if d < MIN_INTERVAL {
                return Err(invalid(
                    line,
                    format!("interval `{}` is shorter than 100ms", s.get_ref()),
                ));
            }
            d
        }
    };
    if raw.budget.len() > MAX_BUDGETS {
        return Err(invalid(
            1,
            format!("{} budgets; at most {MAX_BUDGETS}", raw.budget.len()),
        ));
    }
    let mut budgets = Vec::with_capacity(raw.budget.len());
    for spanned in raw.budget {
        // The span of an array-of-tables entry starts at its `[[budget]]` header.
        let line = line_of(text, spanned.span().start);
        let b = spanned.into_inner();
        let subject = match (b.user, b.group) {
            (Some(u), None) if !u.trim().is_empty() => Subject::User(u),
            (None, Some(g)) if !g.trim().is_empty() => Subject::Group(g),
            (Some(_), Some(_)) => {
                return Err(invalid(
                    line,
                    "a budget names both `user` and `group`; write one [[budget]] for each".into(),
                ));
            }
            (None, None) => {
                return Err(invalid(
                    line,
                    "a budget needs `user = \"NAME\"` or `group = \"NAME\"`".into(),
                ));
            }
            _ => return Err(invalid(line, "an empty user or group name".into())),
        };
        if matches!(&subject, Subject::User(u) if u == "root") {
            return Err(invalid(
                line,
                "root has no budget: the guard never touches root's processes".into(),
            ));
        }
        let limit = match (b.limit, b.fraction) {
            (Some(l), None) => {
                Limit::Bytes(parse_bytes(&l).map_err(|e| invalid(line, format!("limit: {e}")))?)
            }
            (None, Some(f)) if f > 0.0 && f <= 1.0 => Limit::Fraction(f),
            (None, Some(f)) => {
                return Err(invalid(
                    line,
                    format!("fraction {f} is not between 0 (excluded) and 1"),
                ));
            }
            (Some(_), Some(_)) => {
                return Err(invalid(
                    line,
                    "a budget has both `limit` and `fraction`; keep one".into(),
                ));
            }
            (None, None) => {
                return Err(invalid(
                    line,
                    format!(
                        "the budget of {subject} needs `limit = \"40GiB\"` or `fraction = 0.5`"
                    ),
                ));
            }
        };
        if limit == Limit::Bytes(0) {
            return Err(invalid(
                line,
                "a limit of 0 bytes; use a positive size".into(),
            ));
        }
        let grace = match b.grace {
            None => DEFAULT_GRACE,
            Some(g) => {
                let d = parse_duration(&g).map_err(|e| invalid(line, format!("grace: {e}")))?;
                if d > MAX_GRACE {
                    return Err(invalid(line, format!("grace `{g}` is longer than an hour")));
                }
                d
            }
        };
        if b.gpu.as_ref().is_some_and(Vec::is_empty) {
            return Err(invalid(
                line,
                "`gpu = []` names no GPU; leave `gpu` out to cover every GPU".into(),
            ));
        }
        budgets.push(Budget {
            subject,
            gpus: b.gpu,
            limit,
            action: b.action.unwrap_or(Action::Warn),
            grace,
            line,
        });
    }
    Ok(Config { interval, budgets })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, "g.toml").unwrap_err().to_string()
    }

    #[test]
    fn a_full_file_parses() {
        let c = parse(
            r#"
interval = "2s"

[[budget]]
user = "alice"
gpu = [0, 1]
limit = "40GiB"
action = "stop"
grace = "10s"

[[budget]]
group = "students"
fraction = 0.25
"#,
            "g.toml",
        )
        .unwrap();
        assert_eq!(c.interval, Duration::from_secs(2));
        assert_eq!(c.budgets.len(), 2);
        let a = &c.budgets[0];
        assert_eq!(a.subject, Subject::User("alice".into()));
        assert_eq!(a.gpus, Some(vec![0, 1]));
        assert_eq!(a.limit, Limit::Bytes(40 << 30));
        assert_eq!(a.action, Action::Stop);
        assert_eq!(a.grace, Duration::from_secs(10));
        assert_eq!(a.line, 4);
        assert!(a.covers_gpu(1) && !a.covers_gpu(2));
        let s = &c.budgets[1];
        assert_eq!(s.subject, Subject::Group("students".into()));
        assert_eq!(s.limit, Limit::Fraction(0.25));
        assert_eq!(s.action, Action::Warn);
        assert_eq!(s.grace, DEFAULT_GRACE);
        assert!(s.covers_gpu(7));
        assert_eq!(s.limit.bytes(Some(1000)), Some(250));
        assert_eq!(s.limit.bytes(None), None);
    }

    #[test]
    fn defaults() {
        let c = parse("", "g.toml").unwrap();
        assert_eq!(c.interval, DEFAULT_INTERVAL);
        assert!(c.budgets.is_empty());
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            err("[[budget]]\nuser = \"bob\"\nlimt = \"1GiB\"\n"),
            "g.toml, line 3: unknown field `limt`, expected one of `user`, `group`, `gpu`, `limit`, `fraction`, `action`, `grace`"
        );
        assert_eq!(
            err("\n[[budget]]\nuser = \"bob\"\n"),
            "g.toml, line 2: the budget of user bob needs `limit = \"40GiB\"` or `fraction = 0.5`"
        );
        assert_eq!(
            err("[[budget]]\nuser = \"bob\"\nlimit = \"40 parsecs\"\n"),
            "g.toml, line 1: limit: unknown size unit `parsecs` in `40 parsecs` (use B, KiB, MiB, GiB, TiB, or KB/MB/GB/TB)"
        );
        assert!(
            err("[[budget]]\nuser = \"a\"\ngroup = \"b\"\nlimit = \"1G\"\n")
                .contains("both `user` and `group`")
        );
        assert!(err("[[budget]]\nlimit = \"1G\"\n").contains("needs `user"));
        assert!(err("[[budget]]\nuser = \"a\"\nfraction = 1.5\n").contains("fraction 1.5"));
        assert!(
            err("[[budget]]\nuser = \"a\"\nfraction = 0.5\nlimit = \"1G\"\n")
                .contains("both `limit` and `fraction`")
        );
        assert!(
            err("[[budget]]\nuser = \"root\"\nlimit = \"1G\"\n").contains("root has no budget")
        );
        assert!(
            err("[[budget]]\nuser = \"a\"\nlimit = \"1G\"\naction = \"kill\"\n")
                .starts_with("g.toml, line 4: unknown variant `kill`")
        );
        assert!(err("interval = \"1ms\"\n").contains("line 1: interval `1ms` is shorter"));
        assert!(
            err("[[budget]]\nuser = \"a\"\nlimit = \"1G\"\ngpu = []\n").contains("names no GPU")
        );
        assert!(err("[[budget]]\nuser = \"a\"\nlimit = \"0\"\n").contains("0 bytes"));
        assert!(
            err("[[budget]]\nuser = \"a\"\nlimit = \"1G\"\ngrace = \"2h\"\n")
                .contains("longer than an hour")
        );
        assert!(err("[[budget]\n").starts_with("g.toml, line 1:"));
    }

    #[test]
    fn load_bounds_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; (MAX_CONFIG_BYTES + 10) as usize]).unwrap();
        assert!(matches!(load(&big), Err(ConfigError::TooLarge { .. })));
        let missing = load(&dir.path().join("nope.toml")).unwrap_err();
        assert!(matches!(missing, ConfigError::Io { .. }));
        assert!(missing.hint().contains("--config"));
    }
}
