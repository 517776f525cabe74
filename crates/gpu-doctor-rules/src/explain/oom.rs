//! The out-of-memory analysis shared by GD500–GD505: which OOM message is the one that
//! killed the job, what its numbers say, and which cause they point to.
//!
//! It reasons from the numbers, never from the hint text (`PyTorch` prints its
//! `expandable_segments` hint with every OOM):
//! - the request alone is larger than the GPU → a shape or model-size problem;
//! - memory readings that climbed over iterations before the OOM → a leak;
//! - reserved-but-unallocated memory that would have covered what was missing, or free
//!   memory that already covered the request → fragmentation;
//! - other processes holding what was missing (from the message, from the arithmetic
//!   total − free − this process, or from the live GPU) → another process;
//! - otherwise → the job does not fit: capacity.

use gpu_doctor_model::{Cause, GpuIndex, Sample};
use gpu_doctor_scan::{Framework, LogFacts, ObsKind, Observation, OomInfo, OomStyle};

const MIB: u64 = 1 << 20;

/// How much more than the request the reported free memory must be to count as enough.
pub(crate) const FREE_MARGIN: u64 = 16 * MIB;

/// What the OOM messages and the readings around them say.
#[derive(Debug, Clone)]
pub struct OomAnalysis {
    pub cause: Cause,
    /// The request alone is larger than the whole GPU (or the allowed limit).
    pub request_exceeds_gpu: bool,
    /// The OOM the analysis rests on (the most informative of the last failures).
    pub primary: Observation,
    /// Its numbers, completed by allocator statistics printed after it.
    pub info: OomInfo,
    /// Every OOM failure seen (bounded by the scanner).
    pub all: Vec<Observation>,
    /// How much more memory the request needed than was free.
    pub missing_bytes: Option<u64>,
    /// Memory held by other processes and where that figure comes from.
    pub others_bytes: Option<u64>,
    pub others_from: Option<&'static str>,
    /// Other processes on the GPU right now (with `--live`): pid, bytes, command.
    pub live_processes: Vec<(u32, u64, Option<String>)>,
    /// The GPU with the most free memory now (with `--live`), and how much.
    pub freest_gpu: Option<(GpuIndex, u64)>,
    /// Memory readings that climbed before the OOM.
    pub growth: Option<Growth>,
    /// The largest contiguous free block (`TensorFlow`'s BFC statistics), when printed.
    pub largest_free_block: Option<u64>,
    pub framework: Option<Framework>,
}

/// A climb in the job's own memory readings.
#[derive(Debug, Clone)]
pub struct Growth {
    pub first: Observation,
    pub last: Observation,
    pub first_bytes: u64,
    pub last_bytes: u64,
    pub readings: usize,
    /// Bytes per step, when the lines carry step numbers.
    pub per_step_bytes: Option<f64>,
}

/// TensorRT's builder's `Error Code 2: OutOfMemory` (`skipped` false) or its `Skipping tactic
/// ... insufficient memory` (`skipped` true).
fn tensorrt_builder(o: &Observation, skipped: bool) -> bool {
    matches!(&o.kind, ObsKind::Oom(i)
        if i.style == Some(OomStyle::TensorRtBuilder) && i.not_a_failure == skipped)
}

/// An observation that is an OOM failure (not `TensorFlow`'s "not a failure" warning), with
/// its numbers. cuBLAS and cuDNN allocation failures count: they are OOMs outside the
/// framework's allocator.
fn oom_of(obs: &Observation) -> Option<OomInfo> {
    match &obs.kind {
        ObsKind::Oom(info) if !info.not_a_failure => Some(info.clone()),
        // cuBLAS could not allocate, or could not even create its handle (cublasCreate
        // allocates its workspace): an OOM outside the framework's allocator.
        ObsKind::Cublas(s)
            if s.status == "CUBLAS_STATUS_ALLOC_FAILED"
                || (s.status == "CUBLAS_STATUS_NOT_INITIALIZED"
                    && s.call
                        .as_deref()
                        .is_some_and(|c| c.starts_with("cublasCreate"))) =>
        {
            Some(OomInfo {
                framework: obs.framework,
                style: Some(OomStyle::Library),
                ..OomInfo::default()
            })
        }
        ObsKind::Cudnn(s)
            if s.status == "CUDNN_STATUS_ALLOC_FAILED"
                || s.status == "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED" =>
        {
            Some(OomInfo {
                framework: obs.framework,
                style: Some(OomStyle::Library),
                ..OomInfo::default()
            })
        }
        _ => None,
    }
}

