//! Recordings: a documented NDJSON file (see `docs/recording.md`).
//!
//! The first line is a [`RecordingHeader`] (schema version, inventory, driver); every line
//! after it is a sample or an event. Each line is written with one `write` and flushed at
//! once, so a recorder killed at any moment leaves a file whose every complete line reads
//! back. Replay streams the file line by line: memory does not grow with its length.

use crate::{GpuSource, SourceError};
use gpu_doctor_model::{GpuEvent, Inventory, SCHEMA_VERSION, Sample};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// A recording line longer than this is corrupt: even 64 GPUs with hundreds of processes
/// write well under it, and a bound keeps a garbage file from eating memory.
const MAX_LINE_BYTES: usize = 16 << 20;

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingHeader {
    pub schema_version: u32,
    /// `gpu-doctor <version>` that wrote it.
    pub tool: String,
    pub hostname: Option<String>,
    pub started_ms: u64,
    pub interval_ms: u64,
    pub inventory: Inventory,
}

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordLine {
    Header(RecordingHeader),
    Sample(Sample),
    Event(GpuEvent),
}

/// Writes a recording line by line, flushing each.
pub struct RecordingWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> RecordingWriter<W> {
    /// Starts a recording by writing its header.
    pub fn new(out: W, header: RecordingHeader) -> std::io::Result<Self> {
        let mut writer = RecordingWriter {
            out,
            buf: Vec::with_capacity(4096),
        };
        writer.write_line(&RecordLine::Header(header))?;
        Ok(writer)
    }

    pub fn write_sample(&mut self, sample: &Sample) -> std::io::Result<()> {
        self.write_line(&RecordLine::Sample(sample.clone()))
    }

    pub fn write_event(&mut self, event: &GpuEvent) -> std::io::Result<()> {
        self.write_line(&RecordLine::Event(event.clone()))
    }

    fn write_line(&mut self, line: &RecordLine) -> std::io::Result<()> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, line)?;
        self.buf.push(b'\n');
        // One write per line, then flush: a kill can cut at most the line being written.
        self.out.write_all(&self.buf)?;
        self.out.flush()
    }
}

/// Plays a recording back as a [`GpuSource`]: each `sample()` returns the next sample, and
/// `drain_events()` the events written before it.
pub struct ReplaySource {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    line_no: u64,
    header: RecordingHeader,
    events: VecDeque<GpuEvent>,
    line: Vec<u8>,
}

