//! GD531: a collective timed out (the NCCL watchdog).

use super::{Hit, Input, finding_from, ranks_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD531",
    name: "nccl-timeout",
    cause: Some(Cause::NcclError),
    summary: "A collective timed out (NCCL watchdog): some rank stopped taking part",
    body: r#"## What it does
Finds the NCCL watchdog's `Watchdog caught collective operation timeout: WorkNCCL(...,
Timeout(ms)=600000) ran for 600081 milliseconds before timing out` and similar timeouts.

## Why is this bad?
A collective waits for every rank. A timeout means some rank never arrived: it crashed (an
OOM, a device assert), hangs, is much slower (rank 0 evaluating or saving a checkpoint while
the others wait), or the ranks disagree on the order of collectives. The timeout itself is
almost never the root cause; gpu-doctor puts any other error it finds first.

## Example
```
[rank1]:[E ProcessGroupNCCL.cpp:1414] [Rank 1] Watchdog caught collective operation timeout:
WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000,
Timeout(ms)=600000) ran for 600081 milliseconds before timing out.
```

## How to fix
1. Find the rank that stopped first: read every rank's log (`gpu-doctor explain rank*.log`).
2. If one rank legitimately works longer (evaluation, checkpointing on rank 0), raise the
   timeout: `init_process_group("nccl", timeout=datetime.timedelta(minutes=60))`.
3. Make sure every rank calls the same collectives in the same order (no collective inside a
   rank-dependent `if`).
4. Get stack traces of hung ranks: `TORCH_NCCL_DUMP_ON_TIMEOUT=1`, `py-spy dump --pid <pid>`.
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(|o| matches!(&o.kind, ObsKind::Nccl(n) if n.kind == "timeout"))
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let timeout = match &first.kind {
        ObsKind::Nccl(n) => n.timeout_ms,
        _ => None,
    };
    let after = timeout
        .map(|ms| format!(" after {} s", ms / 1000))
        .unwrap_or_default();
    let message = format!(
        "A collective timed out{after}{}: some rank stopped taking part (crashed, hung or much slower); its own error is the root cause.",
        ranks_phrase(&hits)
    );
    let mut f = finding_from(
        "GD531",
        Cause::NcclError,
        Severity::Error,
        message,
        0.5,
        &hits,
    );
    f = f
        .with_remedy(
            "Read every rank's log for the first error; the rank that stopped first is the root",
            Some("gpu-doctor explain rank*.log".to_owned()),
            None,
        )
        .with_remedy(
            "If one rank legitimately works longer (evaluation, checkpointing), raise the timeout",
            Some("torch.distributed.init_process_group(\"nccl\", timeout=datetime.timedelta(minutes=60))".to_owned()),
            timeout.map(|ms| format!("the current timeout is {} s", ms / 1000)),
        )
        .with_remedy(
            "Dump the hung ranks' stacks",
            Some("TORCH_NCCL_DUMP_ON_TIMEOUT=1 torchrun ...  # or: py-spy dump --pid <pid>".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}
