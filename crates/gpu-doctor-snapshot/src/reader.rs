//! The pickle reader: a strict opcode allow-list and a small stack machine that knows the
//! snapshot schema.
//!
//! Why hand-written: `serde-pickle` (and Python's own `pickle`) build a generic value tree
//! of the whole file and accept `GLOBAL`/`REDUCE`, i.e. they will import and call code named
//! by the file. A snapshot is plain containers, and a big one is hundreds of megabytes, so
//! this reader refuses every opcode that imports, calls or builds objects, and turns each
//! container into a typed value ([`Frame`], [`Block`], [`Segment`], [`TraceEntry`]) the moment
//! it is complete. Only the handful of containers still being filled are generic.
//!
//! How: containers live in an arena of slots (so the memo can refer to a list that is still
//! being filled, as pickle requires). A container is complete when its parent takes it
//! (`APPENDS`/`SETITEMS`/`TUPLE`) or, for a dict whose keys already say what it is (a frame,
//! a block, a trace entry), right after its `SETITEMS`. Frames and frame lists are interned, so
//! a stack shared by a million trace entries is one `StackId`. A slot whose content has moved
//! to its parent is recycled with a new generation, and a stale memo reference to it is an
//! error rather than a copy, so memory stays proportional to the typed result.
//!
//! Bounds: a length prefix beyond the end of the file is refused before allocating; strings
//! are capped; container nesting and the mark stack are capped; every retained byte is
//! counted against [`Limits::max_retained_bytes`].

use crate::SnapshotError;
use crate::input::Input;
use crate::memo::{MAX_INTERNED, Memo, MemoError};
use crate::model::{
    Action, AllocatorSettings, Annotation, Block, BlockState, Frame, FrameId, Segment, SegmentType,
    Snapshot, StackId, TraceEntry,
};
use rustc_hash::FxHashMap;
use std::io::Read;
use std::rc::Rc;

/// Resource bounds for untrusted input.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deepest container nesting accepted (a real snapshot nests 6 deep).
    pub max_depth: usize,
    /// Longest single string or bytes value.
    pub max_string_bytes: u64,
    /// Memory the typed result and the reader's working state may take.
    pub max_retained_bytes: u64,
    /// Most values on the pickle stack at once.
    pub max_stack: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 64,
            max_string_bytes: 16 << 20,
            max_retained_bytes: 4 << 30,
            max_stack: 1 << 24,
        }
    }
}

/// A list being filled, kept typed when all its items have one type.
#[derive(Debug, Clone, Default)]
pub(crate) enum ListBuf {
    #[default]
    Empty,
    Values(Vec<Value>),
    Frames(Vec<FrameId>),
    Blocks(Vec<Block>),
    Segments(Vec<Segment>),
    Traces(Vec<TraceEntry>),
    TraceLists(Vec<Vec<TraceEntry>>),
    Histories(Vec<History>),
}

/// A torch 2.0 per-block history entry.
#[derive(Debug, Clone)]
pub(crate) struct History {
    addr: Option<u64>,
    real_size: Option<u64>,
    stack: StackId,
}

#[derive(Debug, Clone, Default)]
pub(crate) enum Value {
    #[default]
    None,
    Bool(bool),
    Int(i64),
    /// 2^63 ..= 2^64-1.
    UInt(u64),
    /// Wider than 64 bits: kept only as "some integer".
    BigInt,
    Float(f64),
    Str(Rc<String>),
    Bytes,
    /// A container in the arena: (slot, generation).
    Ref(u32, u32),
    Tuple(Rc<Vec<Value>>),
    Frame(FrameId),
    Stack(StackId),
    Block(Box<Block>),
    Segment(Box<Segment>),
    Trace(Box<TraceEntry>),
    History(Box<History>),
    Settings(Box<AllocatorSettings>),
    // Boxed (and `Rc<String>`, `Rc<Vec>` above rather than fat pointers) so a `Value` is
    // 16 bytes: the memo holds one per memoized object, millions in a big snapshot.
    #[allow(clippy::box_collection)]
    Dict(Box<Vec<(Value, Value)>>),
    List(Box<ListBuf>),
}

impl Value {
    /// Values that may be copied when the memo hands them out again.
    fn is_cheap(&self) -> bool {
        match self {
            Value::List(l) => matches!(**l, ListBuf::Empty),
            Value::Block(_)
            | Value::Segment(_)
            | Value::Trace(_)
            | Value::History(_)
            | Value::Settings(_)
            | Value::Dict(_) => false,
            _ => true,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s.as_str()),
            _ => None,
        }
    }

    fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(i) => Some(i),
            // cudaStream_t values are pointers; keep their bits.
            Value::UInt(u) => Some(i64::from_ne_bytes(u.to_ne_bytes())),
            Value::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }

    fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Int(i) => u64::try_from(i).ok(),
            Value::UInt(u) => Some(u),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(f) => Some(f),
            Value::Int(i) => Some(i as f64),
            _ => None,
        }
    }

    fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            Value::Int(i) => Some(i != 0),
            _ => None,
        }
    }

    fn stack(&self) -> StackId {
        match self {
            Value::Stack(s) => *s,
            _ => StackId::EMPTY,
        }
    }

    /// Python-like text for settings and annotations.
    fn render(&self, out: &mut String, depth: usize) {
        use std::fmt::Write as _;
        if depth > 4 || out.len() > 4096 {
            out.push('…');
            return;
        }
        match self {
            Value::None => out.push_str("None"),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::UInt(u) => {
                let _ = write!(out, "{u}");
            }
            Value::Float(f) => {
                let _ = write!(out, "{f:?}");
            }
            Value::Str(s) => out.push_str(s),
            Value::Tuple(items) => {
                out.push('(');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.render(out, depth + 1);
                }
                out.push(')');
            }
            Value::Dict(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.render(out, depth + 1);
                    out.push_str(": ");
                    v.render(out, depth + 1);
                }
                out.push('}');
            }
            Value::List(l) => match &**l {
                ListBuf::Empty => out.push_str("[]"),
                ListBuf::Values(items) => {
                    out.push('[');
                    for (i, v) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        v.render(out, depth + 1);
                    }
                    out.push(']');
                }
                _ => out.push_str("[…]"),
            },
            _ => out.push('…'),
        }
    }

    fn rendered(&self) -> String {
        let mut s = String::new();
        self.render(&mut s, 0);
        s
    }
}

