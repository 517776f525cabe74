//! `gpu-doctor rule` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct RuleArgs {}

pub fn run(_ctx: &Context, _args: RuleArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`rule` is not built yet",
        "see the README for what is available",
    ))
}