/// How many numbers an OOM message carried: the most informative message wins.
fn richness(info: &OomInfo) -> usize {
    [
        info.requested_bytes,
        info.total_bytes,
        info.free_bytes,
        info.this_process_bytes,
        info.allocated_bytes,
        info.reserved_unallocated_bytes,
    ]
    .iter()
    .filter(|v| v.is_some())
    .count()
}

/// The OOM analysis, or `None` when no OOM failure was seen.
/// Whether, before the failure at `before`, the driver refused an allocation and then a
/// smaller one straight after: the way XLA's allocator sizes its pool when it starts.
fn preallocation_shrank(failures: &[(&Observation, OomInfo)], before: u64) -> bool {
    let refused: Vec<u64> = failures
        .iter()
        .filter(|(o, i)| o.seq < before && i.style == Some(OomStyle::CudaCall))
        .filter_map(|(_, i)| i.requested_bytes)
        .collect();
    refused.windows(2).any(|w| w[1] < w[0] && w[1] >= w[0] / 2)
}

pub fn analyse(facts: &LogFacts, live: Option<&Sample>) -> Option<OomAnalysis> {
    // TensorRT's builder reports each tactic that did not fit as an error, then skips it and
    // builds with another: when it says it skipped tactics, its out-of-memory errors are not
    // the failure.
    let skipped_tactics = facts.observations.iter().any(|o| tensorrt_builder(o, true));
    let failures: Vec<(&Observation, OomInfo)> = facts
        .observations
        .iter()
        .filter(|o| !(skipped_tactics && tensorrt_builder(o, false)))
        .filter_map(|o| oom_of(o).map(|i| (o, i)))
        .collect();
    // The last failure is the one that ended the job; among equally informative ones prefer
    // it, but a later bare "CUDA error: out of memory" should not hide the numbers of the
    // allocator message before it.
    let (primary, mut info) = failures
        .iter()
        .max_by_key(|(o, i)| (richness(i), o.seq))
        .map(|(o, i)| ((*o).clone(), i.clone()))?;

    let stats = stats_after(facts, &primary);
    let largest_free_block = stats
        .iter()
        .find(|(k, _)| *k == "LargestFreeBlock")
        .map(|s| s.1);
    for (key, bytes) in &stats {
        match *key {
            "requested" if info.requested_bytes.is_none() => info.requested_bytes = Some(*bytes),
            "currently_allocated" if info.allocated_bytes.is_none() => {
                info.allocated_bytes = Some(*bytes);
            }
            "device_limit" | "Limit" if info.allowed_bytes.is_none() => {
                info.allowed_bytes = Some(*bytes);
            }
            "free" if info.free_bytes.is_none() => info.free_bytes = Some(*bytes),
            "InUse" if info.allocated_bytes.is_none() => info.allocated_bytes = Some(*bytes),
            _ => {}
        }
    }

    // cudaMallocAsync's report: "Device limit" is the GPU's memory, and what is neither
    // allocated by PyTorch nor free sits in the driver's pool (or other processes).
    if info.style == Some(OomStyle::TorchMallocAsync) {
        if let Some(limit) = info.allowed_bytes.take() {
            info.total_bytes = Some(limit);
        }
        if let (Some(t), Some(a), Some(f)) =
            (info.total_bytes, info.allocated_bytes, info.free_bytes)
        {
            info.reserved_unallocated_bytes = Some(t.saturating_sub(a).saturating_sub(f));
        }
    }

    // In a container the job's PID is not the one NVML reports, so PyTorch names the job
    // itself as `Process N has X memory in use` and prints no "this process" clause. A listed
    // process that holds this job's reservation plus at most 1.5 GiB (its CUDA context) is the
    // job itself.
    if info.this_process_bytes.is_none()
        && let Some(mine) = info.reserved_total_bytes
        && let Some(own) = info
            .other_processes
            .iter()
            .position(|(_, b)| *b >= mine && *b - mine <= 3 * (512 * MIB))
    {
        let (_, bytes) = info.other_processes.remove(own);
        info.this_process_bytes = Some(bytes);
    }

    let gpu = info.gpu.map(GpuIndex);
    let live_device =
        live.and_then(|s| s.devices.iter().find(|d| gpu.is_none_or(|g| d.index == g)));
    let total = info
        .total_bytes
        .or_else(|| live_device.and_then(|d| d.memory_total_bytes.get()));
    let live_processes: Vec<(u32, u64, Option<String>)> = live
        .map(|s| {
            s.processes
                .iter()
                .filter(|p| live_device.is_none_or(|d| p.gpu == d.index))
                .filter_map(|p| {
                    p.used_memory_bytes
                        .get()
                        .map(|b| (p.pid.0, b, p.command.clone()))
                })
                .collect()
        })
        .unwrap_or_default();
    let freest_gpu = live.and_then(|s| {
        s.devices
            .iter()
            .filter_map(|d| d.memory_free_bytes.get().map(|f| (d.index, f)))
            .max_by_key(|(_, f)| *f)
    });

    let req = info.requested_bytes;
    let missing = match (req, info.free_bytes) {
        (Some(r), Some(f)) => Some(r.saturating_sub(f)),
        (Some(r), None) => Some(r),
        _ => None,
    };

    // Memory held by others: named in the message, or what is left when this process's
    // share and the free memory are taken from the total.
    let listed: u64 = info.other_processes.iter().map(|(_, b)| b).sum();
    let inferred = match (total, info.free_bytes) {
        (Some(t), Some(f)) => info
            .this_process_bytes
            .or(info.reserved_total_bytes)
            .map(|mine| t.saturating_sub(f).saturating_sub(mine)),
        _ => None,
    };
    let live_sum: u64 = live_processes.iter().map(|p| p.1).sum();
    // TensorFlow and JAX take (nearly) the whole GPU when they start, so a full GPU in a
    // printed nvidia-smi table is the job itself; only process rows can name others there.
    let preallocates = matches!(
        info.framework.or(primary.framework),
        Some(Framework::Tensorflow | Framework::Jax)
    );
    let logged = logged_others(facts, info.gpu, &info, preallocates);
    let jax_outside_pool = facts.frameworks.contains(&Framework::Jax)
        && matches!(info.style, Some(OomStyle::CudaCall | OomStyle::Library));
    let jax_pool_shrunk = facts.frameworks.contains(&Framework::Jax)
        && !facts.frameworks.contains(&Framework::Tensorflow)
        && preallocation_shrank(&failures, primary.seq);
    let (others, others_from) = if listed > 0 && listed >= inferred.unwrap_or(0) {
        (Some(listed), Some("message"))
    } else if let Some(i) = inferred.filter(|i| *i > 0) {
        (Some(i), Some("arithmetic"))
    } else if let Some(l) = logged {
        (Some(l), Some("log"))
    } else if jax_pool_shrunk {
        // JAX asks the driver for 75% of the GPU when it starts and retries with 10% less
        // each time it is refused: refusals before the job's own failure mean that much of
        // the GPU was taken before JAX began.
        (
            total.map(|t| t / 4).or(Some(u64::MAX / 4)),
            Some("prealloc"),
        )
    } else if jax_outside_pool {
        // JAX preallocates 75% of the GPU for XLA; a CUDA allocation outside that pool (a
        // kernel module, a cuBLAS handle) failing means something else took the rest: another
        // process, or TensorFlow in the same one.
        (total.map(|t| t / 4).or(Some(u64::MAX / 4)), Some("jax"))
    } else if info.style == Some(OomStyle::CudaCall) && preallocates && req.is_some_and(|r| r < MIB)
    {
        // TensorFlow's or XLA's stream executor could not get even a few kilobytes from the
        // driver (`failed to allocate 2.2K (2304 bytes) from device`): their own pool takes
        // memory in large regions, so the GPU was full of someone else's.
        (total.or(Some(u64::MAX / 4)), Some("tiny"))
    } else if info.style == Some(OomStyle::ContextInit)
        // CuPy's pool had handed out nothing (`allocated so far: 0 bytes`) and a small
        // request still failed: the memory was someone else's before the job began.
        || (info.style == Some(OomStyle::Cupy)
            && info.allocated_bytes == Some(0)
            && info.allowed_bytes.is_none()
            && req.is_some_and(|r| r < 64 * MIB))
    {
        // The CUDA context could not be created: the job had allocated nothing yet, so the
        // memory was taken before it started.
        (total.or(Some(u64::MAX / 4)), Some("init"))
    } else if live_sum > 0 {
        (Some(live_sum), Some("live"))
    } else {
        (None, None)
    };

    let growth = growth_before(facts, Some(primary.seq));

    let request_exceeds_gpu = match (req, total) {
        (Some(r), Some(t)) => r > t,
        _ => false,
    };

    let frag_score = fragmentation_bytes(&info, total, missing, largest_free_block);
    let other_score = others.filter(|o| {
        if matches!(others_from, Some("jax" | "init" | "tiny" | "prealloc")) {
            return true;
        }
        let floor = total
            .map_or(768 * MIB, |t| (t as f64 * 0.15) as u64)
            .max(768 * MIB);
        // Without "this process has X in use" (PyTorch before 2.1), the arithmetic also
        // counts the job's own CUDA context and library kernels, up to about 1 GiB, and on a
        // desktop the display's share: memory outside the job's pool is someone else's only
        // when it is more than the job itself holds (a neighbour that causes an OOM holds most
        // of the GPU; a few GiB beside a larger job are its own overheads).
        let unattributed = others_from == Some("arithmetic") && info.this_process_bytes.is_none();
        let own_overhead = if unattributed { 1 << 30 } else { 0 };
        if unattributed && info.reserved_total_bytes.is_some_and(|mine| *o <= mine) {
            return false;
        }
        // Without the free memory in the message, "missing" is the whole request; then the
        // others stand in the way when the request fits the GPU but not what they leave.
        let in_the_way = match (req, total, info.free_bytes) {
            (Some(r), Some(t), None) => r <= t && r > t.saturating_sub(*o),
            _ => false,
        };
        *o >= floor + own_overhead && (missing.is_none_or(|m| *o >= m) || in_the_way)
    });

    // PyTorch (or an unnamed framework: the frame names come from a Python traceback)
    // failing in an evaluation step that the numbers do not explain otherwise: evaluation
    // needs less memory than the training step before it, unless autograd was left on or
    // outputs pile up on the GPU batch after batch. TensorFlow and JAX build no graphs there.
    let in_evaluation = info.during_evaluation.is_some()
        && matches!(
            info.framework.or(primary.framework),
            None | Some(Framework::Pytorch)
        );
    let cause = if request_exceeds_gpu {
        Cause::OomCapacity
    } else if growth.is_some() {
        Cause::OomLeak
    } else {
        match (frag_score, other_score) {
            (Some(f), Some(o)) if o > f => Cause::OomOtherProcess,
            (Some(_), _) => Cause::OomFragmentation,
            (None, Some(_)) => Cause::OomOtherProcess,
            (None, None) if in_evaluation => Cause::OomLeak,
            (None, None) => Cause::OomCapacity,
        }
    };

    Some(OomAnalysis {
        cause,
        request_exceeds_gpu,
        framework: info.framework.or(primary.framework),
        primary,
        info,
        all: failures.iter().map(|(o, _)| (*o).clone()).collect(),
        missing_bytes: missing,
        others_bytes: others,
        others_from,
        live_processes,
        freest_gpu,
        growth,
        largest_free_block,
    })
}