#[derive(Debug)]
enum SlotKind {
    Dict(Vec<(Value, Value)>),
    List(ListBuf),
    /// Complete and typed, not yet taken by its parent.
    Ready(Value),
    /// Complete and cheap, taken by one parent while another reference to it is still on
    /// the stack (a shared empty `frames` list of a segment and its blocks): handed out again
    /// by copy until the last reference is resolved.
    Done(Value),
    Free,
}

#[derive(Debug)]
struct Slot {
    kind: SlotKind,
    generation: u32,
    depth: u16,
    /// The memo index that refers to this container ([`NOT_MEMOIZED`] when none): when the
    /// container moves to its parent, that memo entry becomes the finished value when it is
    /// cheap to hand out again (a stack, a string, a tuple) and is cleared otherwise, and the
    /// slot is reused (see `memo.rs`).
    memo_index: usize,
    /// References to this container on the stack, not yet resolved.
    refs: u32,
}

const NOT_MEMOIZED: usize = usize::MAX;

/// Approximate cost of one slot, one stored value, one typed entry.
const SLOT_COST: u64 = 64;
const VALUE_COST: u64 = std::mem::size_of::<Value>() as u64;

struct Machine {
    limits: Limits,
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: Memo,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    frames: Vec<(Rc<String>, i64, Rc<String>)>,
    frame_ids: FxHashMap<(Rc<String>, i64, Rc<String>), FrameId>,
    stacks: Vec<Rc<[FrameId]>>,
    stack_ids: FxHashMap<Rc<[FrameId]>, StackId>,
    retained: u64,
    offset: u64,
    legacy_history: bool,
    /// Reused between SETITEMS so each dict costs one allocation.
    scratch_pairs: Vec<(Value, Value)>,
    /// Reused by `pop_mark` and `append_items`.
    scratch_items: Vec<Value>,
    scratch_resolved: Vec<Value>,
}

type R<T> = Result<T, SnapshotError>;

/// Reads a snapshot from `reader`. `len` is the input's size when known (a file): length
/// prefixes are checked against it. `progress` is called with the byte offset now and then.
pub fn read_snapshot<Rd: Read>(
    reader: Rd,
    len: Option<u64>,
    limits: Limits,
    progress: &mut dyn FnMut(u64),
) -> Result<Snapshot, SnapshotError> {
    let mut input = Input::new(reader, len, progress);
    let mut m = Machine::new(limits);
    let Some(first) = input.next_byte()? else {
        return Err(SnapshotError::Empty);
    };
    if first != 0x80 {
        return Err(SnapshotError::NotPickle(first));
    }
    let protocol = input.byte()?;
    if !(2..=5).contains(&protocol) {
        return Err(SnapshotError::Protocol(protocol));
    }
    let root = m.run(&mut input)?;
    let mut snap = m.build(root)?;
    snap.protocol = protocol;
    Ok(snap)
}

