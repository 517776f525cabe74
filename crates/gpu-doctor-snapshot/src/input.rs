//! A buffered byte source that knows its offset and, for files, how much is left, so a
//! length prefix can be checked against the file before anything is allocated.

use crate::SnapshotError;
use std::io::Read;

const BUF_SIZE: usize = 1 << 20;
/// How often (in bytes) the progress callback is told where we are.
const PROGRESS_STEP: u64 = 1 << 20;

pub(crate) struct Input<'p, R: Read> {
    reader: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    total: Option<u64>,
    eof: bool,
    progress: &'p mut dyn FnMut(u64),
    next_progress: u64,
}

impl<'p, R: Read> Input<'p, R> {
    pub(crate) fn new(reader: R, total: Option<u64>, progress: &'p mut dyn FnMut(u64)) -> Self {
        Input {
            reader,
            buf: vec![0; BUF_SIZE].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
            total,
            eof: false,
            progress,
            next_progress: PROGRESS_STEP,
        }
    }

    /// Offset of the next byte to be read.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left in the file, when its length is known.
    pub(crate) fn remaining(&self) -> Option<u64> {
        self.total.map(|t| t.saturating_sub(self.offset()))
    }

    /// Refills so that at least `want` bytes (at most the buffer size) are buffered, or EOF.
    fn fill(&mut self, want: usize) -> Result<(), SnapshotError> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end < want && !self.eof {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(SnapshotError::Io(e)),
            }
        }
        let at = self.base + self.end as u64;
        if at >= self.next_progress {
            (self.progress)(at);
            self.next_progress = at + PROGRESS_STEP;
        }
        Ok(())
    }

    /// The next byte, or `None` at the end of the input.
    // Inlined with the refill out of line: this runs once per opcode, hundreds of millions
    // of times for a big snapshot.
    #[inline]
    pub(crate) fn next_byte(&mut self) -> Result<Option<u8>, SnapshotError> {
        if self.pos == self.end {
            return self.next_byte_after_fill();
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(Some(b))
    }

    #[cold]
    fn next_byte_after_fill(&mut self) -> Result<Option<u8>, SnapshotError> {
        self.fill(1)?;
        if self.pos == self.end {
            return Ok(None);
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(Some(b))
    }

    #[inline]
    pub(crate) fn byte(&mut self) -> Result<u8, SnapshotError> {
        match self.next_byte()? {
            Some(b) => Ok(b),
            None => Err(SnapshotError::Truncated {
                offset: self.offset(),
            }),
        }
    }

    /// `n` bytes (n ≤ 1 MiB) as a slice into the buffer.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&[u8], SnapshotError> {
        debug_assert!(n <= BUF_SIZE);
        if self.end - self.pos < n {
            self.fill(n)?;
            if self.end - self.pos < n {
                return Err(SnapshotError::Truncated {
                    offset: self.base + self.end as u64,
                });
            }
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], SnapshotError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    /// Checks a length prefix read at `offset` against what is left and against `limit`,
    /// before anything is allocated for it.
    pub(crate) fn check_len(
        &self,
        offset: u64,
        claimed: u64,
        limit: u64,
    ) -> Result<usize, SnapshotError> {
        if let Some(remaining) = self.remaining()
            && claimed > remaining
        {
            return Err(SnapshotError::LengthBeyondEnd {
                offset,
                claimed,
                remaining,
            });
        }
        if claimed > limit {
            return Err(SnapshotError::TooLarge {
                offset,
                claimed,
                limit,
            });
        }
        usize::try_from(claimed).map_err(|_| SnapshotError::TooLarge {
            offset,
            claimed,
            limit,
        })
    }

    /// Reads `n` bytes (already checked by [`Input::check_len`]) and hands them to `f`.
    pub(crate) fn with_bytes<T>(
        &mut self,
        n: usize,
        f: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, SnapshotError> {
        if n <= BUF_SIZE {
            return Ok(f(self.bytes(n)?));
        }
        // Longer than the buffer: grow a vector only as data actually arrives.
        let mut v = Vec::new();
        let mut left = n;
        while left > 0 {
            let chunk = left.min(BUF_SIZE);
            v.extend_from_slice(self.bytes(chunk)?);
            left -= chunk;
        }
        Ok(f(&v))
    }

    /// Skips `n` bytes (already checked).
    pub(crate) fn skip(&mut self, n: usize) -> Result<(), SnapshotError> {
        let mut left = n;
        while left > 0 {
            let chunk = left.min(BUF_SIZE);
            self.bytes(chunk)?;
            left -= chunk;
        }
        Ok(())
    }

    /// A newline-terminated line of at most `max` bytes (for GLOBAL's operands, which are
    /// only read to name them in the refusal).
    pub(crate) fn short_line(&mut self, max: usize) -> String {
        let mut out = Vec::new();
        while out.len() < max {
            match self.next_byte() {
                Ok(Some(b'\n') | None) | Err(_) => break,
                Ok(Some(b)) => out.push(b),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}
