//! The pickle memo, sized for snapshots with millions of trace entries.
//!
//! Pickle memoizes every container and string it writes, so a big snapshot has three memo
//! indices per trace entry (the entry's dict, its `frames` list and a fresh `"N/A"` string for
//! its `compile_context`), and Python keeps every one alive to the end. Here each index costs
//! 4 bytes, a handle that is one of:
//! - empty: the object was used up by its parent and cannot be referenced again;
//! - a stack id, inline: a finished `frames` list;
//! - a frame id, inline: a frame dict, which every trace entry's `frames` list refers to;
//! - a string id, inline: short strings are interned, so a million `"N/A"` are one string;
//! - a slot in a small table holding any other value (containers still being filled).
//!
//! A plain `Vec<Value>` memo would be 16 bytes per index plus a heap string per `"N/A"`, more
//! than half a gigabyte for an 800 MB snapshot.

use crate::model::{FrameId, StackId};
use crate::reader::Value;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// Strings up to this long are interned (keys, actions, states, `"N/A"`, metadata); longer
/// ones (rare: file paths are in frames, which are interned elsewhere) are stored as is.
pub(crate) const MAX_INTERNED: usize = 256;

/// What a memo index refers to, packed in 32 bits: a 2-bit tag and a 30-bit payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Handle(u32);

impl Handle {
    const EMPTY: Handle = Handle(u32::MAX);
    const PAYLOAD: u32 = (1 << 30) - 1;
    const TABLE: u32 = 0;
    const STACK: u32 = 1;
    const STRING: u32 = 2;
    /// Shares its tag with EMPTY (all ones), whose payload no frame id reaches.
    const FRAME: u32 = 3;

    fn new(tag: u32, payload: u32) -> Option<Handle> {
        // The all-ones payload of the last tag is EMPTY; payloads stop one short of it.
        (payload < Self::PAYLOAD).then_some(Handle(tag << 30 | payload))
    }

    fn tag(self) -> u32 {
        self.0 >> 30
    }

    fn payload(self) -> u32 {
        self.0 & Self::PAYLOAD
    }
}

/// Index → value.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    handles: Vec<Handle>,
    table: Vec<Option<Value>>,
    free: Vec<u32>,
    strings: Vec<Rc<String>>,
    string_ids: FxHashMap<Box<str>, u32>,
    string_bytes: u64,
}

/// Why an index could not be stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemoError {
    /// Far beyond the indices stored so far (a hostile file asking for a huge table).
    TooFar,
    /// More distinct live values than a handle can name.
    Full,
}

impl Memo {
    /// How far past the end an index may be stored (`PUT` with a gap is legal pickle).
    const MAX_GAP: usize = 1 << 16;

    /// One past the highest index stored: the index `MEMOIZE` uses next.
    pub(crate) fn next_index(&self) -> usize {
        self.handles.len()
    }

    /// Bytes this memo and its strings take, for the reader's memory bound.
    pub(crate) fn bytes(&self) -> u64 {
        let table = self.handles.capacity() * std::mem::size_of::<Handle>()
            + self.table.capacity() * std::mem::size_of::<Option<Value>>()
            + self.strings.capacity() * 64;
        table as u64 + self.string_bytes
    }

    /// The shared copy of a short string (a new one the first time it is seen); a long
    /// string is returned as a new one, not kept.
    pub(crate) fn intern(&mut self, s: &str) -> Rc<String> {
        if s.len() > MAX_INTERNED {
            return Rc::new(s.to_owned());
        }
        if let Some(&id) = self.string_ids.get(s) {
            return self.strings[id as usize].clone();
        }
        let rc = Rc::new(s.to_owned());
        if let Ok(id) = u32::try_from(self.strings.len()) {
            self.string_bytes += 2 * s.len() as u64;
            self.strings.push(rc.clone());
            self.string_ids.insert(s.into(), id);
        }
        rc
    }

