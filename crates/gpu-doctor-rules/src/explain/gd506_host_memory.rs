//! GD506: the host, not the GPU, ran out of memory.

use super::{Hit, Input, finding_from};
use crate::registry::RuleDoc;
use gpu_doctor_model::{Cause, Finding, Severity};
use gpu_doctor_scan::{HostMemoryKind, ObsKind, Observation};

pub(crate) static DOC: RuleDoc = RuleDoc {
    code: "GD506",
    name: "host-out-of-memory",
    cause: Some(Cause::Other),
    summary: "The machine's RAM or /dev/shm ran out, not the GPU's memory",
    body: r"## What it does
Finds the kernel's OOM killer (`Out of memory: Killed process 4242 (python)`, `Memory cgroup
out of memory`, Slurm's `Detected 1 oom_kill event`), CPU allocations that failed
(`DefaultCPUAllocator: can't allocate memory`, numpy's `Unable to allocate 28.6 GiB for an
array`) and PyTorch's `insufficient shared memory (shm)` from DataLoader workers.

## Why is this bad?
A GPU job holds much in host memory too: the dataset, DataLoader workers (each a copy of
the process), pinned buffers, a checkpoint being loaded or saved. When the machine or the
job's cgroup runs out, the kernel kills the process with SIGKILL, so the job dies without a
Python traceback, often reported only as `exitcode: -9` or `Killed`. Lowering the GPU batch
size does not help; the fix is on the host side.

## Example
```
Out of memory: Killed process 4242 (python) total-vm:123456789kB, anon-rss:98765432kB
```

## How to fix
1. Confirm it: `sudo dmesg -T | grep -i -E 'killed process|out of memory'` (or the Slurm
   job's `sacct -j JOB -o JobID,MaxRSS,State`).
2. Use fewer DataLoader workers, load the dataset lazily or memory-mapped, load checkpoints
   with `torch.load(..., mmap=True)`, or ask the scheduler for more memory (`--mem`).
3. For `/dev/shm`: start the container with `--shm-size=16g` or `--ipc=host`.
",
};

pub(crate) fn check(input: &Input<'_>) -> Vec<Hit> {
    let of = |want: HostMemoryKind| -> Vec<&Observation> {
        input
            .facts
            .observations
            .iter()
            .filter(|o| matches!(&o.kind, ObsKind::HostMemory { what, .. } if *what == want))
            .collect()
    };
    let mut hits = Vec::new();
    for what in [
        HostMemoryKind::OomKilled,
        HostMemoryKind::AllocFailed,
        HostMemoryKind::SharedMemory,
    ] {
        let seen = of(what);
        let Some(first) = seen.first() else {
            continue;
        };
        let detail = seen.iter().find_map(|o| match &o.kind {
            ObsKind::HostMemory { detail, .. } => detail.clone(),
            _ => None,
        });
        hits.push(Hit {
            finding: finding(what, detail.as_deref(), &seen),
            seq: first.seq,
        });
    }
    hits
}

fn finding(what: HostMemoryKind, detail: Option<&str>, seen: &[&Observation]) -> Finding {
    let message = match (what, detail) {
        (HostMemoryKind::OomKilled, Some(process)) => format!(
            "The machine ran out of RAM and the kernel killed {process}: host memory, not GPU memory, ended the job."
        ),
        (HostMemoryKind::OomKilled, None) => "The machine (or the job's memory limit) ran out of RAM and the kernel killed the job: host memory, not GPU memory, ended it.".to_owned(),
        (HostMemoryKind::AllocFailed, Some(size)) => format!(
            "A CPU allocation of {size} failed: the machine's RAM, not the GPU's memory, ran out."
        ),
        (HostMemoryKind::AllocFailed, None) => {
            "A CPU allocation failed: the machine's RAM, not the GPU's memory, ran out.".to_owned()
        }
        (HostMemoryKind::SharedMemory, _) => "Shared memory (/dev/shm) is too small for the DataLoader workers: common in containers, whose default is 64 MB.".to_owned(),
    };
    let f = finding_from("GD506", Cause::Other, Severity::Error, message, 0.8, seen);
    match what {
        HostMemoryKind::SharedMemory => f
            .with_remedy(
                "Give the container more shared memory",
                Some("docker run --shm-size=16g ... (or --ipc=host)".to_owned()),
                Some("Kubernetes: mount an emptyDir with medium: Memory at /dev/shm".to_owned()),
            )
            .with_remedy(
                "Or use fewer DataLoader workers",
                Some("DataLoader(..., num_workers=2)".to_owned()),
                None,
            ),
        HostMemoryKind::AllocFailed => hold_less(f.with_remedy(
            "See how much RAM the machine has and what holds it",
            Some("free -g; ps aux --sort=-rss | head".to_owned()),
            Some("a request larger than the machine's RAM is usually a wrong shape".to_owned()),
        )),
        HostMemoryKind::OomKilled => hold_less(f.with_remedy(
            "See what the kernel killed and how large it was",
            Some("sudo dmesg -T | grep -i -E 'killed process|out of memory'".to_owned()),
            Some("under Slurm: sacct -j JOBID -o JobID,MaxRSS,ReqMem,State".to_owned()),
        ))
        .with_remedy(
            "Or ask the scheduler for more memory",
            Some("sbatch --mem=128G ...".to_owned()),
            None,
        ),
    }
}

/// The remedy both host-RAM findings share.
fn hold_less(f: Finding) -> Finding {
    f.with_remedy(
        "Hold less in host memory: fewer DataLoader workers, a memory-mapped dataset, memory-mapped checkpoint loading",
        Some("torch.load(path, mmap=True, map_location=\"cpu\")".to_owned()),
        None,
    )
}
