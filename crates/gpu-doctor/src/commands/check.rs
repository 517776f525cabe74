//! `gpu-doctor check` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct CheckArgs {}

pub fn run(_ctx: &Context, _args: CheckArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`check` is not built yet",
        "see the README for what is available",
    ))
}
