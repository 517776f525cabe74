//! `gpu-doctor explain [FILE…|-] [--kernel] [--live] [--json]`: why did the job fail?
//!
//! Streams each input through the scanner (any size, memory flat), optionally the kernel
//! log (dmesg, else the journal; or a file given with `--kernel-log` for tests and offline
//! use) and what the GPUs show now (`--live`), runs the rules and prints the findings with
//! the root cause first. Exit status: 1 when a problem (warn or error) was found, 0 when
//! none, 2 when the inputs could not be read.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::{Style, findings_json, findings_text};
use crate::progress::FileProgress;
use clap::Args;
use gpu_doctor_model::{Finding, Sample, Severity};
use gpu_doctor_scan::{ScanOptions, Scanner, scan_reader};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Files with the job's output (`-` for standard input). With none, standard input is read.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Also read the kernel log (dmesg, or the journal when dmesg is not allowed) for Xid,
    /// ECC and `PCIe` errors.
    #[arg(long)]
    pub kernel: bool,
    /// Read the kernel log from FILE instead of dmesg/the journal (for tests and offline
    /// use, e.g. a saved `journalctl -k`). Implies --kernel.
    #[arg(long, value_name = "FILE", env = "GPU_DOCTOR_KERNEL_LOG")]
    pub kernel_log: Option<PathBuf>,
    /// Add what the GPUs show now (which processes hold memory, free GPUs).
    #[arg(long)]
    pub live: bool,
    /// Print one JSON object (`schema_version`, `findings`, ...) instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: ExplainArgs) -> anyhow::Result<ExitStatus> {
    let ExplainArgs {
        files,
        kernel,
        kernel_log,
        live,
        json,
    } = args;
    let read_kernel = kernel || kernel_log.is_some();
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let files: Vec<PathBuf> = if files.is_empty() && !(read_kernel && stdin_is_terminal) {
        if stdin_is_terminal {
            return Err(Hinted::new(
                "no input: give the job's output as files or on standard input",
                "`gpu-doctor explain train.log`, `python train.py 2>&1 | gpu-doctor explain`, or `gpu-doctor explain --kernel`",
            ));
        }
        vec![PathBuf::from("-")]
    } else {
        files
    };

    let mut scanner = Scanner::new(ScanOptions::default());
    let progress_allowed = std::io::stderr().is_terminal();
    for file in &files {
        scan_one(&mut scanner, file, progress_allowed)?;
    }
    if read_kernel {
        scan_kernel_log(&mut scanner, kernel_log.as_deref(), files.is_empty())?;
    }
    let facts = scanner.finish();

    let live = if live { live_sample(ctx) } else { None };
    let mut findings = gpu_doctor_rules::explain::diagnose(&facts, live.as_ref());
    // Re-reading the inputs for the sanitizer's condensed view costs a second pass: only
    // when the scanner saw compute-sanitizer reports in them.
    if facts.of_kind("sanitizer_report").next().is_some() {
        sanitizer_findings(&files, &mut findings);
    }

    let mut out = std::io::stdout().lock();
    if json {
        let mut extra = serde_json::Map::new();
        extra.insert("inputs".into(), serde_json::to_value(&facts.sources)?);
        extra.insert("bytes_scanned".into(), facts.bytes_scanned.into());
        extra.insert("lines_scanned".into(), facts.lines_scanned.into());
        extra.insert("live".into(), live.is_some().into());
        let doc = findings_json(&findings, extra);
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else if findings.is_empty() {
        writeln!(
            out,
            "No GPU problem recognised in {} line(s) of {}.",
            facts.lines_scanned,
            facts.sources.join(", ")
        )?;
    } else {
        write!(
            out,
            "{}",
            findings_text(&findings, Style { color: ctx.color })
        )?;
    }
    out.flush()?;
    Ok(status_of(&findings))
}