impl Machine {
    fn new(limits: Limits) -> Self {
        Machine {
            limits,
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Memo::default(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            frames: Vec::new(),
            frame_ids: FxHashMap::default(),
            stacks: vec![Rc::from(Vec::new())],
            stack_ids: FxHashMap::default(),
            retained: 0,
            offset: 0,
            legacy_history: false,
            scratch_pairs: Vec::new(),
            scratch_items: Vec::new(),
            scratch_resolved: Vec::new(),
        }
    }

    fn malformed(&self, what: impl Into<String>) -> SnapshotError {
        SnapshotError::Malformed {
            offset: self.offset,
            what: what.into(),
        }
    }

    fn charge(&mut self, bytes: u64) -> R<()> {
        self.retained += bytes;
        if self.retained + self.memo.bytes() > self.limits.max_retained_bytes {
            return Err(SnapshotError::MemoryLimit {
                offset: self.offset,
                limit: self.limits.max_retained_bytes,
            });
        }
        Ok(())
    }

    /// Gives back what [`Machine::charge`] counted once it is dropped, so the limit bounds
    /// what is held at once, not everything the file ever made.
    fn refund(&mut self, bytes: u64) {
        self.retained = self.retained.saturating_sub(bytes);
    }

    fn push(&mut self, v: Value) -> R<()> {
        if self.stack.len() >= self.limits.max_stack {
            return Err(SnapshotError::MemoryLimit {
                offset: self.offset,
                limit: self.limits.max_retained_bytes,
            });
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self) -> R<Value> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.malformed("pop from an empty stack"));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.malformed("pop from an empty stack"))
    }

    /// The values above the last MARK, in a reused buffer (one allocation per container
    /// would dominate a file of millions of small dicts); `set_items` and `append_items` hand
    /// it back.
    fn pop_mark(&mut self) -> R<Vec<Value>> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| self.malformed("no MARK before a collection opcode"))?;
        if mark > self.stack.len() {
            return Err(self.malformed("MARK above the stack top"));
        }
        let mut items = std::mem::take(&mut self.scratch_items);
        items.clear();
        items.extend(self.stack.drain(mark..));
        Ok(items)
    }

    fn new_slot(&mut self, kind: SlotKind) -> R<Value> {
        self.charge(SLOT_COST)?;
        if let Some(i) = self.free_slots.pop() {
            let slot = &mut self.slots[i as usize];
            slot.kind = kind;
            slot.generation = slot.generation.wrapping_add(1);
            slot.depth = 1;
            slot.memo_index = NOT_MEMOIZED;
            slot.refs = 1;
            return Ok(Value::Ref(i, slot.generation));
        }
        let i =
            u32::try_from(self.slots.len()).map_err(|_| self.malformed("too many containers"))?;
        self.slots.push(Slot {
            kind,
            generation: 0,
            depth: 1,
            memo_index: NOT_MEMOIZED,
            refs: 1,
        });
        Ok(Value::Ref(i, 0))
    }

    fn slot_mut(&mut self, v: &Value) -> R<&mut Slot> {
        let offset = self.offset;
        let Value::Ref(i, generation) = *v else {
            return Err(self.malformed("expected a list or dict below the items"));
        };
        match self.slots.get_mut(i as usize) {
            Some(slot) if slot.generation == generation => Ok(slot),
            _ => Err(SnapshotError::Malformed {
                offset,
                what: "reference to a container that was already used".into(),
            }),
        }
    }

    /// Turns a stack value into a finished value: a container reference is completed (typed
    /// if its shape is known) and moved out of its slot. Returns the value and its depth.
    #[inline]
    fn resolve(&mut self, v: Value) -> R<(Value, u16)> {
        match v {
            Value::Ref(i, generation) => self.resolve_ref(i, generation),
            other => Ok((other, 0)),
        }
    }

    fn resolve_ref(&mut self, i: u32, generation: u32) -> R<(Value, u16)> {
        let offset = self.offset;
        let stale = || SnapshotError::Malformed {
            offset,
            what: "an object is referenced again after being used (not a snapshot shape)".into(),
        };
        let Some(slot) = self.slots.get_mut(i as usize) else {
            return Err(stale());
        };
        if slot.generation != generation {
            return Err(stale());
        }
        let depth = slot.depth;
        let memo_index = slot.memo_index;
        slot.refs = slot.refs.saturating_sub(1);
        let others = slot.refs;
        if let SlotKind::Done(v) = &slot.kind {
            let v = v.clone();
            if others == 0 {
                slot.kind = SlotKind::Free;
                self.free_slots.push(i);
                self.refund(SLOT_COST);
            }
            return Ok((v, depth));
        }
        let kind = std::mem::replace(&mut slot.kind, SlotKind::Free);
        let value = match kind {
            SlotKind::Dict(items) => self.finish_dict(items, false)?,
            SlotKind::List(list) => self.finish_list(list)?,
            SlotKind::Ready(v) => v,
            SlotKind::Done(_) | SlotKind::Free => return Err(stale()),
        };
        if memo_index != NOT_MEMOIZED {
            if value.is_cheap() {
                self.memo
                    .set(memo_index, value.clone())
                    .map_err(|e| self.memo_error(e, memo_index))?;
            } else {
                self.memo.clear(memo_index);
            }
        }
        if others > 0 && value.is_cheap() {
            self.slots[i as usize].kind = SlotKind::Done(value.clone());
        } else {
            self.free_slots.push(i);
            self.refund(SLOT_COST);
        }
        Ok((value, depth))
    }

    fn check_depth(&self, depth: u16) -> R<()> {
        if usize::from(depth) > self.limits.max_depth {
            return Err(SnapshotError::TooDeep {
                offset: self.offset,
                limit: self.limits.max_depth,
            });
        }
        Ok(())
    }

    fn append_items(&mut self, target: &Value, mut items: Vec<Value>) -> R<()> {
        if self.append_frames(target, &items)? {
            items.clear();
            self.scratch_items = items;
            return Ok(());
        }
        let mut resolved = std::mem::take(&mut self.scratch_resolved);
        resolved.clear();
        let mut max_depth = 0u16;
        for item in items.drain(..) {
            let (v, d) = self.resolve(item)?;
            max_depth = max_depth.max(d);
            resolved.push(v);
        }
        self.scratch_items = items;
        // A trace entry was counted when it was typed (`finish_dict`).
        let untyped = resolved
            .iter()
            .filter(|v| !matches!(v, Value::Trace(_)))
            .count();
        self.charge(VALUE_COST * untyped as u64)?;
        let offset = self.offset;
        let slot = self.slot_mut(target)?;
        slot.depth = slot.depth.max(max_depth.saturating_add(1));
        let depth = slot.depth;
        let SlotKind::List(list) = &mut slot.kind else {
            return Err(SnapshotError::Malformed {
                offset,
                what: "APPEND to something that is not a list being built".into(),
            });
        };
        for v in resolved.drain(..) {
            list_push(list, v);
        }
        self.scratch_resolved = resolved;
        self.check_depth(depth)
    }

    /// The common case, a stack's frames (every trace entry has one): frame ids straight into
    /// the list, without resolving or re-matching each item. Returns false when `items` are
    /// not all frames or the target is not a list of frames, for the general path.
    fn append_frames(&mut self, target: &Value, items: &[Value]) -> R<bool> {
        if items.is_empty() || !items.iter().all(|v| matches!(v, Value::Frame(_))) {
            return Ok(false);
        }
        let Value::Ref(i, generation) = *target else {
            return Ok(false);
        };
        let Some(slot) = self
            .slots
            .get_mut(i as usize)
            .filter(|s| s.generation == generation)
        else {
            return Ok(false);
        };
        let SlotKind::List(list) = &mut slot.kind else {
            return Ok(false);
        };
        if matches!(list, ListBuf::Empty) {
            *list = ListBuf::Frames(Vec::with_capacity(items.len()));
        }
        let ListBuf::Frames(frames) = list else {
            return Ok(false);
        };
        frames.extend(items.iter().filter_map(|v| match v {
            Value::Frame(id) => Some(*id),
            _ => None,
        }));
        // Frames are leaves: the list is one deeper than nothing.
        slot.depth = slot.depth.max(1);
        self.charge(VALUE_COST * items.len() as u64)?;
        Ok(true)
    }

    fn set_items(&mut self, target: &Value, mut items: Vec<Value>) -> R<()> {
        if items.len() % 2 != 0 {
            return Err(self.malformed("SETITEMS with an odd number of items"));
        }
        let mut pairs = std::mem::take(&mut self.scratch_pairs);
        pairs.clear();
        let mut max_depth = 0u16;
        let mut it = items.drain(..);
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            let (k, dk) = self.resolve(k)?;
            let (v, dv) = self.resolve(v)?;
            max_depth = max_depth.max(dk).max(dv);
            pairs.push((k, v));
        }
        drop(it);
        self.scratch_items = items;
        self.charge(2 * VALUE_COST * pairs.len() as u64)?;
        let offset = self.offset;
        let slot = self.slot_mut(target)?;
        slot.depth = slot.depth.max(max_depth.saturating_add(1));
        let depth = slot.depth;
        let SlotKind::Dict(dict) = &mut slot.kind else {
            return Err(SnapshotError::Malformed {
                offset,
                what: "SETITEMS on something that is not a dict being built".into(),
            });
        };
        if dict.is_empty() {
            dict.reserve_exact(pairs.len());
        }
        dict.append(&mut pairs);
        self.scratch_pairs = pairs;
        self.check_depth(depth)?;
        // A dict whose keys say it is a frame, block, segment or trace entry is complete
        // after one SETITEMS (pickle writes up to 1000 items per batch): type it now, so a
        // writer that puts a million of them on the stack before one APPENDS stays small.
        let Value::Ref(i, _) = *target else {
            return Ok(());
        };
        let slot = &mut self.slots[i as usize];
        if let SlotKind::Dict(items) = &slot.kind
            && is_typed_shape(items)
        {
            let SlotKind::Dict(items) = std::mem::replace(&mut slot.kind, SlotKind::Free) else {
                return Ok(());
            };
            let v = self.finish_dict(items, true)?;
            self.slots[i as usize].kind = SlotKind::Ready(v);
        }
        Ok(())
    }

    fn memoize(&mut self, index: usize) -> R<()> {
        let top = self
            .stack
            .last()
            .cloned()
            .ok_or_else(|| self.malformed("memoize with an empty stack"))?;
        if let Value::Ref(i, generation) = top
            && let Some(slot) = self.slots.get_mut(i as usize)
            && slot.generation == generation
        {
            slot.memo_index = index;
        }
        self.memo
            .set(index, top)
            .map_err(|e| self.memo_error(e, index))?;
        self.charge(0)
    }

    fn memo_error(&self, e: MemoError, index: usize) -> SnapshotError {
        match e {
            MemoError::TooFar => {
                self.malformed(format!("memo index {index} is far beyond the memo"))
            }
            MemoError::Full => self.malformed("more memoized objects than this reader keeps"),
        }
    }

    fn memo_get(&mut self, index: usize) -> R<()> {
        let Some(v) = self.memo.get(index) else {
            return Err(self.malformed(if index < self.memo.next_index() {
                format!(
                    "memo index {index} refers to an object already used (not a snapshot shape)"
                )
            } else {
                format!("memo index {index} was never stored")
            }));
        };
        if let Value::Ref(i, generation) = v
            && let Some(slot) = self.slots.get_mut(i as usize)
            && slot.generation == generation
        {
            slot.refs = slot.refs.saturating_add(1);
        }
        self.push(v)
    }

    fn string<Rd: Read>(&mut self, input: &mut Input<'_, Rd>, at: u64, len: u64) -> R<()> {
        let n = input.check_len(at, len, self.limits.max_string_bytes)?;
        // A short string is interned: the memo counts it once (`Memo::bytes`), however often
        // the file repeats it. A long one is counted before it is allocated.
        let counted = if n > MAX_INTERNED { len + 32 } else { 0 };
        self.charge(counted)?;
        let memo = &mut self.memo;
        let s: Rc<String> = input.with_bytes(n, |b| match std::str::from_utf8(b) {
            Ok(s) => memo.intern(s),
            Err(_) => memo.intern(&String::from_utf8_lossy(b)),
        })?;
        self.push(Value::Str(s))
    }

    fn bytes_value<Rd: Read>(&mut self, input: &mut Input<'_, Rd>, at: u64, len: u64) -> R<()> {
        let n = input.check_len(at, len, self.limits.max_string_bytes)?;
        input.skip(n)?;
        self.push(Value::Bytes)
    }

    fn long<Rd: Read>(&mut self, input: &mut Input<'_, Rd>, at: u64, len: u64) -> R<()> {
        let n = input.check_len(at, len, 4096)?;
        let v = input.with_bytes(n, decode_long)?;
        self.push(v)
    }

    fn tuple(&mut self, items: Vec<Value>) -> R<()> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            out.push(self.resolve(item)?.0);
        }
        self.charge(VALUE_COST * out.len() as u64)?;
        self.push(Value::Tuple(Rc::new(out)))
    }

    /// Runs opcodes up to STOP; returns the (resolved) root value.
    fn run<Rd: Read>(&mut self, input: &mut Input<'_, Rd>) -> R<Value> {
        loop {
            self.offset = input.offset();
            let at = self.offset;
            let Some(op) = input.next_byte()? else {
                return Err(SnapshotError::Truncated { offset: at });
            };
            match op {
                b'.' => {
                    let top = self.pop()?;
                    return Ok(self.resolve(top)?.0);
                }
                0x95 => {
                    // FRAME: a length hint only.
                    let len = u64::from_le_bytes(input.array()?);
                    input.check_len(at + 1, len, u64::MAX)?;
                }
                0x80 => return Err(self.malformed("a second PROTO opcode")),
                b'(' => {
                    if self.marks.len() >= self.limits.max_depth {
                        return Err(SnapshotError::TooDeep {
                            offset: at,
                            limit: self.limits.max_depth,
                        });
                    }
                    self.marks.push(self.stack.len());
                }
                b'0' => {
                    self.pop()?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let top = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| self.malformed("DUP with an empty stack"))?;
                    if !top.is_cheap() || matches!(top, Value::Ref(..)) {
                        return Err(self.malformed("DUP of a container"));
                    }
                    self.push(top)?;
                }
                b'N' => self.push(Value::None)?,
                0x88 => self.push(Value::Bool(true))?,
                0x89 => self.push(Value::Bool(false))?,
                b'J' => {
                    let v = i32::from_le_bytes(input.array()?);
                    self.push(Value::Int(i64::from(v)))?;
                }
                b'K' => {
                    let v = input.byte()?;
                    self.push(Value::Int(i64::from(v)))?;
                }
                b'M' => {
                    let v = u16::from_le_bytes(input.array()?);
                    self.push(Value::Int(i64::from(v)))?;
                }
                0x8a => {
                    let n = input.byte()?;
                    self.long(input, at + 1, u64::from(n))?;
                }
                0x8b => {
                    let n = u32::from_le_bytes(input.array()?);
                    self.long(input, at + 1, u64::from(n))?;
                }
                b'G' => {
                    let v = f64::from_be_bytes(input.array()?);
                    self.push(Value::Float(v))?;
                }
                0x8c => {
                    let n = input.byte()?;
                    self.string(input, at + 1, u64::from(n))?;
                }
                b'X' => {
                    let n = u32::from_le_bytes(input.array()?);
                    self.string(input, at + 1, u64::from(n))?;
                }
                0x8d => {
                    let n = u64::from_le_bytes(input.array()?);
                    self.string(input, at + 1, n)?;
                }
                b'C' => {
                    let n = input.byte()?;
                    self.bytes_value(input, at + 1, u64::from(n))?;
                }
                b'B' => {
                    let n = u32::from_le_bytes(input.array()?);
                    self.bytes_value(input, at + 1, u64::from(n))?;
                }
                0x8e | 0x96 => {
                    let n = u64::from_le_bytes(input.array()?);
                    self.bytes_value(input, at + 1, n)?;
                }
                b'}' => {
                    let v = self.new_slot(SlotKind::Dict(Vec::new()))?;
                    self.push(v)?;
                }
                b']' | 0x8f => {
                    let v = self.new_slot(SlotKind::List(ListBuf::Empty))?;
                    self.push(v)?;
                }
                b')' => self.push(Value::Tuple(Rc::new(Vec::new())))?,
                b'd' => {
                    let items = self.pop_mark()?;
                    let v = self.new_slot(SlotKind::Dict(Vec::new()))?;
                    self.set_items(&v, items)?;
                    self.push(v)?;
                }
                b'l' | 0x91 => {
                    let items = self.pop_mark()?;
                    let v = self.new_slot(SlotKind::List(ListBuf::Empty))?;
                    self.append_items(&v, items)?;
                    self.push(v)?;
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.tuple(items)?;
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let floor = self.marks.last().copied().unwrap_or(0);
                    if self.stack.len() < floor + n {
                        return Err(self.malformed("TUPLE with too few items"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.tuple(items)?;
                }
                b'a' => {
                    let v = self.pop()?;
                    let target = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| self.malformed("APPEND without a list"))?;
                    self.append_items(&target, vec![v])?;
                }
                b'e' | 0x90 => {
                    let items = self.pop_mark()?;
                    let target = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| self.malformed("APPENDS without a list"))?;
                    self.append_items(&target, items)?;
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    let target = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| self.malformed("SETITEM without a dict"))?;
                    self.set_items(&target, vec![k, v])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let target = self
                        .stack
                        .last()
                        .cloned()
                        .ok_or_else(|| self.malformed("SETITEMS without a dict"))?;
                    self.set_items(&target, items)?;
                }
                0x94 => self.memoize(self.memo.next_index())?,
                b'q' => {
                    let i = input.byte()?;
                    self.memoize(usize::from(i))?;
                }
                b'r' => {
                    let i = u32::from_le_bytes(input.array()?);
                    self.memoize(i as usize)?;
                }
                b'h' => {
                    let i = input.byte()?;
                    self.memo_get(usize::from(i))?;
                }
                b'j' => {
                    let i = u32::from_le_bytes(input.array()?);
                    self.memo_get(i as usize)?;
                }
                b'c' => {
                    let module = input.short_line(200);
                    let name = input.short_line(200);
                    return Err(SnapshotError::Forbidden {
                        name: "GLOBAL",
                        offset: at,
                        detail: format!(" (imports `{module}.{name}`)"),
                    });
                }
                0x93 => {
                    let n = self.stack.len();
                    let detail = match (
                        n.checked_sub(2).and_then(|i| self.stack.get(i)),
                        self.stack.last(),
                    ) {
                        (Some(Value::Str(m)), Some(Value::Str(f))) => {
                            format!(" (imports `{m}.{f}`)")
                        }
                        _ => String::new(),
                    };
                    return Err(SnapshotError::Forbidden {
                        name: "STACK_GLOBAL",
                        offset: at,
                        detail,
                    });
                }
                _ => {
                    if let Some(name) = forbidden_name(op) {
                        return Err(SnapshotError::Forbidden {
                            name,
                            offset: at,
                            detail: String::new(),
                        });
                    }
                    return Err(SnapshotError::UnknownOpcode { op, offset: at });
                }
            }
        }
    }

    fn intern_frame(&mut self, filename: Rc<String>, line: i64, name: Rc<String>) -> R<FrameId> {
        let key = (filename, line, name);
        if let Some(id) = self.frame_ids.get(&key) {
            return Ok(*id);
        }
        self.charge(96)?;
        let id = FrameId(
            u32::try_from(self.frames.len()).map_err(|_| self.malformed("too many frames"))?,
        );
        self.frames.push(key.clone());
        self.frame_ids.insert(key, id);
        Ok(id)
    }

    fn intern_stack(&mut self, frames: Vec<FrameId>) -> R<StackId> {
        if frames.is_empty() {
            return Ok(StackId::EMPTY);
        }
        // Looked up by slice: a stack seen before (nearly all of them) costs no allocation.
        if let Some(id) = self.stack_ids.get(frames.as_slice()) {
            return Ok(*id);
        }
        let key: Rc<[FrameId]> = Rc::from(frames);
        self.charge(64 + 8 * key.len() as u64)?;
        let id = StackId(
            u32::try_from(self.stacks.len()).map_err(|_| self.malformed("too many stacks"))?,
        );
        self.stacks.push(key.clone());
        self.stack_ids.insert(key, id);
        Ok(id)
    }

    fn finish_list(&mut self, list: ListBuf) -> R<Value> {
        Ok(match list {
            ListBuf::Frames(frames) => {
                // The list goes; an interned stack is counted in `intern_stack`.
                self.refund(VALUE_COST * frames.len() as u64);
                Value::Stack(self.intern_stack(frames)?)
            }
            other => Value::List(Box::new(other)),
        })
    }

    /// Types a complete dict by its keys; `eager` is true when called right after its
    /// SETITEMS (only the typed shapes are finished then).
    fn finish_dict(&mut self, mut items: Vec<(Value, Value)>, eager: bool) -> R<Value> {
        // The pairs were counted by `set_items`; what replaces them is counted below.
        self.refund(2 * VALUE_COST * items.len() as u64);
        let bits = key_bits(&items);
        let has = |_: &[(Value, Value)], k: u32| bits & k == k;
        if has(&items, K_FILENAME | K_NAME | K_LINE) {
            let filename = take_str(&mut items, "filename").unwrap_or_default();
            let name = take_str(&mut items, "name").unwrap_or_default();
            let line = get(&items, "line").and_then(Value::as_i64).unwrap_or(0);
            return Ok(Value::Frame(self.intern_frame(filename, line, name)?));
        }
        if has(&items, K_ACTION) {
            self.charge(std::mem::size_of::<TraceEntry>() as u64)?;
            return Ok(Value::Trace(Box::new(trace_entry(&items))));
        }
        if has(&items, K_TOTAL_SIZE) {
            return Ok(Value::Segment(Box::new(self.segment(&mut items)?)));
        }
        if has(&items, K_STATE | K_SIZE) {
            return Ok(Value::Block(Box::new(self.block(&mut items))));
        }
        if has(&items, K_REAL_SIZE) {
            return Ok(Value::History(Box::new(History {
                addr: get(&items, "addr").and_then(Value::as_u64),
                real_size: get(&items, "real_size").and_then(Value::as_u64),
                stack: get(&items, "frames").map_or(StackId::EMPTY, Value::stack),
            })));
        }
        if !eager && has(&items, K_SETTINGS) {
            return Ok(Value::Settings(Box::new(settings(&items))));
        }
        self.charge(2 * VALUE_COST * items.len() as u64)?;
        Ok(Value::Dict(Box::new(items)))
    }

    fn block(&mut self, items: &mut [(Value, Value)]) -> Block {
        let size = get(items, "size").and_then(Value::as_u64).unwrap_or(0);
        let mut stack = get(items, "frames").map_or(StackId::EMPTY, Value::stack);
        let mut address = get(items, "address").and_then(Value::as_u64);
        let mut requested = get(items, "requested_size").and_then(Value::as_u64);
        // torch 2.0: no address or frames on the block, a `history` list instead.
        if let Some(Value::List(list)) = get(items, "history")
            && let ListBuf::Histories(h) = &**list
            && let Some(first) = h.first()
        {
            self.legacy_history = true;
            if stack == StackId::EMPTY {
                stack = first.stack;
            }
            address = address.or(first.addr);
            requested = requested.or(first.real_size);
        }
        Block {
            address: address.unwrap_or(u64::MAX),
            size,
            requested_size: requested.unwrap_or(size),
            state: get(items, "state")
                .and_then(Value::as_str)
                .map_or(BlockState::Unknown, BlockState::parse),
            stack,
        }
    }

    fn segment(&mut self, items: &mut [(Value, Value)]) -> R<Segment> {
        let mut blocks = match take(items, "blocks") {
            Some(Value::List(list)) => match *list {
                ListBuf::Blocks(b) => b,
                ListBuf::Empty => Vec::new(),
                _ => return Err(self.malformed("a segment's `blocks` is not a list of blocks")),
            },
            _ => Vec::new(),
        };
        let items: &[(Value, Value)] = items;
        let u = |k: &str| get(items, k).and_then(Value::as_u64);
        let address = u("address").unwrap_or(0);
        let total_size = u("total_size").unwrap_or(0);
        // Blocks without addresses (torch 2.0) follow each other from the segment start.
        let mut next = address;
        for b in &mut blocks {
            if b.address == u64::MAX {
                b.address = next;
            }
            next = b.address.saturating_add(b.size);
        }
        let sum = |pred: fn(BlockState) -> bool, f: fn(&Block) -> u64| -> u64 {
            blocks.iter().filter(|b| pred(b.state)).map(f).sum()
        };
        let allocated = u("allocated_size")
            .unwrap_or_else(|| sum(|s| s == BlockState::ActiveAllocated, |b| b.size));
        let active = u("active_size").unwrap_or_else(|| {
            sum(
                |s| {
                    matches!(
                        s,
                        BlockState::ActiveAllocated | BlockState::ActivePendingFree
                    )
                },
                |b| b.size,
            )
        });
        let requested = u("requested_size")
            .unwrap_or_else(|| sum(|s| s == BlockState::ActiveAllocated, |b| b.requested_size));
        let pool_id = match get(items, "segment_pool_id") {
            Some(Value::Tuple(t)) if t.len() == 2 => {
                (t[0].as_i64().unwrap_or(0), t[1].as_i64().unwrap_or(0))
            }
            _ => (0, 0),
        };
        self.charge(std::mem::size_of::<Segment>() as u64)?;
        Ok(Segment {
            device: get(items, "device").and_then(Value::as_i64).unwrap_or(0),
            address,
            total_size,
            allocated_size: allocated,
            active_size: active,
            requested_size: requested,
            stream: get(items, "stream").and_then(Value::as_i64).unwrap_or(0),
            segment_type: match get(items, "segment_type").and_then(Value::as_str) {
                Some("large") => SegmentType::Large,
                Some("small") => SegmentType::Small,
                _ => SegmentType::Unknown,
            },
            pool_id,
            is_expandable: get(items, "is_expandable")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            stack: get(items, "frames").map_or(StackId::EMPTY, Value::stack),
            blocks,
        })
    }

    /// Builds the snapshot from the root value.
    fn build(self, root: Value) -> R<Snapshot> {
        let frames = self
            .frames
            .iter()
            .map(|(f, l, n)| Frame {
                filename: f.to_string(),
                line: *l,
                name: n.to_string(),
            })
            .collect();
        let stacks = self.stacks.iter().map(|s| s.to_vec()).collect();
        let mut snap = Snapshot {
            frames,
            stacks,
            legacy_history: self.legacy_history,
            ..Snapshot::default()
        };
        let mut items = match root {
            Value::Dict(items) => *items,
            // `torch.cuda.memory_snapshot()` is the bare segment list.
            Value::List(list) => match *list {
                ListBuf::Segments(s) => {
                    snap.segments = s;
                    return Ok(snap);
                }
                ListBuf::Empty => return Ok(snap),
                _ => {
                    return Err(SnapshotError::NotSnapshot(
                        "the top level is a list of something other than segments".into(),
                    ));
                }
            },
            Value::Segment(_) | Value::Trace(_) | Value::Block(_) | Value::Frame(_) => {
                return Err(SnapshotError::NotSnapshot(
                    "the top level is a single entry, not a snapshot dict".into(),
                ));
            }
            _ => {
                return Err(SnapshotError::NotSnapshot(
                    "the top level is not a dict with `segments`".into(),
                ));
            }
        };
        if get(&items, "segments").is_none() && get(&items, "device_traces").is_none() {
            return Err(SnapshotError::NotSnapshot(
                "the top-level dict has neither `segments` nor `device_traces`".into(),
            ));
        }
        match take(&mut items, "segments") {
            Some(Value::List(list)) => match *list {
                ListBuf::Segments(s) => snap.segments = s,
                ListBuf::Empty => {}
                _ => {
                    return Err(SnapshotError::NotSnapshot(
                        "`segments` is not a list of segments".into(),
                    ));
                }
            },
            None => {}
            Some(_) => {
                return Err(SnapshotError::NotSnapshot(
                    "`segments` is not a list".into(),
                ));
            }
        }
        match take(&mut items, "device_traces") {
            Some(Value::List(list)) => {
                match *list {
                    ListBuf::TraceLists(t) => snap.device_traces = t,
                    ListBuf::Empty => {}
                    ListBuf::Values(values) => {
                        for v in values {
                            snap.device_traces.push(match v {
                                Value::List(l) => match *l {
                                    ListBuf::Traces(t) => t,
                                    ListBuf::Empty => Vec::new(),
                                    _ => return Err(SnapshotError::NotSnapshot(
                                        "a `device_traces` entry is not a list of trace entries"
                                            .into(),
                                    )),
                                },
                                _ => {
                                    return Err(SnapshotError::NotSnapshot(
                                        "a `device_traces` entry is not a list".into(),
                                    ));
                                }
                            });
                        }
                    }
                    // A flat list of entries (some tools write one device's list).
                    ListBuf::Traces(t) => snap.device_traces = vec![t],
                    _ => {
                        return Err(SnapshotError::NotSnapshot(
                            "`device_traces` is not a list of lists".into(),
                        ));
                    }
                }
            }
            None => {}
            Some(_) => {
                return Err(SnapshotError::NotSnapshot(
                    "`device_traces` is not a list".into(),
                ));
            }
        }
        snap.allocator_settings = match take(&mut items, "allocator_settings") {
            Some(Value::Settings(s)) => Some(*s),
            Some(Value::Dict(d)) => Some(settings(&d)),
            _ => None,
        };
        if let Some(Value::List(list)) = take(&mut items, "external_annotations")
            && let ListBuf::Values(values) = *list
        {
            for v in values {
                if let Value::Dict(d) = v {
                    snap.external_annotations.push(annotation(&d));
                }
            }
        }
        Ok(snap)
    }
}

