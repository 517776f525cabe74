//! `gpu-doctor watch`: the full-screen monitor (the `gpu-doctor-tui` crate).

use crate::commands::{Context, SourceSpec};
use crate::exit::{ExitStatus, Hinted};
use clap::Args;
use gpu_doctor_model::units::parse_duration;
use std::io::IsTerminal;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Time between samples (down to 100ms).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
}

pub fn run(ctx: &Context, args: WatchArgs) -> anyhow::Result<ExitStatus> {
    if !std::io::stdout().is_terminal() {
        return Err(Hinted::new(
            "`watch` needs a terminal",
            "use `gpu-doctor status --watch SECONDS` or `gpu-doctor record` when output is redirected",
        ));
    }
    let interval = args.interval.max(Duration::from_millis(100));
    let label = match &ctx.source {
        SourceSpec::Replay(path) => format!("replay {}", path.display()),
        _ => "nvml".to_owned(),
    };
    gpu_doctor_tui::run(ctx.open_source()?, interval, label)?;
    Ok(ExitStatus::Success)
}
