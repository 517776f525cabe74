//! The `gpu-doctor` binary: parses the command line, resolves settings once, and hands each
//! verb to its module under `commands/`. Everything it does is wiring: the work lives in the
//! library crates.

// Each verb's `run` takes its parsed clap arguments by value: they are owned by the call.
#![allow(clippy::needless_pass_by_value)]

mod commands;
mod exit;
mod printer;
mod progress;
mod report_chart;

use clap::{Parser, Subcommand};

/// Finds out why GPU jobs fail, and keeps them from failing again.
#[derive(Debug, Parser)]
#[command(name = "gpu-doctor", version, about, max_term_width = 100)]
struct Cli {
    #[command(flatten)]
    global: commands::GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// What is on the GPUs right now: devices, health and processes.
    Status(commands::status::StatusArgs),
    /// Record GPU state to an NDJSON file for later replay (`--source replay:FILE`).
    Record(commands::record::RecordArgs),
    /// Explain why a GPU job failed, from what it printed (and the kernel log).
    Explain(commands::explain::ExplainArgs),
    /// Print the documentation of a rule, e.g. `gpu-doctor rule GD501`.
    Rule(commands::rule::RuleArgs),
    /// Check the driver, CUDA, Python frameworks and GPU health in one checklist.
    Check(commands::check::CheckArgs),
    /// Work with environment exports (`gpu-doctor env diff A.json B.json`).
    Env(commands::env::EnvArgs),
    /// Analyse a PyTorch CUDA memory snapshot (`torch.cuda.memory._dump_snapshot`).
    Snapshot(commands::snapshot::SnapshotArgs),
    /// Run a job and bring it back after an out-of-memory error or a GPU fault.
    Run(commands::run::RunArgs),
    /// Run a job under compute-sanitizer and condense what it finds.
    Sanitize(commands::sanitize::SanitizeArgs),
    /// Predict the peak GPU memory of a model, and the largest batch that fits.
    Fit(commands::fit::FitArgs),
    /// Choose GPUs by free memory, utilisation and health.
    Pick(commands::pick::PickArgs),
    /// Memory, utilisation, temperature and power over a window, with leaks and alerts.
    Report(commands::report::ReportArgs),
    /// A full-screen monitor: charts, processes with their memory trend, alerts.
    Watch(commands::watch::WatchArgs),
    /// Serve Prometheus/OpenMetrics metrics and findings on /metrics, and /healthz.
    Serve(commands::serve::ServeArgs),
    /// Memory budgets per user or group on shared GPUs: warn about, or stop, what is over.
    Guard(commands::guard::GuardArgs),
}

fn main() {
    let cli = Cli::parse();
    let ctx = commands::Context::new(&cli.global);
    let result = match cli.command {
        Command::Status(args) => commands::status::run(&ctx, args),
        Command::Record(args) => commands::record::run(&ctx, args),
        Command::Explain(args) => commands::explain::run(&ctx, args),
        Command::Rule(args) => commands::rule::run(&ctx, args),
        Command::Check(args) => commands::check::run(&ctx, args),
        Command::Env(args) => commands::env::run(&ctx, args),
        Command::Snapshot(args) => commands::snapshot::run(&ctx, args),
        Command::Run(args) => commands::run::run(&ctx, args),
        Command::Sanitize(args) => commands::sanitize::run(&ctx, args),
        Command::Fit(args) => commands::fit::run(&ctx, args),
        Command::Pick(args) => commands::pick::run(&ctx, args),
        Command::Report(args) => commands::report::run(&ctx, args),
        Command::Watch(args) => commands::watch::run(&ctx, args),
        Command::Serve(args) => commands::serve::run(&ctx, args),
        Command::Guard(args) => commands::guard::run(&ctx, args),
    };
    let status = match result {
        Ok(status) => status,
        Err(err) => exit::report_error(&err, ctx.color),
    };
    std::process::exit(status.code());
}
