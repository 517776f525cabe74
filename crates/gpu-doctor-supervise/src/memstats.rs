//! What the injected hook saw inside the job at an out-of-memory error: PyTorch's
//! `torch.cuda.memory_stats()` and the request that failed, read back from the incident folder.
//!
//! The hook writes one `memory_stats-<pid>.json` per process (see `hook/sitecustomize.py`
//! and `docs/run.md`). These files come from the job, so they are untrusted: each is read only
//! up to [`MAX_STATS_FILE`] bytes and at most [`MAX_FILES`] are looked at.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// `memory_stats()` of one device is a few hundred keys; anything larger is not ours.
pub const MAX_STATS_FILE: u64 = 4 << 20;
/// Data-parallel jobs write one file per rank; more than this is not read.
pub const MAX_FILES: usize = 256;

/// Fragmentation is called when memory PyTorch holds but has not handed out is at least the
/// request that failed, and at least this much (a few MiB of slack is normal).
const MIN_FRAGMENTED_BYTES: u64 = 256 << 20;

/// The allocator's state at the moment of an out-of-memory error, in one process.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AllocatorFacts {
    pub file: PathBuf,
    pub pid: Option<u32>,
    pub device: Option<u32>,
    /// The allocation that failed.
    pub requested_bytes: Option<u64>,
    /// Free memory on the device, as the driver said at the OOM.
    pub device_free_bytes: Option<u64>,
    /// `allocated_bytes.all.current`.
    pub allocated_bytes: u64,
    /// `reserved_bytes.all.current`.
    pub reserved_bytes: u64,
    /// `inactive_split_bytes.all.current`: free slivers inside partly used segments.
    pub inactive_split_bytes: Option<u64>,
    pub num_ooms: Option<u64>,
    /// Whether the allocator ran with expandable segments (from the snapshot's settings or
    /// the environment the hook saw).
    pub expandable_segments: Option<bool>,
    /// The memory snapshot the hook dumped next to it, when there is one.
    pub snapshot: Option<PathBuf>,
    /// Milliseconds since the epoch when the hook wrote it.
    pub time_ms: Option<u64>,
}

impl AllocatorFacts {
    /// Memory PyTorch has reserved from the driver but not handed to a tensor.
    pub fn reserved_unallocated_bytes(&self) -> u64 {
        self.reserved_bytes.saturating_sub(self.allocated_bytes)
    }

    /// Whether the failure is fragmentation: the memory was there, cached by PyTorch, but not
    /// in one piece large enough. With expandable segments already on, the cache can grow in
    /// place, so the same numbers no longer mean fragmentation that a setting can fix.
    pub fn looks_fragmented(&self) -> bool {
        if self.expandable_segments == Some(true) {
            return false;
        }
        let cached = self.reserved_unallocated_bytes();
        cached >= MIN_FRAGMENTED_BYTES && self.requested_bytes.is_none_or(|r| cached >= r)
    }
}

#[derive(Deserialize)]
struct HookFile {
    pid: Option<u32>,
    device: Option<u32>,
    requested_bytes: Option<u64>,
    device_free_bytes: Option<u64>,
    time_ms: Option<u64>,
    expandable_segments: Option<bool>,
    snapshot: Option<String>,
    #[serde(default)]
    memory_stats: BTreeMap<String, serde_json::Value>,
}

fn stat(stats: &BTreeMap<String, serde_json::Value>, key: &str) -> Option<u64> {
    stats.get(key).and_then(serde_json::Value::as_u64)
}