/// Memory held by others according to GPU state printed in the log (nvidia-smi, gpustat,
/// `TensorFlow`'s device listing), for OOM messages that carry no numbers of their own.
fn logged_others(
    facts: &LogFacts,
    gpu: Option<u32>,
    info: &OomInfo,
    preallocates: bool,
) -> Option<u64> {
    if info.free_bytes.is_some() && info.total_bytes.is_some() {
        return None;
    }
    // Without a device in the message, the job ran on the default device, cuda:0.
    let gpu = gpu.unwrap_or(0);
    // Process rows: after a crash only the survivors are listed; with two or more on the
    // job's GPU, all but the smallest are someone else's.
    let mut rows: Vec<(u32, u64)> = facts
        .observations
        .iter()
        .filter_map(|o| match o.kind {
            ObsKind::GpuProcess { gpu: g, pid, bytes } if g == gpu => Some((pid, bytes)),
            _ => None,
        })
        .collect();
    rows.sort_unstable();
    rows.dedup_by_key(|r| r.0);
    if rows.len() >= 2 {
        let smallest = rows.iter().map(|r| r.1).min().unwrap_or(0);
        let sum: u64 = rows.iter().map(|r| r.1).sum();
        return Some(sum - smallest);
    }
    // Device rows: a GPU that was (nearly) full while the job's own request failed. With a
    // framework that preallocates, only what it printed before taking its share (TensorFlow's
    // `Free memory:` at start-up) counts, not a table of used memory.
    let mut total = None;
    let mut used = None;
    let mut free = None;
    for o in &facts.observations {
        if let ObsKind::GpuMemory {
            gpu: g,
            used_bytes,
            free_bytes,
            total_bytes,
        } = o.kind
            && g.is_none_or(|g| g == gpu)
            && !(preallocates && used_bytes.is_some())
        {
            total = total_bytes.or(total);
            used = used_bytes.or(used);
            free = free_bytes.or(free);
        }
    }
    let total = total?;
    let used = used.or_else(|| free.map(|f| total.saturating_sub(f)))?;
    (used as f64 >= total as f64 * 0.9).then_some(used)
}

