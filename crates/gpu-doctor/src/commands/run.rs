//! `gpu-doctor run` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct RunArgs {}

pub fn run(_ctx: &Context, _args: RunArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`run` is not built yet",
        "see the README for what is available",
    ))
}