fn list_push(list: &mut ListBuf, v: Value) {
    match (&mut *list, v) {
        (ListBuf::Frames(f), Value::Frame(id)) => f.push(id),
        (ListBuf::Blocks(b), Value::Block(x)) => b.push(*x),
        (ListBuf::Segments(s), Value::Segment(x)) => s.push(*x),
        (ListBuf::Traces(t), Value::Trace(x)) => t.push(*x),
        (ListBuf::TraceLists(t), Value::List(l)) if matches!(*l, ListBuf::Traces(_)) => {
            if let ListBuf::Traces(x) = *l {
                t.push(x);
            }
        }
        (ListBuf::Histories(h), Value::History(x)) => h.push(*x),
        (ListBuf::Values(values), v) => values.push(v),
        (ListBuf::Empty, v) => {
            *list = match v {
                Value::Frame(id) => ListBuf::Frames(vec![id]),
                Value::Block(x) => ListBuf::Blocks(vec![*x]),
                Value::Segment(x) => ListBuf::Segments(vec![*x]),
                Value::Trace(x) => ListBuf::Traces(vec![*x]),
                Value::History(x) => ListBuf::Histories(vec![*x]),
                Value::List(l) if matches!(*l, ListBuf::Traces(_)) => match *l {
                    ListBuf::Traces(x) => ListBuf::TraceLists(vec![x]),
                    other => ListBuf::Values(vec![Value::List(Box::new(other))]),
                },
                other => ListBuf::Values(vec![other]),
            };
        }
        (_, v) => {
            // Mixed item types: fall back to generic values.
            let mut values = into_values(std::mem::take(list));
            values.push(v);
            *list = ListBuf::Values(values);
        }
    }
}