/// Bytes that fragmentation kept from the request, when the numbers say fragmentation.
fn fragmentation_bytes(
    info: &OomInfo,
    total: Option<u64>,
    missing: Option<u64>,
    largest_free_block: Option<u64>,
) -> Option<u64> {
    let req = info.requested_bytes?;
    // The driver reported enough free memory and the allocation still failed: the free
    // memory is not in one piece (or a limit applies, which the message would name). "Enough"
    // means more than the request by what the message's rounding (0.01 GiB) and the driver's
    // own granularity can hide: `1.50 GiB` asked with `1.50 GiB` free is no evidence.
    if let Some(free) = info.free_bytes
        && free >= req + FREE_MARGIN
        && info.allowed_bytes.is_none()
        && req > 0
    {
        return Some(free);
    }
    // TensorFlow/JAX BFC: enough free in the pool, but no block large enough.
    if let (Some(limit), Some(in_use), Some(largest)) =
        (info.allowed_bytes, info.allocated_bytes, largest_free_block)
        && limit.saturating_sub(in_use) >= req
        && largest < req
    {
        return Some(limit.saturating_sub(in_use));
    }
    // PyTorch's caching allocator always keeps some freed blocks (its normal slack, a few
    // percent of the GPU and more at its peak): a cache under 15% of the GPU that happens to
    // cover what was missing leaves the job at its limit anyway, and a smaller step is what
    // helps. A larger cache than that is memory the allocator could not reuse.
    let unalloc = info.reserved_unallocated_bytes?;
    let floor = total
        .map_or(64 * MIB, |t| (t as f64 * 0.15) as u64)
        .max(64 * MIB);
    (unalloc >= missing.unwrap_or(req) && unalloc >= floor).then_some(unalloc)
}

