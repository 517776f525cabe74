//! Rewriting a job's command line and environment: the batch size (a flag, a `{batch}`
//! placeholder or an environment variable), gradient accumulation and the resume argument.
//!
//! Everything here is pure string work on `argv`, so every form a user may write
//! (`--batch-size 64`, `--batch-size=64`, `--bs {batch}`) is table-tested without a process.

use std::fmt;

/// Where the job reads its batch size from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchTarget {
    /// A flag of the job's own command line, e.g. `--batch-size` (both `--batch-size 64` and
    /// `--batch-size=64` are understood).
    Flag(String),
    /// A `{batch}` placeholder anywhere in the job's arguments.
    Placeholder,
    /// An environment variable the job reads, e.g. `BATCH_SIZE`.
    Env(String),
}

impl fmt::Display for BatchTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchTarget::Flag(flag) => f.write_str(flag),
            BatchTarget::Placeholder => f.write_str(PLACEHOLDER),
            BatchTarget::Env(name) => write!(f, "${name}"),
        }
    }
}

/// The placeholder a user writes in the job's arguments when the batch has no flag of its own.
pub const PLACEHOLDER: &str = "{batch}";

/// Why the batch cannot be found or set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    #[error("`{flag}` is not in the job's command line")]
    FlagMissing { flag: String },
    #[error("`{flag}` has no value in the job's command line")]
    FlagWithoutValue { flag: String },
    #[error("`{flag} {value}` is not a whole number")]
    NotANumber { flag: String, value: String },
    #[error("the job's arguments have no `{{batch}}` placeholder")]
    NoPlaceholder,
    #[error("the starting batch is unknown")]
    NoStartingBatch,
}

impl BatchError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            BatchError::FlagMissing { .. } | BatchError::NoStartingBatch => {
                "put the batch on the job's command line (`-- python train.py --batch-size 64`) \
                 or give the starting value with `--batch 64`"
            }
            BatchError::FlagWithoutValue { .. } | BatchError::NotANumber { .. } => {
                "give the flag a whole number, e.g. `--batch-size 64` or `--batch-size=64`"
            }
            BatchError::NoPlaceholder => {
                "write `{batch}` where the batch goes (`-- python train.py --bs {batch}`) and the \
                 starting value with `--batch 64`, or use `--batch-arg FLAG`"
            }
        }
    }
}

/// Where a flag's value sits in `argv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FlagValue {
    /// `--flag VALUE`: the value is the next argument.
    Next(usize),
    /// `--flag=VALUE`: the value follows the `=` in this argument.
    Joined(usize),
}

/// The last occurrence of `flag` (argparse and most parsers let the last one win).
fn find_flag(argv: &[String], flag: &str) -> Option<FlagValue> {
    let joined = format!("{flag}=");
    let mut found = None;
    for (i, arg) in argv.iter().enumerate() {
        if arg == flag {
            found = Some(FlagValue::Next(i + 1));
        } else if arg.starts_with(&joined) {
            found = Some(FlagValue::Joined(i));
        }
    }
    found
}

/// Reads the value of `flag` in `argv` as text.
pub fn flag_value<'a>(argv: &'a [String], flag: &str) -> Result<Option<&'a str>, BatchError> {
    match find_flag(argv, flag) {
        None => Ok(None),
        Some(FlagValue::Next(i)) => {
            argv.get(i)
                .map(|v| Some(v.as_str()))
                .ok_or_else(|| BatchError::FlagWithoutValue {
                    flag: flag.to_owned(),
                })
        }
        Some(FlagValue::Joined(i)) => Ok(Some(&argv[i][flag.len() + 1..])),
    }
}

/// Reads the value of `flag` as a whole number.
pub fn flag_number(argv: &[String], flag: &str) -> Result<Option<u64>, BatchError> {
    match flag_value(argv, flag)? {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| BatchError::NotANumber {
                flag: flag.to_owned(),
                value: v.to_owned(),
            }),
    }
}

/// Sets every occurrence of `flag` to `value`, keeping the form the user wrote; appends
/// `flag value` when the flag is not there.
pub fn set_flag(argv: &[String], flag: &str, value: &str) -> Vec<String> {
    let joined = format!("{flag}=");
    let mut out = Vec::with_capacity(argv.len() + 2);
    let mut seen = false;
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == flag {
            seen = true;
            out.push(arg.clone());
            out.push(value.to_owned());
            // Skip the old value (if there is one).
            i += 2;
            continue;
        }
        if arg.starts_with(&joined) {
            seen = true;
            out.push(format!("{flag}={value}"));
        } else {
            out.push(arg.clone());
        }
        i += 1;
    }
    if !seen {
        out.push(flag.to_owned());
        out.push(value.to_owned());
    }
    out
}

/// Removes every occurrence of `flag` and its value.
pub fn remove_flag(argv: &[String], flag: &str) -> Vec<String> {
    let joined = format!("{flag}=");
    let mut out = Vec::with_capacity(argv.len());
    let mut i = 0;
    while i < argv.len() {
        if argv[i] == flag {
            i += 2;
            continue;
        }
        if !argv[i].starts_with(&joined) {
            out.push(argv[i].clone());
        }
        i += 1;
    }
    out
}

/// Replaces `{batch}` in every argument.
pub fn fill_placeholder(argv: &[String], value: u64) -> Vec<String> {
    let text = value.to_string();
    argv.iter().map(|a| a.replace(PLACEHOLDER, &text)).collect()
}

