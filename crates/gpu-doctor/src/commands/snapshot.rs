//! `gpu-doctor snapshot` (being built).

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;

#[derive(Debug, Args)]
pub struct SnapshotArgs {}

pub fn run(_ctx: &Context, _args: SnapshotArgs) -> anyhow::Result<ExitStatus> {
    Err(Hinted::new(
        "`snapshot` is not built yet",
        "see the README for what is available",
    ))
}
