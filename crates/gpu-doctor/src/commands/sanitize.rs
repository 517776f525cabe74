//! `gpu-doctor sanitize` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct SanitizeArgs {}

pub fn run(_ctx: &Context, _args: SanitizeArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`sanitize` is not built yet",
        "see the README for what is available",
    ))
}
