//! The analyses: fragmentation, the OOM moment, allocation sites, leak candidates and memory
//! over time, all from one [`Snapshot`] (and [`diff`] between two).
//!
//! The trace is a ring buffer that loses its *oldest* entries, so the series are replayed
//! forward and then anchored to the segment state at the end, which is exact: the final
//! `allocated_bytes`/`reserved_bytes` equal `torch.cuda.memory_stats()` at dump time, and
//! every earlier point is that minus what happened after it.

use crate::model::{
    Action, AllocatorSettings, BlockState, Frame, SegmentType, Snapshot, StackId, TraceEntry,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::Serialize;
use std::fmt::Write as _;

/// The allocator's smallest block (`kMinBlockSize`): every allocation is rounded up to it.
const MIN_BLOCK: u64 = 512;
/// Expandable segments map memory in pages of 2 MiB (small pool) and 20 MiB (large pool).
const SMALL_PAGE: u64 = 2 << 20;
const LARGE_PAGE: u64 = 20 << 20;
/// Windows the recording is cut into for the leak test.
const LEAK_WINDOWS: usize = 10;

/// What to analyse and how much to keep.
#[derive(Debug, Clone, Copy)]
pub struct AnalyzeOptions {
    /// Device to analyse; `None` picks the one with the OOM, else the most reserved memory.
    pub device: Option<i64>,
    /// How many allocation sites to list.
    pub top: usize,
    /// Points kept in the memory-over-time series.
    pub timeline_points: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            device: None,
            top: 10,
            timeline_points: 64,
        }
    }
}

/// Everything the snapshot says, as numbers.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// The device analysed (`None` for a snapshot with no segments and no traces).
    pub device: Option<i64>,
    /// Every device in the snapshot.
    pub devices: Vec<i64>,
    /// Bytes in allocated blocks at dump time (`memory_stats()["allocated_bytes.all.current"]`).
    pub allocated_bytes: u64,
    /// Bytes in segments at dump time (`reserved_bytes.all.current`).
    pub reserved_bytes: u64,
    /// Allocated plus blocks freed but waiting for other streams (`active_bytes.all.current`).
    pub active_bytes: u64,
    /// What the program asked for, before rounding (`requested_bytes.all.current`).
    pub requested_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub fragmentation: Fragmentation,
    pub oom: Option<OomMoment>,
    pub peak: Option<Peak>,
    pub top_sites: Vec<Site>,
    pub leak_candidates: Vec<LeakCandidate>,
    pub trace: TraceSummary,
    pub timeline: Vec<TimelinePoint>,
}

/// Reserved versus allocated, and how the free part is laid out.
#[derive(Debug, Clone, Serialize)]
pub struct Fragmentation {
    pub segments: usize,
    /// Free bytes inside segments (inactive blocks): reserved but unallocated.
    pub cached_free_bytes: u64,
    /// Free bytes in segments that also hold live blocks: `empty_cache()` cannot return them
    /// (`inactive_split_bytes`).
    pub stranded_free_bytes: u64,
    /// Free bytes in wholly free segments: `empty_cache()` (or the allocator before an OOM)
    /// returns them.
    pub releasable_free_bytes: u64,
    /// Rounding inside allocated blocks (`size - requested_size`).
    pub internal_waste_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub free_blocks: usize,
    /// 0 when the free memory is one hole, towards 1 when it is many slivers
    /// (`1 - Σ gap² / (Σ gap)²`).
    pub score: f64,
    pub free_block_histogram: Vec<Bucket>,
    pub allocator_settings: Option<AllocatorSettings>,
    pub expandable_segments: bool,
    /// Free bytes that expandable segments could unmap and map again as one range (whole
    /// pages of free blocks).
    pub expandable_reusable_bytes: u64,
    /// For an OOM: whether `expandable_segments:True` would likely have avoided it (the
    /// request fits in what the device had free plus the free pages). `None` without an OOM
    /// or when expandable segments were already on.
    pub expandable_would_avoid_oom: Option<bool>,
    pub per_segment: Vec<SegmentUse>,
}

/// One segment's use.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentUse {
    pub address: u64,
    pub stream: i64,
    pub segment_type: SegmentType,
    pub is_expandable: bool,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub free_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub blocks: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    pub label: &'static str,
    pub min_bytes: u64,
    /// Exclusive; `None` for the last bucket.
    pub max_bytes: Option<u64>,
    pub blocks: usize,
    pub bytes: u64,
}

