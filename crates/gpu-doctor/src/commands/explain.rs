//! `gpu-doctor explain` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct ExplainArgs {}

pub fn run(_ctx: &Context, _args: ExplainArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`explain` is not built yet",
        "see the README for what is available",
    ))
}
