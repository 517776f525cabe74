//! GD530: an NCCL operation failed.

use super::{Hit, Input, finding_from, ranks_phrase};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD530",
    name: "nccl-error",
    cause: Some(Cause::NcclError),
    summary: "An NCCL collective failed (unhandled CUDA error, system error, remote error...)",
    body: r#"## What it does
Finds NCCL failures: `NCCL error in: ..., unhandled cuda error`, `ncclSystemError`,
`ncclInternalError`, `ncclInvalidUsage`, `ncclRemoteError`, aborted communicators. Timeouts are
GD531; NCCL's own out-of-memory (`Cuda failure 2 'out of memory'`) goes to the OOM rules.

## Why is this bad?
The process group is broken: no collective can run again in this process, so the job must be
restarted. `unhandled cuda error` wraps a CUDA failure on this rank; `remote error` and
`system error` often mean another rank died first, and its log holds the real cause.

## Example
```
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda
error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3
ncclUnhandledCudaError: Call to CUDA function failed.
```

## How to fix
1. Rerun with `NCCL_DEBUG=INFO` (and `NCCL_DEBUG_SUBSYS=INIT,NET`) to see the failing call.
2. Look for the first error on every rank: the rank that failed first is the root.
3. For `unhandled cuda error`, the CUDA error after "Last error:" says what happened.
4. On PCIe-only or virtualised machines, `NCCL_P2P_DISABLE=1` rules out peer-to-peer problems;
   across nodes, check `NCCL_SOCKET_IFNAME` names the right network interface.
"#,
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let hits: Vec<&Observation> = input
        .facts
        .observations
        .iter()
        .filter(|o| matches!(&o.kind, ObsKind::Nccl(n) if n.kind != "timeout"))
        .collect();
    let Some(first) = hits.first() else {
        return Vec::new();
    };
    let ObsKind::Nccl(n) = &first.kind else {
        return Vec::new();
    };
    let version = n
        .version
        .as_deref()
        .map(|v| format!(" (NCCL {v})"))
        .unwrap_or_default();
    if n.kind.starts_with("ncclMaxSharedMem") {
        return vec![Hit {
            finding: older_than_gpu(&hits),
            seq: first.seq,
        }];
    }
    let message = format!(
        "An NCCL collective failed with \"{}\"{version}{}: the process group is broken and the job must restart; if another rank failed first, its error is the root cause.",
        n.kind,
        ranks_phrase(&hits)
    );
    let mut f = finding_from(
        "GD530",
        Cause::NcclError,
        Severity::Error,
        message,
        0.6,
        &hits,
    );
    // NCCL's bootstrap needs a network interface it can reach the other ranks on.
    if n.kind == "no socket interface found" {
        f = f.with_remedy(
            "Name the network interface NCCL should use (one that exists on every node and reaches the others)",
            Some("ip -br addr; export NCCL_SOCKET_IFNAME=eth0   # or ^lo,docker to exclude".to_owned()),
            Some("in a pod with only loopback, give it the cluster network (hostNetwork or a CNI interface)".to_owned()),
        );
    }
    f = f
        .with_remedy(
            "Rerun with NCCL's own log to see the failing call",
            Some("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET torchrun ...".to_owned()),
            None,
        )
        .with_remedy(
            "Read every rank's log for its first error; the rank that failed first holds the root cause",
            Some("gpu-doctor explain rank*.log".to_owned()),
            None,
        )
        .with_remedy(
            "Rule out peer-to-peer transport problems (PCIe-only or virtualised machines)",
            Some("NCCL_P2P_DISABLE=1 torchrun ...".to_owned()),
            None,
        );
    vec![Hit {
        finding: f,
        seq: first.seq,
    }]
}

/// `ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856`: the NCCL release predates the
/// GPU (NCCL 2.25 on an RTX 5090, fixed in 2.26), and its kernels cannot launch.
fn older_than_gpu(hits: &[&Observation]) -> Finding {
    finding_from(
        "GD530",
        Cause::NcclError,
        Severity::Error,
        "This NCCL release is older than the GPU: its kernels need more shared memory per block than the GPU offers (`ncclMaxSharedMem ... exceeds device/fn maxSharedMem`), so its collectives cannot run.".to_owned(),
        0.8,
        hits,
    )
    .with_remedy(
        "Install a newer NCCL (PyTorch's wheels take it from the nvidia-nccl package)",
        Some("pip install --upgrade nvidia-nccl-cu12".to_owned()),
        Some("or a PyTorch build whose bundled NCCL supports this GPU".to_owned()),
    )
}
