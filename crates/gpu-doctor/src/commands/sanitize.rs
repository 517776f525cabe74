//! `gpu-doctor sanitize [--tool memcheck|racecheck|initcheck|synccheck] -- CMD…`: runs the
//! job under compute-sanitizer and condenses its reports into one finding per defect.
//!
//! The job's own output is streamed through as it arrives; compute-sanitizer's report
//! lines (`========= ...`) are condensed instead of echoed, unless `--show-reports`. The
//! exit status is the job's when it failed; when the job succeeded it is 1 if
//! compute-sanitizer found an error-level defect and 0 otherwise.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::{Style, findings_json, findings_text};
use clap::{Args, ValueEnum};
use gpu_doctor_model::Severity;
use gpu_doctor_sanitize::Tool;
use gpu_doctor_sanitize::locate::{SearchPlaces, locate};
use gpu_doctor_sanitize::runner::{self, Echo, Job};
use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SanitizeArgs {
    /// Which compute-sanitizer tool to run.
    #[arg(long, value_enum, default_value_t = ToolArg::Memcheck)]
    pub tool: ToolArg,
    /// Print the findings as JSON on stdout (the job's output then goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// The compute-sanitizer executable (default: PATH, then the CUDA toolkits).
    #[arg(long, value_name = "PATH", env = "GPU_DOCTOR_COMPUTE_SANITIZER")]
    pub sanitizer: Option<PathBuf>,
    /// An extra compute-sanitizer flag, repeatable: `--sanitizer-arg=--leak-check=full`.
    #[arg(
        long = "sanitizer-arg",
        value_name = "FLAG",
        allow_hyphen_values = true
    )]
    pub sanitizer_args: Vec<OsString>,
    /// Echo compute-sanitizer's own report lines too, not only the condensed findings.
    #[arg(long)]
    pub show_reports: bool,
    /// The job and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolArg {
    Memcheck,
    Racecheck,
    Initcheck,
    Synccheck,
}

impl From<ToolArg> for Tool {
    fn from(t: ToolArg) -> Tool {
        match t {
            ToolArg::Memcheck => Tool::Memcheck,
            ToolArg::Racecheck => Tool::Racecheck,
            ToolArg::Initcheck => Tool::Initcheck,
            ToolArg::Synccheck => Tool::Synccheck,
        }
    }
}

/// Where to look for compute-sanitizer. `GPU_DOCTOR_SANITIZER_SEARCH` (folders separated
/// like PATH) replaces the toolkit folders, so tests can make the search deterministic.
fn search_places() -> SearchPlaces {
    let mut places = SearchPlaces::from_env();
    if let Some(dirs) = std::env::var_os("GPU_DOCTOR_SANITIZER_SEARCH") {
        places.folders = std::env::split_paths(&dirs).collect();
        places.globs.clear();
    }
    places
}

pub fn run(ctx: &Context, args: SanitizeArgs) -> anyhow::Result<ExitStatus> {
    let tool = Tool::from(args.tool);
    let sanitizer = match args.sanitizer {
        Some(path) => path,
        None => locate(&search_places()).map_err(|e| Hinted::new(e.to_string(), e.hint()))?,
    };
    let job = Job {
        sanitizer,
        tool,
        sanitizer_args: args.sanitizer_args,
        command: args.command,
    };
    let echo = if args.json {
        Echo::Stderr
    } else {
        Echo::Stdout
    };
    let outcome = runner::run_filtered(&job, echo, !args.show_reports)
        .map_err(|e| Hinted::new(e.to_string(), e.hint()))?;

    let totals = outcome.totals;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let mut extra = serde_json::Map::new();
        extra.insert("tool".into(), tool.as_str().into());
        extra.insert("job_exit_code".into(), outcome.exit.code().into());
        extra.insert("reports".into(), totals.reports.into());
        extra.insert(
            "error_summary".into(),
            totals
                .error_summary
                .map_or(serde_json::Value::Null, Into::into),
        );
        extra.insert("lines_read".into(), outcome.lines.into());
        let doc = findings_json(&outcome.findings, extra);
        serde_json::to_writer_pretty(&mut stdout, &doc)?;
        writeln!(stdout)?;
    } else {
        let style = Style { color: ctx.color };
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "gpu-doctor: compute-sanitizer {tool}: {} condensed into {} (job exit status {})",
            plural(totals.reports, "report"),
            plural(outcome.findings.len() as u64, "finding"),
            outcome.exit.code()
        );
        // A blank line parts the job's output (which may end mid-line) from the findings.
        writeln!(stdout)?;
        if outcome.findings.is_empty() {
            writeln!(stdout, "No defects found by compute-sanitizer {tool}.")?;
        } else {
            write!(stdout, "{}", findings_text(&outcome.findings, style))?;
        }
    }
    stdout.flush()?;

    let code = outcome.exit.code();
    Ok(if code != 0 {
        ExitStatus::Code(code)
    } else if outcome
        .findings
        .iter()
        .any(|f| f.severity == Severity::Error)
    {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    })
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