fn into_values(list: ListBuf) -> Vec<Value> {
    match list {
        ListBuf::Empty => Vec::new(),
        ListBuf::Values(v) => v,
        ListBuf::Frames(f) => f.into_iter().map(Value::Frame).collect(),
        ListBuf::Blocks(b) => b.into_iter().map(|x| Value::Block(Box::new(x))).collect(),
        ListBuf::Segments(s) => s.into_iter().map(|x| Value::Segment(Box::new(x))).collect(),
        ListBuf::Traces(t) => t.into_iter().map(|x| Value::Trace(Box::new(x))).collect(),
        ListBuf::TraceLists(t) => t
            .into_iter()
            .map(|x| Value::List(Box::new(ListBuf::Traces(x))))
            .collect(),
        ListBuf::Histories(h) => h.into_iter().map(|x| Value::History(Box::new(x))).collect(),
    }
}

const K_FILENAME: u32 = 1;
const K_NAME: u32 = 2;
const K_LINE: u32 = 4;
const K_ACTION: u32 = 8;
const K_TOTAL_SIZE: u32 = 16;
const K_STATE: u32 = 32;
const K_SIZE: u32 = 64;
const K_REAL_SIZE: u32 = 128;
const K_SETTINGS: u32 = 256;

/// Which schema keys a dict has, in one pass (this runs once per trace entry).
fn key_bits(items: &[(Value, Value)]) -> u32 {
    let mut bits = 0;
    for (k, _) in items {
        bits |= match k.as_str() {
            Some("filename") => K_FILENAME,
            Some("name") => K_NAME,
            Some("line") => K_LINE,
            Some("action") => K_ACTION,
            Some("total_size") => K_TOTAL_SIZE,
            Some("state") => K_STATE,
            Some("size") => K_SIZE,
            Some("real_size") => K_REAL_SIZE,
            Some("expandable_segments" | "PYTORCH_CUDA_ALLOC_CONF" | "max_split_size") => {
                K_SETTINGS
            }
            _ => 0,
        };
    }
    bits
}

