//! `gpu-doctor fit` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct FitArgs {}

pub fn run(_ctx: &Context, _args: FitArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`fit` is not built yet",
        "see the README for what is available",
    ))
}