impl ReplaySource {
    pub fn open(path: &Path) -> Result<Self, SourceError> {
        let file = File::open(path).map_err(|e| SourceError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::from_reader(path, Box::new(BufReader::with_capacity(1 << 16, file)))
    }

    /// Reads a recording from any reader; `path` names it in errors.
    pub fn from_reader(path: &Path, reader: Box<dyn BufRead + Send>) -> Result<Self, SourceError> {
        let mut source = ReplaySource {
            path: path.to_owned(),
            reader,
            line_no: 0,
            header: RecordingHeader {
                schema_version: 0,
                tool: String::new(),
                hostname: None,
                started_ms: 0,
                interval_ms: 0,
                inventory: Inventory::default(),
            },
            events: VecDeque::new(),
            line: Vec::new(),
        };
        match source.next_line()? {
            Some(RecordLine::Header(header)) => {
                if header.schema_version > SCHEMA_VERSION {
                    return Err(source.corrupt(format!(
                        "schema version {} is newer than this gpu-doctor understands ({SCHEMA_VERSION}); upgrade gpu-doctor",
                        header.schema_version
                    )));
                }
                source.header = header;
                Ok(source)
            }
            Some(_) => Err(source.corrupt("the first line is not a recording header".into())),
            None => Err(source.corrupt("the file is empty".into())),
        }
    }

    pub fn header(&self) -> &RecordingHeader {
        &self.header
    }

    fn corrupt(&self, reason: String) -> SourceError {
        SourceError::Corrupt {
            path: self.path.display().to_string(),
            line: self.line_no.max(1),
            reason,
        }
    }

    /// The next parsed line, or `None` at a clean end of file.
    fn next_line(&mut self) -> Result<Option<RecordLine>, SourceError> {
        loop {
            self.line.clear();
            let n = Read::take(&mut self.reader, MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .map_err(|e| SourceError::Io {
                    path: self.path.display().to_string(),
                    reason: e.to_string(),
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            if self.line.len() > MAX_LINE_BYTES {
                return Err(self.corrupt(format!("line longer than {MAX_LINE_BYTES} bytes")));
            }
            let complete = self.line.last() == Some(&b'\n');
            let text = self.line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            return match serde_json::from_slice::<RecordLine>(text) {
                Ok(line) => Ok(Some(line)),
                Err(_) if !complete => Err(self.corrupt(
                    "the last line is cut short (the recorder was stopped mid-write?)".into(),
                )),
                Err(e) => Err(self.corrupt(e.to_string())),
            };
        }
    }
}

impl GpuSource for ReplaySource {
    fn inventory(&mut self) -> Result<Inventory, SourceError> {
        Ok(self.header.inventory.clone())
    }

    fn sample(&mut self) -> Result<Sample, SourceError> {
        loop {
            match self.next_line()? {
                Some(RecordLine::Sample(sample)) => return Ok(sample),
                Some(RecordLine::Event(event)) => self.events.push_back(event),
                Some(RecordLine::Header(_)) => {
                    return Err(self.corrupt("a second header in the middle of the file".into()));
                }
                None => return Err(SourceError::Exhausted),
            }
        }
    }

    fn drain_events(&mut self) -> Result<Vec<GpuEvent>, SourceError> {
        Ok(self.events.drain(..).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::{DeviceSample, GpuEventKind, GpuIndex, Reading};

    fn header() -> RecordingHeader {
        RecordingHeader {
            schema_version: SCHEMA_VERSION,
            tool: "gpu-doctor test".into(),
            hostname: Some("host".into()),
            started_ms: 1000,
            interval_ms: 100,
            inventory: Inventory::default(),
        }
    }

    fn sample(t: u64, used: u64) -> Sample {
        Sample {
            timestamp_ms: t,
            devices: vec![DeviceSample {
                index: GpuIndex(0),
                memory_used_bytes: Reading::Value(used),
                ..DeviceSample::default()
            }],
            processes: vec![],
        }
    }

    fn write(samples: &[Sample], events: &[GpuEvent]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = RecordingWriter::new(&mut out, header()).unwrap();
        for e in events {
            w.write_event(e).unwrap();
        }
        for s in samples {
            w.write_sample(s).unwrap();
        }
        out
    }

    fn replay(bytes: Vec<u8>) -> Result<ReplaySource, SourceError> {
        ReplaySource::from_reader(
            Path::new("rec.ndjson"),
            Box::new(std::io::Cursor::new(bytes)),
        )
    }

    #[test]
    fn round_trip() {
        let samples = [sample(1000, 1), sample(1100, 2)];
        let event = GpuEvent {
            timestamp_ms: 1050,
            gpu: GpuIndex(0),
            kind: GpuEventKind::Xid {
                xid: 79,
                detail: None,
            },
        };
        let mut src = replay(write(&samples, std::slice::from_ref(&event))).unwrap();
        assert_eq!(src.header(), &header());
        assert_eq!(src.sample().unwrap(), samples[0]);
        assert_eq!(src.drain_events().unwrap(), vec![event]);
        assert_eq!(src.sample().unwrap(), samples[1]);
        assert!(matches!(src.sample(), Err(SourceError::Exhausted)));
    }

    #[test]
    fn truncated_last_line_names_the_line() {
        let mut bytes = write(&[sample(1000, 1), sample(1100, 2)], &[]);
        bytes.truncate(bytes.len() - 10);
        let mut src = replay(bytes).unwrap();
        src.sample().unwrap();
        let err = src.sample().unwrap_err();
        assert_eq!(
            err.to_string(),
            "recording rec.ndjson, line 3: the last line is cut short (the recorder was stopped mid-write?)"
        );
    }

    #[test]
    fn garbage_is_a_clear_error() {
        let err = replay(b"\x00\xffnot json\n".to_vec()).err().unwrap();
        assert!(
            err.to_string()
                .starts_with("recording rec.ndjson, line 1: "),
            "{err}"
        );
        let err = replay(Vec::new()).err().unwrap();
        assert_eq!(
            err.to_string(),
            "recording rec.ndjson, line 1: the file is empty"
        );
    }
}
