//! `gpu-doctor env` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct EnvArgs {}

pub fn run(_ctx: &Context, _args: EnvArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`env` is not built yet",
        "see the README for what is available",
    ))
}