/// Parses one hook file. `None` when it is not one.
pub fn parse(file: &Path, bytes: &[u8]) -> Option<AllocatorFacts> {
    let hook: HookFile = serde_json::from_slice(bytes).ok()?;
    let allocated = stat(&hook.memory_stats, "allocated_bytes.all.current")?;
    let reserved = stat(&hook.memory_stats, "reserved_bytes.all.current")?;
    let dir = file.parent().unwrap_or(Path::new("."));
    Some(AllocatorFacts {
        file: file.to_owned(),
        pid: hook.pid,
        device: hook.device,
        requested_bytes: hook.requested_bytes,
        device_free_bytes: hook.device_free_bytes,
        allocated_bytes: allocated,
        reserved_bytes: reserved,
        inactive_split_bytes: stat(&hook.memory_stats, "inactive_split_bytes.all.current"),
        num_ooms: stat(&hook.memory_stats, "num_ooms"),
        expandable_segments: hook.expandable_segments,
        // Only a plain file name next to the stats file is followed.
        snapshot: hook
            .snapshot
            .filter(|s| !s.contains('/') && !s.contains(".."))
            .map(|s| dir.join(s))
            .filter(|p| p.is_file()),
        time_ms: hook.time_ms,
    })
}

/// Every hook file in an attempt's incident folder, newest first.
pub fn read_incident_dir(dir: &Path) -> Vec<AllocatorFacts> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<AllocatorFacts> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("memory_stats") && name.ends_with(".json")
        })
        .take(MAX_FILES)
        .filter_map(|e| {
            let mut bytes = Vec::new();
            fs::File::open(e.path())
                .ok()?
                .take(MAX_STATS_FILE)
                .read_to_end(&mut bytes)
                .ok()?;
            parse(&e.path(), &bytes)
        })
        .collect();
    out.sort_by(|a, b| b.time_ms.cmp(&a.time_ms).then_with(|| a.file.cmp(&b.file)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn facts(reserved: u64, allocated: u64, requested: Option<u64>) -> AllocatorFacts {
        AllocatorFacts {
            reserved_bytes: reserved,
            allocated_bytes: allocated,
            requested_bytes: requested,
            ..AllocatorFacts::default()
        }
    }

    #[test]
    fn fragmentation_table() {
        // The numbers of testdata/h200/err-frag-oom-real.txt and err-oom.txt.
        let cases = [
            (facts(138_512_695_296, 81_159_782_400, Some(12 * GIB)), true),
            (facts(120 * GIB, 120 * GIB, Some(200 * GIB)), false),
            (facts(67 * GIB, 64 * GIB, Some(80 * GIB)), false),
            (facts(10 * GIB, 2 * GIB, None), true),
            (facts(GIB, GIB - (100 << 20), None), false),
        ];
        for (f, want) in cases {
            assert_eq!(f.looks_fragmented(), want, "{f:?}");
        }
        let mut on = facts(138_512_695_296, 81_159_782_400, Some(12 * GIB));
        on.expandable_segments = Some(true);
        assert!(!on.looks_fragmented());
    }

    #[test]
    fn reads_hook_files_and_ignores_garbage() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("snapshot-7.pickle"), b"x").unwrap();
        fs::write(
            dir.path().join("memory_stats-7.json"),
            r#"{"schema_version":1,"pid":7,"device":0,"requested_bytes":12884901888,
               "time_ms":5,"snapshot":"snapshot-7.pickle","expandable_segments":false,
               "memory_stats":{"allocated_bytes.all.current":81159782400,
                               "reserved_bytes.all.current":138512695296,
                               "inactive_split_bytes.all.current":1000,"num_ooms":1}}"#,
        )
        .unwrap();
        fs::write(dir.path().join("memory_stats-8.json"), b"\xff not json").unwrap();
        fs::write(
            dir.path().join("memory_stats-9.json"),
            r#"{"pid":9,"snapshot":"../../etc/passwd","memory_stats":{}}"#,
        )
        .unwrap();
        let all = read_incident_dir(dir.path());
        assert_eq!(all.len(), 1);
        let f = &all[0];
        assert_eq!(f.pid, Some(7));
        assert_eq!(
            f.reserved_unallocated_bytes(),
            138_512_695_296 - 81_159_782_400
        );
        assert_eq!(f.snapshot, Some(dir.path().join("snapshot-7.pickle")));
        assert!(f.looks_fragmented());
        assert!(read_incident_dir(&dir.path().join("missing")).is_empty());
    }
}