/// Whether any argument holds the `{batch}` placeholder.
pub fn has_placeholder(argv: &[String]) -> bool {
    argv.iter().any(|a| a.contains(PLACEHOLDER))
}

/// The next batch to try: `current × factor`, rounded down, at least `min`, and always
/// smaller than `current` (a factor of 0.9 on a batch of 5 still makes progress). `None`
/// when the batch is already at `min`.
pub fn next_batch(current: u64, factor: f64, min: u64) -> Option<u64> {
    let min = min.max(1);
    if current <= min {
        return None;
    }
    let scaled = (current as f64 * factor).floor();
    let scaled = if scaled.is_finite() && scaled >= 0.0 {
        scaled as u64
    } else {
        0
    };
    Some(scaled.min(current - 1).max(min))
}

/// The accumulation that keeps `batch × accumulation` at least `effective`.
pub fn accumulation_for(effective: u64, batch: u64) -> u64 {
    effective.div_ceil(batch.max(1)).max(1)
}

/// Builds the resume arguments from a template such as `--resume {checkpoint}` or
/// `--resume={checkpoint}`: any earlier occurrence of the template's flag is removed, then the
/// template is appended with the checkpoint filled in.
pub fn apply_resume(argv: &[String], template: &str, checkpoint: &str) -> Vec<String> {
    let tokens: Vec<&str> = template.split_whitespace().collect();
    let mut out = argv.to_vec();
    if let Some(first) = tokens.first()
        && first.starts_with('-')
    {
        let flag = first.split('=').next().unwrap_or(first);
        out = remove_flag(&out, flag);
    }
    out.extend(tokens.iter().map(|t| t.replace("{checkpoint}", checkpoint)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn reads_both_flag_forms_and_the_last_wins() {
        let cases: &[(&[&str], Option<u64>)] = &[
            (&["train.py", "--batch-size", "64"], Some(64)),
            (&["train.py", "--batch-size=32"], Some(32)),
            (
                &["train.py", "--batch-size", "8", "--batch-size=16"],
                Some(16),
            ),
            (&["train.py", "--batch-sizes", "8"], None),
            (&["train.py"], None),
        ];
        for (argv, want) in cases {
            assert_eq!(flag_number(&v(argv), "--batch-size"), Ok(*want), "{argv:?}");
        }
        assert_eq!(
            flag_number(&v(&["t.py", "--batch-size"]), "--batch-size"),
            Err(BatchError::FlagWithoutValue {
                flag: "--batch-size".into()
            })
        );
        assert!(matches!(
            flag_number(&v(&["t.py", "--batch-size", "big"]), "--batch-size"),
            Err(BatchError::NotANumber { .. })
        ));
    }

    #[test]
    fn sets_flags_in_the_form_written() {
        let cases: &[(&[&str], &[&str])] = &[
            (
                &["t.py", "--batch-size", "64", "--lr", "1"],
                &["t.py", "--batch-size", "32", "--lr", "1"],
            ),
            (&["t.py", "--batch-size=64"], &["t.py", "--batch-size=32"]),
            (&["t.py"], &["t.py", "--batch-size", "32"]),
            (
                &["t.py", "--batch-size", "1", "--batch-size=2"],
                &["t.py", "--batch-size", "32", "--batch-size=32"],
            ),
        ];
        for (argv, want) in cases {
            assert_eq!(
                set_flag(&v(argv), "--batch-size", "32"),
                v(want),
                "{argv:?}"
            );
        }
    }

    #[test]
    fn next_batch_table() {
        let cases: &[(u64, f64, u64, Option<u64>)] = &[
            (64, 0.5, 1, Some(32)),
            (3, 0.5, 1, Some(1)),
            (1, 0.5, 1, None),
            (64, 0.5, 48, Some(48)),
            (48, 0.5, 48, None),
            (5, 0.9, 1, Some(4)),
            (10, 0.9, 1, Some(9)),
            (7, 0.0, 0, Some(1)),
        ];
        for &(current, factor, min, want) in cases {
            assert_eq!(
                next_batch(current, factor, min),
                want,
                "{current} x {factor}, min {min}"
            );
        }
    }

    #[test]
    fn accumulation_keeps_the_effective_batch() {
        assert_eq!(accumulation_for(64, 32), 2);
        assert_eq!(accumulation_for(64, 24), 3);
        assert_eq!(accumulation_for(64, 64), 1);
        assert_eq!(accumulation_for(10, 0), 10);
    }

    #[test]
    fn placeholder_and_resume() {
        let argv = v(&["t.py", "--bs", "{batch}", "--name=run-{batch}"]);
        assert!(has_placeholder(&argv));
        assert_eq!(
            fill_placeholder(&argv, 8),
            v(&["t.py", "--bs", "8", "--name=run-8"])
        );
        assert_eq!(
            apply_resume(
                &v(&["t.py", "--resume", "old.pt"]),
                "--resume {checkpoint}",
                "c/2.pt"
            ),
            v(&["t.py", "--resume", "c/2.pt"])
        );
        assert_eq!(
            apply_resume(&v(&["t.py"]), "--resume={checkpoint}", "c/2.pt"),
            v(&["t.py", "--resume=c/2.pt"])
        );
    }
}