/// The out-of-memory moment (the last `oom` trace entry).
#[derive(Debug, Clone, Serialize)]
pub struct OomMoment {
    /// What was asked (rounded by the allocator, as in "Tried to allocate").
    pub requested_bytes: u64,
    /// Free on the device according to CUDA at that moment.
    pub device_free_bytes: Option<u64>,
    pub allocated_bytes: u64,
    pub reserved_bytes: u64,
    /// Reserved but unallocated at that moment.
    pub cached_free_bytes: u64,
    /// The largest free block in the segments at dump time.
    pub largest_free_block_bytes: u64,
    /// Whether the dump's segment state is the state at the OOM (nothing was allocated or
    /// freed after it).
    pub segments_at_oom: bool,
    /// `fragmentation`: the request would fit in free memory, but no free block is big
    /// enough; `capacity`: device free plus cached free is less than the request;
    /// `unknown`: the numbers do not say.
    pub blocked_by: &'static str,
    pub time_us: Option<i64>,
    pub trace_index: usize,
    /// Where it was asked, innermost Python frame first.
    pub python_stack: Vec<String>,
}

/// The highest allocated point of the recording.
#[derive(Debug, Clone, Serialize)]
pub struct Peak {
    pub allocated_bytes: u64,
    pub reserved_bytes: u64,
    pub max_reserved_bytes: u64,
    pub trace_index: usize,
    pub time_us: Option<i64>,
}

/// Bytes alive by allocation site (a Python stack, C++ frames folded away).
#[derive(Debug, Clone, Serialize)]
pub struct Site {
    /// The innermost frame of the program's own code (outside site-packages), or the
    /// innermost Python frame.
    pub label: String,
    /// Python frames, innermost first.
    pub python_stack: Vec<String>,
    /// C++ frames folded out of the stacks grouped here (most seen in one stack).
    pub cpp_frames_folded: usize,
    /// Alive at dump time.
    pub live_bytes: u64,
    pub live_blocks: usize,
    /// Alive at the allocated peak.
    pub peak_bytes: u64,
}

/// A site whose live bytes kept growing over the recording.
#[derive(Debug, Clone, Serialize)]
pub struct LeakCandidate {
    pub label: String,
    pub python_stack: Vec<String>,
    pub growth_bytes: u64,
    pub live_bytes: u64,
    /// Allocations from the site still alive at the end, and all allocations recorded.
    pub live_allocations: usize,
    pub allocations: usize,
    pub frees: usize,
    /// Live bytes at the start and after each tenth of the recording.
    pub samples: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct TraceSummary {
    pub entries: usize,
    pub first_time_us: Option<i64>,
    pub last_time_us: Option<i64>,
    /// Entries per action (a JSON object when serialized).
    #[serde(serialize_with = "crate::model::pairs_as_map")]
    pub actions: Vec<(Action, usize)>,
    /// Allocations whose alloc happened before the recording began (freed or alive).
    pub allocations_before_recording: usize,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct TimelinePoint {
    pub trace_index: usize,
    pub time_us: Option<i64>,
    pub allocated_bytes: u64,
    pub reserved_bytes: u64,
}

/// Picks the device to analyse.
fn pick_device(snap: &Snapshot, wanted: Option<i64>) -> Option<i64> {
    if wanted.is_some() {
        return wanted;
    }
    for (i, t) in snap.device_traces.iter().enumerate() {
        if t.iter().any(|e| e.action == Action::Oom) {
            return i64::try_from(i).ok();
        }
    }
    let mut best: Option<(u64, i64)> = None;
    for d in snap.devices() {
        let r: u64 = snap
            .segments
            .iter()
            .filter(|s| s.device == d)
            .map(|s| s.total_size)
            .sum();
        if best.is_none_or(|(b, _)| r > b) {
            best = Some((r, d));
        }
    }
    best.map(|(_, d)| d)
}

fn round_size(size: u64) -> u64 {
    if size < MIN_BLOCK {
        MIN_BLOCK
    } else {
        size.div_ceil(MIN_BLOCK) * MIN_BLOCK
    }
}

/// Shortens a path for display: what follows `site-packages/` or `dist-packages/`.
pub fn short_path(path: &str) -> &str {
    for marker in ["site-packages/", "dist-packages/"] {
        if let Some(i) = path.rfind(marker) {
            return &path[i + marker.len()..];
        }
    }
    path
}

fn frame_text(f: &Frame) -> String {
    format!("{}:{} in {}", short_path(&f.filename), f.line, f.name)
}

fn is_library(f: &Frame) -> bool {
    f.filename.contains("site-packages/")
        || f.filename.contains("dist-packages/")
        || f.filename.starts_with('<')
        || f.filename.contains("/lib/python3")
}

/// Groups stacks into sites by their Python frames.
struct Sites<'a> {
    snap: &'a Snapshot,
    by_stack: HashMap<StackId, usize>,
    by_key: HashMap<Vec<crate::FrameId>, usize>,
    info: Vec<SiteInfo>,
}

struct SiteInfo {
    label: String,
    python_stack: Vec<String>,
    cpp_frames: usize,
}

impl<'a> Sites<'a> {
    fn new(snap: &'a Snapshot) -> Self {
        Sites {
            snap,
            by_stack: HashMap::default(),
            by_key: HashMap::default(),
            info: Vec::new(),
        }
    }