    pub(crate) fn set(&mut self, index: usize, value: Value) -> Result<(), MemoError> {
        if index >= self.handles.len() {
            if index - self.handles.len() > Self::MAX_GAP {
                return Err(MemoError::TooFar);
            }
            self.handles.resize(index + 1, Handle::EMPTY);
        }
        self.clear(index);
        let inline = match &value {
            Value::Stack(id) => Handle::new(Handle::STACK, id.0),
            Value::Frame(id) => Handle::new(Handle::FRAME, id.0),
            Value::Str(s) => self
                .string_ids
                .get(s.as_str())
                .and_then(|&id| Handle::new(Handle::STRING, id)),
            _ => None,
        };
        let handle = if let Some(h) = inline {
            h
        } else {
            let slot = if let Some(s) = self.free.pop() {
                self.table[s as usize] = Some(value);
                s
            } else {
                let s = u32::try_from(self.table.len()).map_err(|_| MemoError::Full)?;
                self.table.push(Some(value));
                s
            };
            Handle::new(Handle::TABLE, slot).ok_or(MemoError::Full)?
        };
        self.handles[index] = handle;
        Ok(())
    }

    pub(crate) fn get(&self, index: usize) -> Option<Value> {
        let h = *self.handles.get(index)?;
        if h == Handle::EMPTY {
            return None;
        }
        match h.tag() {
            Handle::STACK => Some(Value::Stack(StackId(h.payload()))),
            Handle::FRAME => Some(Value::Frame(FrameId(h.payload()))),
            Handle::STRING => Some(Value::Str(self.strings[h.payload() as usize].clone())),
            _ => self.table.get(h.payload() as usize)?.clone(),
        }
    }

    /// Forgets `index`: its object was used up and may not be referenced again.
    pub(crate) fn clear(&mut self, index: usize) {
        let Some(h) = self.handles.get_mut(index) else {
            return;
        };
        let old = std::mem::replace(h, Handle::EMPTY);
        if old != Handle::EMPTY && old.tag() == Handle::TABLE {
            self.table[old.payload() as usize] = None;
            self.free.push(old.payload());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Option<Value>) -> Option<String> {
        match v {
            Some(Value::Str(s)) => Some((*s).clone()),
            _ => None,
        }
    }

    #[test]
    fn stacks_and_short_strings_inline_others_in_the_table() {
        let mut m = Memo::default();
        let action = m.intern("action");
        m.set(0, Value::Str(action)).unwrap();
        m.set(1, Value::Stack(StackId(7))).unwrap();
        m.set(2, Value::Int(5)).unwrap();
        m.set(4, Value::Frame(FrameId(3))).unwrap();
        assert!(matches!(m.get(4), Some(Value::Frame(FrameId(3)))));
        m.clear(4);
        assert_eq!(text(m.get(0)).as_deref(), Some("action"));
        assert!(matches!(m.get(1), Some(Value::Stack(StackId(7)))));
        assert!(matches!(m.get(2), Some(Value::Int(5))));
        assert_eq!(m.table.len(), 1, "only the int is in the table");
        assert_eq!(m.next_index(), 5);
        // A cleared index is gone, and its table slot is reused.
        m.clear(2);
        assert!(m.get(2).is_none());
        m.set(3, Value::Int(6)).unwrap();
        assert_eq!(m.table.len(), 1);
        assert!(m.get(9).is_none());
    }

    #[test]
    fn a_million_equal_strings_are_one() {
        let mut m = Memo::default();
        for i in 0..1_000_000 {
            let s = m.intern("N/A");
            m.set(i, Value::Str(s)).unwrap();
        }
        assert_eq!(m.strings.len(), 1);
        assert!(m.table.is_empty());
        assert!(m.bytes() < 5_000_000, "{}", m.bytes());
        let a = m.get(0).unwrap();
        let b = m.get(999_999).unwrap();
        match (a, b) {
            (Value::Str(a), Value::Str(b)) => assert!(Rc::ptr_eq(&a, &b)),
            _ => panic!("strings expected"),
        }
    }

    #[test]
    fn a_far_index_is_refused_a_small_gap_is_not() {
        let mut m = Memo::default();
        m.set(10, Value::Int(1)).unwrap();
        assert!(m.get(5).is_none());
        assert_eq!(m.set(10 + (1 << 17), Value::Int(2)), Err(MemoError::TooFar));
    }
}
