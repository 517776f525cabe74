//! `gpu-doctor env diff A.json B.json`: what differs between two machines' exports
//! (`gpu-doctor check --export FILE`), and which difference explains "works there, not
//! here": checks that pass on one machine and fail on the other come first, then the raw
//! differences ranked by how likely they are to matter (`gpu_doctor_env::diff`).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::Style;
use clap::{Args, Subcommand};
use gpu_doctor_env::{Difference, EnvFacts, diff};
use gpu_doctor_model::SCHEMA_VERSION;
use gpu_doctor_rules::env::{CheckStatus, evaluate};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct EnvArgs {
    #[command(subcommand)]
    pub command: EnvCommand,
}

#[derive(Debug, Subcommand)]
pub enum EnvCommand {
    /// Say what differs between two `check --export` files and which difference explains
    /// "works there, not here". Exit 0 when nothing differs, 1 when something does.
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The export from the first machine (e.g. the one where the job works).
    pub a: PathBuf,
    /// The export from the second machine.
    pub b: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A check whose verdict differs between the two machines.
#[derive(Debug, Clone, Serialize)]
pub struct CheckChange {
    pub id: String,
    pub a: Option<CheckStatus>,
    pub b: Option<CheckStatus>,
    /// The message on the side where it is worse.
    pub message: String,
    pub fix: Option<String>,
}

pub fn run(ctx: &Context, args: EnvArgs) -> anyhow::Result<ExitStatus> {
    match args.command {
        EnvCommand::Diff(d) => run_diff(ctx, &d),
    }
}

fn read(path: &Path) -> anyhow::Result<EnvFacts> {
    EnvFacts::read_export(path).map_err(|e| Hinted::new(e.to_string(), e.hint()))
}

/// Checks that differ, the side that got worse first.
pub fn check_changes(a: &EnvFacts, b: &EnvFacts) -> Vec<CheckChange> {
    let ra = evaluate(a);
    let rb = evaluate(b);
    let mut ids: Vec<&String> = ra.checks.iter().chain(&rb.checks).map(|c| &c.id).collect();
    ids.sort();
    ids.dedup();
    let mut out: Vec<CheckChange> = ids
        .into_iter()
        .filter_map(|id| {
            let ca = ra.checks.iter().find(|c| &c.id == id);
            let cb = rb.checks.iter().find(|c| &c.id == id);
            let (sa, sb) = (ca.map(|c| c.status), cb.map(|c| c.status));
            if sa == sb {
                return None;
            }
            // Only changes where one side has a problem explain anything.
            let bad =
                |s: Option<CheckStatus>| matches!(s, Some(CheckStatus::Warn | CheckStatus::Fail));
            if !bad(sa) && !bad(sb) {
                return None;
            }
            let worse = if sb >= sa { cb.or(ca) } else { ca.or(cb) }?;
            Some(CheckChange {
                id: id.clone(),
                a: sa,
                b: sb,
                message: worse.message.clone(),
                fix: worse.fix.clone(),
            })
        })
        .collect();
    out.sort_by(|x, y| {
        let w = |c: &CheckChange| std::cmp::Reverse(c.a.max(c.b));
        w(x).cmp(&w(y)).then(x.id.cmp(&y.id))
    });
    out
}

fn name(facts: &EnvFacts, path: &Path) -> String {
    facts
        .host
        .hostname
        .clone()
        .unwrap_or_else(|| path.display().to_string())
}

fn run_diff(ctx: &Context, args: &DiffArgs) -> anyhow::Result<ExitStatus> {
    let a = read(&args.a)?;
    let b = read(&args.b)?;
    let changes = check_changes(&a, &b);
    let differences = diff(&a, &b);
    let (na, nb) = (name(&a, &args.a), name(&b, &args.b));
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "a": {"file": args.a.display().to_string(), "host": na},
            "b": {"file": args.b.display().to_string(), "host": nb},
            "explains": changes,
            "differences": differences,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        out.write_all(
            diff_text(&na, &nb, &changes, &differences, Style { color: ctx.color }).as_bytes(),
        )?;
    }
    out.flush()?;
    Ok(if changes.is_empty() && differences.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Findings
    })
}

fn status_word(s: Option<CheckStatus>) -> &'static str {
    s.map_or("absent", CheckStatus::as_str)
}

/// The diff as a person reads it.
pub fn diff_text(
    na: &str,
    nb: &str,
    changes: &[CheckChange],
    diffs: &[Difference],
    style: Style,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} A = {na}, B = {nb}",
        style.bold("gpu-doctor env diff")
    );
    if changes.is_empty() && diffs.is_empty() {
        let _ = writeln!(out, "\nno differences");
        return out;
    }
    if changes.is_empty() {
        let _ = writeln!(
            out,
            "\nNo check passes on one machine and fails on the other."
        );
    } else {
        let _ = writeln!(
            out,
            "\n{}",
            style.bold("What explains it (checks that differ)")
        );
        for c in changes {
            let _ = writeln!(
                out,
                "  {}  A {} → B {}: {}",
                c.id,
                status_word(c.a),
                status_word(c.b),
                c.message
            );
            if let Some(fix) = &c.fix {
                let _ = writeln!(out, "      {} {}", style.dim("fix:"), style.green(fix));
            }
        }
    }
    if !diffs.is_empty() {
        let _ = writeln!(out, "\n{} ({})", style.bold("Differences"), diffs.len());
        let width = diffs
            .iter()
            .map(|d| d.path.len())
            .max()
            .unwrap_or(0)
            .min(60);
        for d in diffs {
            let _ = writeln!(
                out,
                "  {:<width$}  A: {}  B: {}",
                d.path,
                d.a.as_deref().unwrap_or("(absent)"),
                d.b.as_deref().unwrap_or("(absent)")
            );
        }
    }
    out
}
