//! The documentation of the compute-sanitizer rules GD601–GD610, for the registry
//! (`gpu-doctor rule GD601`). Their logic lives in the `gpu-doctor-sanitize` crate
//! (`findings.rs`), next to the parser whose reports they read; to register these docs,
//! `lib.rs` needs `pub mod sanitize;` and `registry.rs` a `crate::sanitize::RULES,` line.

use crate::registry::RuleDoc;
use gpu_doctor_model::Cause;

static GD601: RuleDoc = RuleDoc {
    code: "GD601",
    name: "sanitizer-out-of-bounds",
    cause: Some(Cause::IllegalAccess),
    summary: "out-of-bounds device memory access",
    body: r"## What it does
Reports memcheck's `Invalid __global__ write of size N bytes ... is out of bounds` (and the same for reads, atomics, shared and local memory), one finding per kernel, access and source line however many threads hit it.

## Why is this bad?
Without the sanitizer the write lands in another buffer or kills the context with `cudaErrorIllegalAddress` (`an illegal memory access was encountered`), often far from the kernel at fault.

## Example
`out[i] = x;` in a grid that covers 1024 threads of a 1000-element buffer: threads 1000..1023 write past the end. Guard the store with `if (i < n)`.

## How to fix
Check the index against the buffer's length before the access (`if (i < n)`); `gpu-doctor sanitize` names the kernel, the source line and the elements touched.
",
};

static GD602: RuleDoc = RuleDoc {
    code: "GD602",
    name: "sanitizer-misaligned",
    cause: Some(Cause::IllegalAccess),
    summary: "misaligned device memory access",
    body: r"## What it does
Reports memcheck's invalid accesses whose address `is misaligned`: an N-byte load or store at an address that is not a multiple of N.

## Why is this bad?
The GPU faults on misaligned accesses (`cudaErrorMisalignedAddress`).

## Example
`*reinterpret_cast<float4*>(p + 1)`: a 16-byte load at a 4-byte offset. Vectorise only aligned pointers.

## How to fix
Align the pointer to the access size: vectorise (`float4`) only pointers whose address is a multiple of 16.
",
};

static GD603: RuleDoc = RuleDoc {
    code: "GD603",
    name: "sanitizer-hardware-exception",
    cause: Some(Cause::IllegalAccess),
    summary: "hardware exception in a kernel",
    body: r"## What it does
Reports the exceptions memcheck names without an access (`Out-of-range Shared or Local Address`, `Illegal Instruction`, `Warp Hardware Stack Overflow`, `Malloc/Free error`).

## Why is this bad?
Each one kills the CUDA context: every later CUDA call in the process fails.

## Example
A shared array indexed past the dynamic shared memory the launch asked for.

## How to fix
Read the `at` line of the first report: it is the faulting instruction. Check shared and local array bounds, stack use and device `malloc`/`free`.
",
};

static GD604: RuleDoc = RuleDoc {
    code: "GD604",
    name: "sanitizer-race",
    cause: Some(Cause::Other),
    summary: "shared-memory data race",
    body: r"## What it does
Reports racecheck's hazards (`Race reported between Write access at A and Read access at B`, or `Potential RAW/WAR/WAW hazard`), one finding per pair of places.

## Why is this bad?
The result depends on which warp runs first: wrong answers that change from run to run and GPU to GPU.

## Example
`tile[t] = in[t]; out[t] = tile[255 - t];` with no `__syncthreads()` between the store and the load.

## How to fix
Put `__syncthreads()` between the write and the read racecheck names (`__syncwarp()` when both threads are in one warp), or give each thread its own slot.
",
};