    fn site(&mut self, stack: StackId) -> usize {
        if let Some(&s) = self.by_stack.get(&stack) {
            return s;
        }
        let ids = self
            .snap
            .stacks
            .get(stack.0 as usize)
            .map_or(&[][..], Vec::as_slice);
        let mut key = Vec::new();
        let mut cpp = 0;
        for id in ids {
            match self.snap.frames.get(id.0 as usize) {
                Some(f) if f.is_python() => key.push(*id),
                _ => cpp += 1,
            }
        }
        let site = if let Some(&s) = self.by_key.get(&key) {
            s
        } else {
            let frames: Vec<&Frame> = key
                .iter()
                .filter_map(|id| self.snap.frames.get(id.0 as usize))
                .collect();
            let label = match (frames.iter().find(|f| !is_library(f)), frames.first()) {
                (Some(user), Some(inner)) if user != inner => {
                    format!("{} (via {})", frame_text(user), frame_text(inner))
                }
                (_, Some(inner)) => frame_text(inner),
                (_, None) => "[no Python frames]".to_owned(),
            };
            let s = self.info.len();
            self.info.push(SiteInfo {
                label,
                python_stack: frames.iter().map(|f| frame_text(f)).collect(),
                cpp_frames: 0,
            });
            self.by_key.insert(key, s);
            s
        };
        self.info[site].cpp_frames = self.info[site].cpp_frames.max(cpp);
        self.by_stack.insert(stack, site);
        site
    }
}

#[derive(Clone, Copy)]
struct Live {
    size: u64,
    site: usize,
}

/// Analyses one device of a snapshot.
pub fn analyze(snap: &Snapshot, opts: &AnalyzeOptions) -> Analysis {
    let device = pick_device(snap, opts.device);
    let segments: Vec<&crate::Segment> = snap
        .segments
        .iter()
        .filter(|s| Some(s.device) == device)
        .collect();
    let empty = Vec::new();
    let trace: &Vec<TraceEntry> = device
        .and_then(|d| usize::try_from(d).ok())
        .and_then(|d| snap.device_traces.get(d))
        .unwrap_or(&empty);

    let allocated_bytes: u64 = segments.iter().map(|s| s.allocated_size).sum();
    let reserved_bytes: u64 = segments.iter().map(|s| s.total_size).sum();
    let active_bytes: u64 = segments.iter().map(|s| s.active_size).sum();
    let requested_bytes: u64 = segments.iter().map(|s| s.requested_size).sum();

    let mut fragmentation = fragmentation(snap, &segments);
    let largest_free_block_bytes = fragmentation.largest_free_block_bytes;

    // Alive at the end, by address (for exact sizes of survivors) and by site.
    let mut sites = Sites::new(snap);
    let mut end_blocks: HashMap<u64, (u64, usize)> = HashMap::default();
    let mut live_end: HashMap<usize, (u64, usize)> = HashMap::default();
    for seg in &segments {
        for b in &seg.blocks {
            if b.state == BlockState::ActiveAllocated {
                let site = sites.site(b.stack);
                end_blocks.insert(b.address, (b.size, site));
                let e = live_end.entry(site).or_default();
                e.0 += b.size;
                e.1 += 1;
            }
        }
    }

    let oom_index = trace.iter().rposition(|e| e.action == Action::Oom);
    let replay = replay(
        trace,
        &end_blocks,
        &mut sites,
        (allocated_bytes, reserved_bytes),
        oom_index,
        opts.timeline_points,
    );

    // The OOM moment.
    let oom = trace
        .iter()
        .enumerate()
        .rev()
        .find(|(_, e)| e.action == Action::Oom)
        .map(|(i, e)| {
            let (alloc_at, reserved_at) =
                replay.at_oom.unwrap_or((allocated_bytes, reserved_bytes));
            let cached_free = reserved_at.saturating_sub(alloc_at);
            let after = trace[i + 1..]
                .iter()
                .any(|e| !matches!(e.action, Action::Oom | Action::Snapshot | Action::Other));
            let blocked_by = match e.device_free() {
                Some(free) if free.saturating_add(cached_free) < e.size => "capacity",
                Some(_) if largest_free_block_bytes < e.size => "fragmentation",
                None if largest_free_block_bytes < e.size && cached_free >= e.size => {
                    "fragmentation"
                }
                _ => "unknown",
            };
            let site = sites.site(e.stack);
            OomMoment {
                requested_bytes: e.size,
                device_free_bytes: e.device_free(),
                allocated_bytes: alloc_at,
                reserved_bytes: reserved_at,
                cached_free_bytes: cached_free,
                largest_free_block_bytes,
                segments_at_oom: !after,
                blocked_by,
                time_us: e.time_us(),
                trace_index: i,
                python_stack: sites.info[site].python_stack.clone(),
            }
        });
    if let Some(o) = &oom
        && !fragmentation.expandable_segments
    {
        fragmentation.expandable_would_avoid_oom = Some(
            o.device_free_bytes
                .unwrap_or(0)
                .saturating_add(fragmentation.expandable_reusable_bytes)
                >= o.requested_bytes,
        );
    }

    // Sites, by bytes alive at the end, then at the peak.
    let mut order: Vec<usize> = (0..sites.info.len()).collect();
    let key = |s: &usize| {
        (
            live_end.get(s).map_or(0, |x| x.0),
            replay.peak_sites.get(s).copied().unwrap_or(0),
        )
    };
    order.sort_by(|a, b| key(b).cmp(&key(a)).then(a.cmp(b)));
    let top_sites: Vec<Site> = order
        .iter()
        .filter(|s| key(s) != (0, 0))
        .take(opts.top)
        .map(|&s| Site {
            label: sites.info[s].label.clone(),
            python_stack: sites.info[s].python_stack.clone(),
            cpp_frames_folded: sites.info[s].cpp_frames,
            live_bytes: live_end.get(&s).map_or(0, |x| x.0),
            live_blocks: live_end.get(&s).map_or(0, |x| x.1),
            peak_bytes: replay.peak_sites.get(&s).copied().unwrap_or(0),
        })
        .collect();

    let mut top_sites: Vec<Site> = top_sites;
    disambiguate(&mut top_sites);

    let leak_candidates = leak_candidates(
        &replay,
        &sites,
        &live_end,
        replay
            .peak
            .as_ref()
            .map_or(allocated_bytes, |p| p.allocated_bytes),
    );

    let mut actions: HashMap<Action, usize> = HashMap::default();
    for e in trace {
        *actions.entry(e.action).or_default() += 1;
    }
    let mut actions: Vec<(Action, usize)> = actions.into_iter().collect();
    actions.sort_by_key(|(a, _)| *a as u8);

    Analysis {
        device,
        devices: snap.devices(),
        allocated_bytes,
        reserved_bytes,
        active_bytes,
        requested_bytes,
        largest_free_block_bytes,
        fragmentation,
        oom,
        peak: replay.peak.clone(),
        top_sites,
        leak_candidates,
        trace: TraceSummary {
            entries: trace.len(),
            first_time_us: trace.iter().find_map(TraceEntry::time_us),
            last_time_us: trace.iter().rev().find_map(TraceEntry::time_us),
            actions,
            allocations_before_recording: replay.before_recording,
        },
        timeline: replay.timeline,
    }
}

fn fragmentation(snap: &Snapshot, segments: &[&crate::Segment]) -> Fragmentation {
    const BOUNDS: [(&str, u64, Option<u64>); 7] = [
        ("< 1 MiB", 0, Some(1 << 20)),
        ("1-2 MiB", 1 << 20, Some(2 << 20)),
        ("2-20 MiB", 2 << 20, Some(20 << 20)),
        ("20-128 MiB", 20 << 20, Some(128 << 20)),
        ("128 MiB-1 GiB", 128 << 20, Some(1 << 30)),
        ("1-8 GiB", 1 << 30, Some(8 << 30)),
        (">= 8 GiB", 8 << 30, None),
    ];
    let mut hist: Vec<Bucket> = BOUNDS
        .iter()
        .map(|&(label, min_bytes, max_bytes)| Bucket {
            label,
            min_bytes,
            max_bytes,
            blocks: 0,
            bytes: 0,
        })
        .collect();
    let mut f = Fragmentation {
        segments: segments.len(),
        cached_free_bytes: 0,
        stranded_free_bytes: 0,
        releasable_free_bytes: 0,
        internal_waste_bytes: 0,
        largest_free_block_bytes: 0,
        free_blocks: 0,
        score: 0.0,
        free_block_histogram: Vec::new(),
        allocator_settings: snap.allocator_settings.clone(),
        expandable_segments: snap
            .allocator_settings
            .as_ref()
            .is_some_and(|s| s.expandable_segments)
            || segments.iter().any(|s| s.is_expandable),
        expandable_reusable_bytes: 0,
        expandable_would_avoid_oom: None,
        per_segment: Vec::new(),
    };
    let mut sum_sq = 0f64;
    for seg in segments {
        let page = if seg.segment_type == SegmentType::Small {
            SMALL_PAGE
        } else {
            LARGE_PAGE
        };
        let mut free = 0;
        let mut largest = 0;
        let mut live = false;
        for b in &seg.blocks {
            match b.state {
                BlockState::Inactive => {
                    free += b.size;
                    largest = largest.max(b.size);
                    f.free_blocks += 1;
                    sum_sq += (b.size as f64) * (b.size as f64);
                    f.expandable_reusable_bytes += b.size / page * page;
                    if let Some(bucket) = hist
                        .iter_mut()
                        .find(|k| b.size >= k.min_bytes && k.max_bytes.is_none_or(|m| b.size < m))
                    {
                        bucket.blocks += 1;
                        bucket.bytes += b.size;
                    }
                }
                BlockState::ActiveAllocated => {
                    live = true;
                    f.internal_waste_bytes += b.size.saturating_sub(b.requested_size);
                }
                BlockState::ActivePendingFree | BlockState::Unknown => live = true,
            }
        }
        f.cached_free_bytes += free;
        if live {
            f.stranded_free_bytes += free;
        } else {
            f.releasable_free_bytes += free;
        }
        f.largest_free_block_bytes = f.largest_free_block_bytes.max(largest);
        f.per_segment.push(SegmentUse {
            address: seg.address,
            stream: seg.stream,
            segment_type: seg.segment_type,
            is_expandable: seg.is_expandable,
            reserved_bytes: seg.total_size,
            allocated_bytes: seg.allocated_size,
            free_bytes: free,
            largest_free_block_bytes: largest,
            blocks: seg.blocks.len(),
        });
    }
    let total = f.cached_free_bytes as f64;
    f.score = if total > 0.0 {
        1.0 - sum_sq / (total * total)
    } else {
        0.0
    };
    f.free_block_histogram = hist;
    f
}

/// The forward replay of one device's trace. Nothing is kept per entry (a big snapshot has
/// millions): the series are reduced on the fly to the peak, the OOM moment and the
/// timeline's buckets.
struct Replay {
    entries: usize,
    /// (allocated, reserved) right after the OOM entry, anchored at the dump.
    at_oom: Option<(u64, u64)>,
    peak: Option<Peak>,
    timeline: Vec<TimelinePoint>,
    peak_sites: HashMap<usize, u64>,
    /// Per site: live bytes at the start and after each window; allocs, frees.
    windows: HashMap<usize, SiteWindows>,
    before_recording: usize,
}

#[derive(Default, Clone)]
struct SiteWindows {
    samples: [i64; LEAK_WINDOWS + 1],
    allocs: usize,
    frees: usize,
}

/// One timeline bucket while replaying: the highest raw values in it.
#[derive(Clone, Copy)]
struct RawBucket {
    alloc: i64,
    at: usize,
    reserved: i64,
}

/// How one trace entry moves the allocated bytes, given what is live.
enum Step {
    Alloc(u64, usize),
    Free(u64, usize),
    None,
}

struct LiveSet<'e> {
    live: HashMap<u64, Live>,
    pending: HashSet<u64>,
    end_blocks: &'e HashMap<u64, (u64, usize)>,
    last_alloc: &'e HashMap<u64, usize>,
}