/// Allocator statistics printed right after the OOM (cudaMallocAsync's report, the BFC
/// allocator's summary), as (key, bytes).
fn stats_after(facts: &LogFacts, oom: &Observation) -> Vec<(&'static str, u64)> {
    const WINDOW: u64 = 400;
    let mut out = Vec::new();
    for o in &facts.observations {
        if o.source != oom.source
            || o.seq < oom.seq.saturating_sub(WINDOW)
            || o.seq > oom.seq + WINDOW
        {
            continue;
        }
        if let ObsKind::AllocatorStat { key, bytes } = &o.kind {
            let key: &'static str = match key.as_str() {
                "requested" => "requested",
                "currently_allocated" => "currently_allocated",
                "device_limit" => "device_limit",
                "free" => "free",
                "Limit" => "Limit",
                "InUse" => "InUse",
                "LargestFreeBlock" => "LargestFreeBlock",
                _ => continue,
            };
            out.push((key, *bytes));
        }
    }
    out
}

/// A steady climb in the job's memory readings before `before` (a sequence number), or in
/// all of them. Warm-up (a jump in the first steps, then flat) is not a climb: the growth
/// must go on in the second half of the series.
pub fn growth_before(facts: &LogFacts, before: Option<u64>) -> Option<Growth> {
    let readings: Vec<(&Observation, u64, Option<u64>)> = facts
        .observations
        .iter()
        .filter(|o| before.is_none_or(|b| o.seq < b))
        .filter_map(|o| match o.kind {
            ObsKind::MemoryReading { bytes, step } => Some((o, bytes, step)),
            _ => None,
        })
        .collect();
    if readings.len() < 4 {
        return None;
    }
    let values: Vec<u64> = readings.iter().map(|r| r.1).collect();
    let rises = values.windows(2).filter(|w| w[1] >= w[0]).count();
    let monotone = rises as f64 / (values.len() - 1) as f64;
    let first = values[0];
    let last = values[values.len() - 1];
    let mid = values[values.len() / 2];
    let max = values.iter().copied().max().unwrap_or(last);
    let growth = last.saturating_sub(first);
    let steady = monotone >= 0.8
        && last as f64 >= max as f64 * 0.9
        && growth >= (256 * MIB).max(first / 5)
        && last.saturating_sub(mid) as f64 >= growth as f64 * 0.25;
    if !steady {
        return None;
    }
    let (first_obs, _, first_step) = readings[0];
    let (last_obs, _, last_step) = readings[readings.len() - 1];
    let per_step_bytes = match (first_step, last_step) {
        (Some(a), Some(b)) if b > a => Some(growth as f64 / (b - a) as f64),
        _ => None,
    };
    Some(Growth {
        first: first_obs.clone(),
        last: last_obs.clone(),
        first_bytes: first,
        last_bytes: last,
        readings: readings.len(),
        per_step_bytes,
    })
}