static GD605: RuleDoc = RuleDoc {
    code: "GD605",
    name: "sanitizer-uninitialized-read",
    cause: Some(Cause::Other),
    summary: "read of uninitialised device memory",
    body: r"## What it does
Reports initcheck's `Uninitialized __global__ memory read of size N bytes`.

## Why is this bad?
`cudaMalloc` (and `torch.empty`) return memory holding whatever was there before: results depend on earlier jobs.

## Example
`cudaMalloc(&in, bytes)` then a kernel that reads `in` before anything wrote it. `cudaMemset` it, or write it first.

## How to fix
Initialise the buffer before the kernel reads it: `cudaMemset` after `cudaMalloc`, or `torch.zeros` instead of `torch.empty`.
",
};

static GD606: RuleDoc = RuleDoc {
    code: "GD606",
    name: "sanitizer-barrier",
    cause: Some(Cause::Other),
    summary: "barrier not reached by every thread",
    body: r"## What it does
Reports synccheck's `Barrier error detected` (divergent threads at `__syncthreads()`/`__syncwarp()`, or invalid barrier arguments).

## Why is this bad?
A barrier that only some threads reach is undefined behaviour: hangs, or threads that pass with stale shared memory.

## Example
`if (threadIdx.x < 16) __syncthreads();`. Move the barrier out of the branch.

## How to fix
Move the barrier out of the divergent branch so every thread of the block (or every thread in the `__syncwarp` mask) reaches it.
",
};

static GD607: RuleDoc = RuleDoc {
    code: "GD607",
    name: "sanitizer-api-error",
    cause: None,
    summary: "CUDA API call failed under the sanitizer",
    body: r#"## What it does
Reports `Program hit cudaErrorX (error N) due to "..." on CUDA API call to F`, grouped by error, call and calling frame.

## Why is this bad?
An unchecked failing call leaves the job computing on garbage; a launch failure after a kernel defect is that defect's consequence.

## Example
`cudaMemcpy` into a pointer that was never allocated: `invalid argument`.

## How to fix
Fix the kernel defect reported first when the error is a launch failure; otherwise check the arguments and the return value of the call named.
"#,
};

static GD608: RuleDoc = RuleDoc {
    code: "GD608",
    name: "sanitizer-leak",
    cause: Some(Cause::Other),
    summary: "device memory leaked",
    body: r"## What it does
Reports memcheck's `--leak-check full` output (`Leaked N bytes at 0x...`, `LEAK SUMMARY`), grouped by the frame that allocated.

## Why is this bad?
A long-running job that leaks per step runs out of memory.

## Example
`cudaMalloc` with no matching `cudaFree`.

## How to fix
`cudaFree` each allocation once it is no longer needed; the finding names the frame that allocated it.
",
};

static GD609: RuleDoc = RuleDoc {
    code: "GD609",
    name: "sanitizer-tool-error",
    cause: Some(Cause::Other),
    summary: "compute-sanitizer could not check the job",
    body: r"## What it does
Reports the sanitizer's own errors (`Error: Device not supported`, `No attachable process found`, internal errors).

## Why is this bad?
No report does not mean no bug: the job was not checked.

## Example
compute-sanitizer inside a sandbox that hides the GPU's debug interface.

## How to fix
Run where compute-sanitizer supports the GPU (not inside gVisor-like sandboxes); raise `--launch-timeout` for jobs slow to start CUDA.
",
};

static GD610: RuleDoc = RuleDoc {
    code: "GD610",
    name: "sanitizer-reports-cut",
    cause: Some(Cause::Other),
    summary: "not every report was read",
    body: r"## What it does
Says when compute-sanitizer counted more errors than it printed (its `--print-limit`), or when more than 256 distinct defects appeared and the rest were only counted.

## Why is this bad?
Counts and ranges in the other findings then cover only part of the run.

## Example
`ERROR SUMMARY: 16384 errors` after 100 printed reports. Run with `--print-limit 0`.

## How to fix
Run with `--print-limit 0` (what `gpu-doctor sanitize` passes by default) so every report is printed and counted.
",
};

/// Every compute-sanitizer rule, for `registry::MODULES`.
pub static RULES: &[&RuleDoc] = &[
    &GD601, &GD602, &GD603, &GD604, &GD605, &GD606, &GD607, &GD608, &GD609, &GD610,
];