fn is_typed_shape(items: &[(Value, Value)]) -> bool {
    let bits = key_bits(items);
    let all = |k: u32| bits & k == k;
    all(K_FILENAME | K_NAME | K_LINE)
        || all(K_ACTION)
        || all(K_TOTAL_SIZE)
        || all(K_STATE | K_SIZE)
        || all(K_REAL_SIZE)
}

fn get<'a>(items: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    items
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn take(items: &mut [(Value, Value)], key: &str) -> Option<Value> {
    items
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| std::mem::take(v))
}

fn take_str(items: &mut [(Value, Value)], key: &str) -> Option<Rc<String>> {
    match take(items, key) {
        Some(Value::Str(s)) => Some(s),
        _ => None,
    }
}

fn trace_entry(items: &[(Value, Value)]) -> TraceEntry {
    let (mut action, mut addr, mut size, mut stream) = (Action::Other, 0, 0, 0);
    let (mut time_us, mut device_free, mut stack) = (None, None, StackId::EMPTY);
    for (k, v) in items {
        match k.as_str() {
            Some("action") => action = v.as_str().map_or(Action::Other, Action::parse),
            Some("addr") => addr = v.as_u64().unwrap_or(0),
            Some("size") => size = v.as_u64().unwrap_or(0),
            Some("stream") => stream = v.as_i64().unwrap_or(0),
            Some("time_us") => time_us = v.as_i64(),
            Some("device_free") => device_free = v.as_u64(),
            Some("frames") => stack = v.stack(),
            _ => {}
        }
    }
    TraceEntry::new(action, addr, size, stream, time_us, device_free, stack)
}