/// A saved compute-sanitizer log (a file; standard input is read once, by the scanner)
/// gets `gpu-doctor sanitize`'s condensed findings, first, in place of the generic GD571.
fn sanitizer_findings(files: &[PathBuf], findings: &mut Vec<Finding>) {
    let mut condensed = Vec::new();
    for file in files.iter().filter(|f| f.as_os_str() != "-") {
        let Ok(handle) = std::fs::File::open(file) else {
            continue;
        };
        let name = file.file_name().map_or_else(
            || file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        if let Ok(Some(found)) =
            gpu_doctor_sanitize::condense_read(std::io::BufReader::new(handle), &name)
        {
            condensed.extend(found);
        }
    }
    if !condensed.is_empty() {
        findings.retain(|f| f.code.0 != "GD571");
        condensed.append(findings);
        *findings = condensed;
    }
}

/// 1 when any finding is a problem (warn or error); 0 when there are none, or only notes.
fn status_of(findings: &[Finding]) -> ExitStatus {
    if findings.iter().any(|f| f.severity >= Severity::Warn) {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    }
}

fn scan_one(scanner: &mut Scanner, file: &Path, progress_allowed: bool) -> anyhow::Result<()> {
    if file.as_os_str() == "-" {
        scanner.begin_source("stdin");
        return scan_reader(scanner, std::io::stdin().lock(), |_| {}).map_err(|e| {
            Hinted::new(
                format!("cannot read standard input: {e}"),
                "pipe the job's output in, or pass files",
            )
        });
    }
    let name = file.display().to_string();
    let f = std::fs::File::open(file).map_err(|e| {
        Hinted::new(
            format!("cannot open {name}: {e}"),
            "check the path; use `-` for standard input",
        )
    })?;
    let size = f.metadata().map_or(0, |m| m.len());
    scanner.begin_source(&name);
    let bar = progress_allowed
        .then(|| FileProgress::for_file(&name, size))
        .flatten();
    scan_reader(scanner, f, |done| {
        if let Some(bar) = &bar {
            bar.set(done);
        }
    })
    .map_err(|e| {
        Hinted::new(
            format!("cannot read {name}: {e}"),
            "check the file is readable",
        )
    })?;
    drop(bar);
    Ok(())
}

/// Reads the kernel log into the scanner: the given file, else `dmesg`, else
/// `journalctl -k`. When it cannot be read, says so on stderr and goes on, unless it was
/// the only input.
fn scan_kernel_log(
    scanner: &mut Scanner,
    file: Option<&Path>,
    only_input: bool,
) -> anyhow::Result<()> {
    if let Some(path) = file {
        let f = std::fs::File::open(path).map_err(|e| {
            Hinted::new(
                format!("cannot open kernel log {}: {e}", path.display()),
                "check the path given to --kernel-log / GPU_DOCTOR_KERNEL_LOG",
            )
        })?;
        scanner.begin_source("kernel log");
        scan_reader(scanner, f, |_| {})?;
        return Ok(());
    }
    let attempts: [(&str, &[&str]); 2] = [
        ("dmesg", &["--ctime"]),
        ("journalctl", &["-k", "-b", "--no-pager", "-o", "short-iso"]),
    ];
    let mut why = Vec::new();
    for (program, argv) in attempts {
        match stream_command(scanner, program, argv) {
            Ok(()) => return Ok(()),
            Err(e) => why.push(format!("{program}: {e}")),
        }
    }
    let message = format!("cannot read the kernel log ({})", why.join("; "));
    let hint = "run as root or with `sudo`, allow it with `sudo sysctl kernel.dmesg_restrict=0`, or save it and pass `--kernel-log FILE`";
    if only_input {
        return Err(Hinted::new(message, hint));
    }
    eprintln!("warning: {message}; going on without it\nhint: {hint}");
    Ok(())
}

/// Runs a command and scans its standard output as it comes. Fails when the command cannot
/// start, prints nothing, or exits non-zero.
fn stream_command(scanner: &mut Scanner, program: &str, argv: &[&str]) -> Result<(), String> {
    let mut child = Command::new(program)
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let Some(stdout) = child.stdout.take() else {
        return Err("no output".to_owned());
    };
    // Scan into a scratch scanner first: a failing command (dmesg without permission) must
    // not leave a half-empty "kernel log" source behind.
    let mut bytes = 0u64;
    let mut probe = Scanner::new(ScanOptions::default());
    probe.begin_source("kernel log");
    let result = scan_reader(&mut probe, stdout, |n| bytes = n);
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.by_ref().take(4096).read_to_string(&mut err);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    result.map_err(|e| e.to_string())?;
    if !status.success() || bytes == 0 {
        let err = err.lines().next().unwrap_or("no output").trim().to_owned();
        return Err(if err.is_empty() {
            format!("exited with {status}")
        } else {
            err
        });
    }
    // Re-run into the real scanner is not possible for a stream; merge instead.
    scanner.absorb(probe);
    Ok(())
}

fn live_sample(ctx: &Context) -> Option<Sample> {
    let sample = ctx.open_source().and_then(|mut s| Ok(s.sample()?));
    match sample {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("warning: --live: cannot read the GPUs ({e:#}); going on without live facts");
            None
        }
    }
}
