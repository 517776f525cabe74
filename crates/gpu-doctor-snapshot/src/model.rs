//! The typed snapshot: what the reader fills in and the analyses read. Frames and stacks are
//! interned (a [`FrameId`] / [`StackId`] per distinct one), because real snapshots repeat the
//! same few hundred frames millions of times.

use serde::Serialize;

/// Index of a distinct frame in [`Snapshot::frames`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FrameId(pub u32);

/// Index of a distinct stack in [`Snapshot::stacks`]. `StackId::EMPTY` is the empty stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct StackId(pub u32);

impl StackId {
    pub const EMPTY: StackId = StackId(0);
}

/// One frame: Python (`train.py:12 in step`) or, with `stacks="all"`, C++ (line 0).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Frame {
    pub filename: String,
    pub line: i64,
    pub name: String,
}

impl Frame {
    /// Whether this is a Python frame. C++ frames (from `stacks="all"`) have file names such
    /// as `??`, an empty one or `Foo.cpp`, and line 0; Python ones end in `.py` or are
    /// `<frozen ...>`, `<string>`, `<stdin>`.
    pub fn is_python(&self) -> bool {
        std::path::Path::new(&self.filename)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("py"))
            || (self.filename.starts_with('<') && self.filename.ends_with('>') && self.line > 0)
    }
}

/// The allocator's pool a segment belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentType {
    Large,
    Small,
    Unknown,
}

/// A block's state. `active_pending_free` (what C++ writes) and `active_awaiting_free`
/// (what the Python docstring says) are the same thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    ActiveAllocated,
    ActivePendingFree,
    Inactive,
    Unknown,
}

impl BlockState {
    pub(crate) fn parse(s: &str) -> BlockState {
        match s {
            "active_allocated" => BlockState::ActiveAllocated,
            "active_pending_free" | "active_awaiting_free" => BlockState::ActivePendingFree,
            "inactive" => BlockState::Inactive,
            _ => BlockState::Unknown,
        }
    }
}

/// A sub-range of a segment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    pub address: u64,
    /// Rounded size the allocator handed out.
    pub size: u64,
    /// What the program asked for (pre-rounding); equals `size` in dumps that lack it.
    pub requested_size: u64,
    pub state: BlockState,
    /// Where it was allocated (empty for inactive blocks and when history was off).
    pub stack: StackId,
}

/// One `cudaMalloc`'d range (or, for expandable segments, one mapped range).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Segment {
    pub device: i64,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: u64,
    pub active_size: u64,
    pub requested_size: u64,
    pub stream: i64,
    pub segment_type: SegmentType,
    pub pool_id: (i64, i64),
    pub is_expandable: bool,
    /// Where the segment was `cudaMalloc`'d, when recorded.
    pub stack: StackId,
    pub blocks: Vec<Block>,
}

/// What a trace entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Alloc,
    FreeRequested,
    FreeCompleted,
    /// Older dumps and some tools write one `free` for both steps.
    Free,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    /// `annotate` and any action newer than this reader.
    Other,
}

impl Action {
    pub(crate) fn parse(s: &str) -> Action {
        match s {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "free" => Action::Free,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            _ => Action::Other,
        }
    }
}

/// One entry of `device_traces`. Kept to 48 bytes: a big snapshot holds millions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceEntry {
    /// Block or segment address (0 for `snapshot` and `oom`).
    pub addr: u64,
    /// Requested size for `alloc`/`free_*`, segment bytes for `segment_*`, the rounded request
    /// for `oom`, total active bytes for `snapshot`.
    pub size: u64,
    pub stream: i64,
    /// Microseconds since the Unix epoch (torch 2.1+); `i64::MIN` when absent.
    #[serde(skip)]
    time_us: i64,
    /// `oom` only: what `cudaMemGetInfo` said was free; `u64::MAX` when absent.
    #[serde(skip)]
    device_free: u64,
    pub stack: StackId,
    pub action: Action,
}

impl TraceEntry {
    pub fn new(
        action: Action,
        addr: u64,
        size: u64,
        stream: i64,
        time_us: Option<i64>,
        device_free: Option<u64>,
        stack: StackId,
    ) -> Self {
        TraceEntry {
            addr,
            size,
            stream,
            time_us: time_us.unwrap_or(i64::MIN),
            device_free: device_free.unwrap_or(u64::MAX),
            stack,
            action,
        }
    }

    /// Microseconds since the Unix epoch (torch 2.1+).
    pub fn time_us(&self) -> Option<i64> {
        (self.time_us != i64::MIN).then_some(self.time_us)
    }

    /// `oom` only: what `cudaMemGetInfo` said was free on the device.
    pub fn device_free(&self) -> Option<u64> {
        (self.device_free != u64::MAX).then_some(self.device_free)
    }
}

/// `allocator_settings`: the `PYTORCH_CUDA_ALLOC_CONF` in force when the snapshot was taken.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AllocatorSettings {
    /// The configuration string, as given (may be empty).
    pub alloc_conf: Option<String>,
    pub expandable_segments: bool,
    /// `None` when unlimited (the dump writes -1).
    pub max_split_size: Option<u64>,
    pub garbage_collection_threshold: Option<f64>,
    /// Every key, rendered as text, in the order written (a JSON object when serialized).
    #[serde(serialize_with = "pairs_as_map")]
    pub entries: Vec<(String, String)>,
}

/// One `external_annotations` entry (`record_function` ranges and user annotations).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    pub device: Option<i64>,
    pub time_us: Option<i64>,
    /// The other keys (`stage`, `name`, user metadata), rendered as text.
    #[serde(serialize_with = "pairs_as_map")]
    pub fields: Vec<(String, String)>,
}

/// A whole snapshot, typed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Snapshot {
    /// The pickle protocol the file was written with (2 to 5).
    pub protocol: u8,
    pub segments: Vec<Segment>,
    /// One list per device, oldest entry first.
    pub device_traces: Vec<Vec<TraceEntry>>,
    pub allocator_settings: Option<AllocatorSettings>,
    pub external_annotations: Vec<Annotation>,
    /// Distinct frames; a [`FrameId`] indexes this.
    pub frames: Vec<Frame>,
    /// Distinct stacks, innermost frame first; a [`StackId`] indexes this. Entry 0 is empty.
    pub stacks: Vec<Vec<FrameId>>,
    /// The torch 2.0 layout (per-block `history`, no block addresses) was seen.
    pub legacy_history: bool,
}

impl Snapshot {
    /// The frames of a stack, innermost first.
    pub fn stack(&self, id: StackId) -> impl Iterator<Item = &Frame> + '_ {
        self.stacks
            .get(id.0 as usize)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(|f| self.frames.get(f.0 as usize))
    }

    /// The devices that appear in segments or traces, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut devices: Vec<i64> = self.segments.iter().map(|s| s.device).collect();
        for (i, t) in self.device_traces.iter().enumerate() {
            if !t.is_empty() {
                devices.extend(i64::try_from(i).ok());
            }
        }
        devices.sort_unstable();
        devices.dedup();
        devices
    }
}

/// Key/value pairs as a JSON object, keeping their order.
pub(crate) fn pairs_as_map<S, K, V>(pairs: &[(K, V)], s: S) -> Result<S::Ok, S::Error>
where
    S: serde::Serializer,
    K: Serialize,
    V: Serialize,
{
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        map.serialize_entry(k, v)?;
    }
    map.end()
}