fn settings(items: &[(Value, Value)]) -> AllocatorSettings {
    AllocatorSettings {
        alloc_conf: get(items, "PYTORCH_CUDA_ALLOC_CONF")
            .and_then(Value::as_str)
            .map(str::to_owned),
        expandable_segments: get(items, "expandable_segments")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        max_split_size: get(items, "max_split_size")
            .and_then(Value::as_i64)
            .and_then(|v| u64::try_from(v).ok()),
        garbage_collection_threshold: get(items, "garbage_collection_threshold")
            .and_then(Value::as_f64),
        entries: items
            .iter()
            .take(64)
            .map(|(k, v)| (k.rendered(), v.rendered()))
            .collect(),
    }
}

fn annotation(items: &[(Value, Value)]) -> Annotation {
    Annotation {
        device: get(items, "device").and_then(Value::as_i64),
        time_us: get(items, "time_us").and_then(Value::as_i64),
        fields: items
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), Some("device" | "time_us")))
            .take(32)
            .map(|(k, v)| (k.rendered(), v.rendered()))
            .collect(),
    }
}

/// LONG1/LONG4 payload: little-endian two's complement.
fn decode_long(b: &[u8]) -> Value {
    if b.is_empty() {
        return Value::Int(0);
    }
    let negative = b[b.len() - 1] & 0x80 != 0;
    if b.len() <= 8 {
        let mut buf = if negative { [0xffu8; 8] } else { [0u8; 8] };
        buf[..b.len()].copy_from_slice(b);
        return Value::Int(i64::from_le_bytes(buf));
    }
    let (low, high) = b.split_at(8);
    let fill = if negative { 0xff } else { 0 };
    if high.iter().all(|&x| x == fill) {
        let v = u64::from_le_bytes([
            low[0], low[1], low[2], low[3], low[4], low[5], low[6], low[7],
        ]);
        if !negative {
            return match i64::try_from(v) {
                Ok(i) => Value::Int(i),
                Err(_) => Value::UInt(v),
            };
        }
        let i = i64::from_ne_bytes(v.to_ne_bytes());
        if i < 0 {
            return Value::Int(i);
        }
    }
    Value::BigInt
}

/// Opcodes that import, call or build objects, or reach outside the stream.
fn forbidden_name(op: u8) -> Option<&'static str> {
    Some(match op {
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_value_is_two_words() {
        assert_eq!(std::mem::size_of::<super::Value>(), 16);
        assert_eq!(std::mem::size_of::<crate::TraceEntry>(), 48);
    }
}
