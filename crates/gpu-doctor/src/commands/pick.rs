//! `gpu-doctor pick` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct PickArgs {}

pub fn run(_ctx: &Context, _args: PickArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`pick` is not built yet",
        "see the README for what is available",
    ))
}