impl LiveSet<'_> {
    fn step(&mut self, i: usize, e: &TraceEntry, sites: &mut Sites<'_>) -> Step {
        match e.action {
            Action::Alloc => {
                let site = sites.site(e.stack);
                // A survivor's real block size is in the dump; others are rounded like the
                // allocator does.
                let bytes = match (self.last_alloc.get(&e.addr), self.end_blocks.get(&e.addr)) {
                    (Some(&last), Some(&(survivor, _))) if last == i => survivor,
                    _ => round_size(e.size),
                };
                self.live.insert(e.addr, Live { size: bytes, site });
                self.pending.remove(&e.addr);
                Step::Alloc(bytes, site)
            }
            Action::FreeRequested | Action::Free => {
                if let Some(l) = self.live.remove(&e.addr) {
                    if e.action == Action::FreeRequested {
                        self.pending.insert(e.addr);
                    }
                    Step::Free(l.size, l.site)
                } else if self.pending.contains(&e.addr) {
                    Step::None
                } else {
                    if e.action == Action::FreeRequested {
                        self.pending.insert(e.addr);
                    }
                    Step::Free(round_size(e.size), sites.site(e.stack))
                }
            }
            Action::FreeCompleted => {
                if self.pending.remove(&e.addr) {
                    Step::None
                } else if let Some(l) = self.live.remove(&e.addr) {
                    Step::Free(l.size, l.site)
                } else {
                    Step::Free(round_size(e.size), sites.site(e.stack))
                }
            }
            _ => Step::None,
        }
    }
}

