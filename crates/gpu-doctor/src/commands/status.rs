//! `gpu-doctor status` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct StatusArgs {}

pub fn run(_ctx: &Context, _args: StatusArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`status` is not built yet",
        "see the README for what is available",
    ))
}
