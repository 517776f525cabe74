//! `gpu-doctor record` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct RecordArgs {}

pub fn run(_ctx: &Context, _args: RecordArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`record` is not built yet",
        "see the README for what is available",
    ))
}