fn replay(
    trace: &[TraceEntry],
    end_blocks: &HashMap<u64, (u64, usize)>,
    sites: &mut Sites<'_>,
    (allocated_end, reserved_end): (u64, u64),
    oom_index: Option<usize>,
    points: usize,
) -> Replay {
    let n = trace.len();
    let mut last_alloc: HashMap<u64, usize> = HashMap::default();
    for (i, e) in trace.iter().enumerate() {
        if e.action == Action::Alloc {
            last_alloc.insert(e.addr, i);
        }
    }
    // Pass 1: raw running sums (the start is unknown until the end is reached), reduced to
    // the peak, the OOM moment and the timeline buckets; and the frees of allocations made
    // before the recording began.
    let mut set = LiveSet {
        live: HashMap::default(),
        pending: HashSet::default(),
        end_blocks,
        last_alloc: &last_alloc,
    };
    let per = if points == 0 {
        usize::MAX
    } else {
        n.div_ceil(points).max(1)
    };
    let mut buckets: Vec<RawBucket> = Vec::new();
    let (mut a, mut r) = (0i64, 0i64);
    let (mut peak_a, mut peak_at, mut max_r) = (i64::MIN, 0usize, i64::MIN);
    let mut peak_r = 0i64;
    let mut raw_oom = None;
    let mut before: HashMap<usize, i64> = HashMap::default();
    let mut before_count = 0;
    for (i, e) in trace.iter().enumerate() {
        let known = set.live.contains_key(&e.addr) || set.pending.contains(&e.addr);
        match set.step(i, e, sites) {
            Step::Alloc(bytes, _) => a += to_i64(bytes),
            Step::Free(bytes, site) => {
                a -= to_i64(bytes);
                if !known {
                    *before.entry(site).or_default() += to_i64(bytes);
                    before_count += 1;
                }
            }
            Step::None => {}
        }
        match e.action {
            Action::SegmentAlloc | Action::SegmentMap => r += to_i64(e.size),
            Action::SegmentFree | Action::SegmentUnmap => r -= to_i64(e.size),
            _ => {}
        }
        if a > peak_a {
            (peak_a, peak_at, peak_r) = (a, i, r);
        }
        max_r = max_r.max(r);
        if Some(i) == oom_index {
            raw_oom = Some((a, r));
        }
        if points > 0 {
            if i % per == 0 {
                buckets.push(RawBucket {
                    alloc: a,
                    at: i,
                    reserved: r,
                });
            } else if let Some(b) = buckets.last_mut() {
                // The envelope: the highest point in each bucket, so a peak is never lost.
                if a >= b.alloc {
                    b.alloc = a;
                    b.at = i;
                }
                b.reserved = b.reserved.max(r);
            }
        }
    }
    before_count += end_blocks
        .keys()
        .filter(|addr| !last_alloc.contains_key(addr))
        .count();
    // Anchor: the end of the replay is the dump.
    let base_a = to_i64(allocated_end) - a;
    let base_r = to_i64(reserved_end) - r;
    let anchor = |base: i64, v: i64| u64::try_from(base + v).unwrap_or(0);
    let peak = (n > 0).then(|| Peak {
        allocated_bytes: anchor(base_a, peak_a),
        reserved_bytes: anchor(base_r, peak_r),
        max_reserved_bytes: anchor(base_r, max_r),
        trace_index: peak_at,
        time_us: trace[peak_at].time_us(),
    });
    let timeline = buckets
        .iter()
        .map(|b| TimelinePoint {
            trace_index: b.at,
            time_us: trace[b.at].time_us(),
            allocated_bytes: anchor(base_a, b.alloc),
            reserved_bytes: anchor(base_r, b.reserved),
        })
        .collect();
    let at_oom = raw_oom.map(|(x, y)| (anchor(base_a, x), anchor(base_r, y)));

    // Pass 2: per-site live bytes by window, and the live set at the peak.
    let mut windows: HashMap<usize, SiteWindows> = HashMap::default();
    let mut live_by_site: HashMap<usize, i64> = before.clone();
    for (&site, &bytes) in &before {
        windows.entry(site).or_default().samples[0] = bytes;
    }
    let mut set = LiveSet {
        live: HashMap::default(),
        pending: HashSet::default(),
        end_blocks,
        last_alloc: &last_alloc,
    };
    let mut peak_sites: HashMap<usize, u64> = HashMap::default();
    let mut next_window = 1;
    for (i, e) in trace.iter().enumerate() {
        match set.step(i, e, sites) {
            Step::Alloc(bytes, site) => {
                *live_by_site.entry(site).or_default() += to_i64(bytes);
                windows.entry(site).or_default().allocs += 1;
            }
            Step::Free(bytes, site) => {
                *live_by_site.entry(site).or_default() -= to_i64(bytes);
                windows.entry(site).or_default().frees += 1;
            }
            Step::None => {}
        }
        if peak.is_some() && i == peak_at {
            for (&site, &bytes) in &live_by_site {
                if bytes > 0 {
                    peak_sites.insert(site, bytes.unsigned_abs());
                }
            }
            // Survivors from before the recording were alive at the peak too.
            for (addr, &(size, site)) in end_blocks {
                if !last_alloc.contains_key(addr) {
                    *peak_sites.entry(site).or_default() += size;
                }
            }
        }
        while next_window <= LEAK_WINDOWS && (i + 1) * LEAK_WINDOWS >= next_window * n {
            for (&site, &bytes) in &live_by_site {
                windows.entry(site).or_default().samples[next_window] = bytes;
            }
            next_window += 1;
        }
    }
    Replay {
        entries: n,
        at_oom,
        peak,
        timeline,
        peak_sites,
        windows,
        before_recording: before_count,
    }
}

fn leak_candidates(
    replay: &Replay,
    sites: &Sites<'_>,
    live_end: &HashMap<usize, (u64, usize)>,
    peak_allocated: u64,
) -> Vec<LeakCandidate> {
    // Growth must be real money: at least 1 MiB and 1% of the peak.
    let threshold = (1u64 << 20).max(peak_allocated / 100);
    let entries = replay.entries;
    if entries < 4 * LEAK_WINDOWS {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (&site, w) in &replay.windows {
        let s = &w.samples;
        let growth = s[LEAK_WINDOWS] - s[0];
        if growth <= 0 || growth as u64 <= threshold {
            continue;
        }
        let ups = s.windows(2).filter(|p| p[1] > p[0]).count();
        let downs: i64 = s.windows(2).map(|p| (p[0] - p[1]).max(0)).sum();
        let (live_bytes, live_allocations) = live_end.get(&site).copied().unwrap_or((0, 0));
        // Grows in most tenths of the recording, hardly ever shrinks, and is still alive.
        if ups * 10 >= LEAK_WINDOWS * 6 && downs * 10 <= growth && live_allocations >= 3 {
            out.push(LeakCandidate {
                label: sites.info[site].label.clone(),
                python_stack: sites.info[site].python_stack.clone(),
                growth_bytes: growth as u64,
                live_bytes,
                live_allocations,
                allocations: w.allocs,
                frees: w.frees,
                samples: s.iter().map(|&v| u64::try_from(v).unwrap_or(0)).collect(),
            });
        }
    }
    out.sort_by(|a, b| {
        b.growth_bytes
            .cmp(&a.growth_bytes)
            .then(a.label.cmp(&b.label))
    });
    out
}

/// What changed between two snapshots.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotDiff {
    pub allocated_bytes: (u64, u64),
    pub reserved_bytes: (u64, u64),
    pub segments: (usize, usize),
    pub allocated_delta_bytes: i64,
    pub reserved_delta_bytes: i64,
    /// Sites whose live bytes grew, most first.
    pub grown_sites: Vec<SiteDelta>,
    /// Sites whose live bytes shrank, most first.
    pub shrunk_sites: Vec<SiteDelta>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SiteDelta {
    pub label: String,
    pub python_stack: Vec<String>,
    pub before_bytes: u64,
    pub after_bytes: u64,
    pub delta_bytes: i64,
    pub before_blocks: usize,
    pub after_blocks: usize,
}

fn sites_at_end(
    snap: &Snapshot,
    device: Option<i64>,
) -> HashMap<Vec<String>, (String, u64, usize)> {
    let mut sites = Sites::new(snap);
    let mut out: HashMap<Vec<String>, (String, u64, usize)> = HashMap::default();
    for seg in snap.segments.iter().filter(|s| Some(s.device) == device) {
        for b in &seg.blocks {
            if b.state == BlockState::ActiveAllocated {
                let s = sites.site(b.stack);
                let info = &sites.info[s];
                let e = out
                    .entry(info.python_stack.clone())
                    .or_insert_with(|| (info.label.clone(), 0, 0));
                e.1 += b.size;
                e.2 += 1;
            }
        }
    }
    out
}

/// Compares the memory alive at the end of `before` and `after`, by site.
pub fn diff(before: &Snapshot, after: &Snapshot, opts: &AnalyzeOptions) -> SnapshotDiff {
    let da = pick_device(before, opts.device);
    let db = pick_device(after, opts.device.or(da));
    let totals = |s: &Snapshot, d: Option<i64>| {
        let segs: Vec<_> = s.segments.iter().filter(|x| Some(x.device) == d).collect();
        (
            segs.iter().map(|x| x.allocated_size).sum::<u64>(),
            segs.iter().map(|x| x.total_size).sum::<u64>(),
            segs.len(),
        )
    };
    let (aa, ar, an) = totals(before, da);
    let (ba, br, bn) = totals(after, db);
    let sa = sites_at_end(before, da);
    let sb = sites_at_end(after, db);
    let mut keys: Vec<&Vec<String>> = sa.keys().chain(sb.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut deltas: Vec<SiteDelta> = keys
        .into_iter()
        .map(|k| {
            let a = sa.get(k);
            let b = sb.get(k);
            let label = b.or(a).map(|x| x.0.clone()).unwrap_or_default();
            let (ab, an) = a.map_or((0, 0), |x| (x.1, x.2));
            let (bb, bn) = b.map_or((0, 0), |x| (x.1, x.2));
            SiteDelta {
                label,
                python_stack: k.clone(),
                before_bytes: ab,
                after_bytes: bb,
                delta_bytes: to_i64(bb) - to_i64(ab),
                before_blocks: an,
                after_blocks: bn,
            }
        })
        .filter(|d| d.delta_bytes != 0)
        .collect();
    deltas.sort_by(|x, y| {
        y.delta_bytes
            .abs()
            .cmp(&x.delta_bytes.abs())
            .then(x.label.cmp(&y.label))
    });
    let (mut grown, mut shrunk): (Vec<_>, Vec<_>) =
        deltas.into_iter().partition(|d| d.delta_bytes > 0);
    grown.truncate(opts.top);
    shrunk.truncate(opts.top);
    SnapshotDiff {
        allocated_bytes: (aa, ba),
        reserved_bytes: (ar, br),
        segments: (an, bn),
        allocated_delta_bytes: to_i64(ba) - to_i64(aa),
        reserved_delta_bytes: to_i64(br) - to_i64(ar),
        grown_sites: grown,
        shrunk_sites: shrunk,
    }
}

/// Bytes as torch prints them: `512 bytes`, `1.50 KiB`, `600.00 MiB`, `12.00 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes <= 1024 {
        format!("{bytes} bytes")
    } else if b <= KIB * KIB {
        format!("{:.2} KiB", b / KIB)
    } else if b <= KIB * KIB * KIB {
        format!("{:.2} MiB", b / (KIB * KIB))
    } else {
        format!("{:.2} GiB", b / (KIB * KIB * KIB))
    }
}

/// Sites are grouped by their whole Python stack, but labelled by one or two frames; when two
/// listed sites share a label, each gets the first frame where its stack differs.
fn disambiguate(sites: &mut [Site]) {
    let labels: Vec<String> = sites.iter().map(|s| s.label.clone()).collect();
    let stacks: Vec<Vec<String>> = sites.iter().map(|s| s.python_stack.clone()).collect();
    for (i, site) in sites.iter_mut().enumerate() {
        let twins: Vec<usize> = (0..labels.len())
            .filter(|&j| j != i && labels[j] == labels[i])
            .collect();
        if twins.is_empty() {
            continue;
        }
        let mine = &stacks[i];
        let at = (0..mine.len()).find(|&k| twins.iter().any(|&j| stacks[j].get(k) != mine.get(k)));
        if let Some(frame) = at.and_then(|k| mine.get(k)) {
            let _ = write!(site.label, " [at {frame}]");
        }
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
