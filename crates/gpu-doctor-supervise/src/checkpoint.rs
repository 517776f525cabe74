//! Finding the newest *complete* checkpoint to resume from.
//!
//! A checkpoint counts as complete when all of these hold:
//! - its name does not mark it as in progress (`*.tmp`, `*.part`, `*.partial`,
//!   `*.incomplete`, `*.lock`, or a hidden `.name`): jobs that write to a temporary name and
//!   rename at the end (the safe convention, and what `torch.save` users are told to do) never
//!   show a half file under the final name;
//! - it is not empty, and its size and modification time are the same across two looks
//!   `settle` apart;
//! - no process has it open for writing (from `/proc/*/fd` and `fdinfo`, on Linux);
//! - its format, when recognised, is whole: a zip archive (what `torch.save` writes since
//!   PyTorch 1.6) must end in its end-of-central-directory record, and a `.safetensors` file
//!   must be as long as its header says. A job killed in the middle of `torch.save` leaves a
//!   file that is stable and closed but cut short; this check is what catches it.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// At most this many files are considered, newest first, so a glob over a huge folder stays cheap.
const MAX_CANDIDATES: usize = 64;
/// A zip's end record sits in the last 22 + 65535 bytes.
const ZIP_TAIL: u64 = 22 + 65_535;
/// A safetensors header larger than this is not believed.
const MAX_SAFETENSORS_HEADER: u64 = 100 << 20;

/// Why a checkpoint was passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incomplete {
    TemporaryName,
    Empty,
    StillChanging,
    OpenForWriting,
    TruncatedZip,
    TruncatedSafetensors,
    Unreadable,
}

impl Incomplete {
    pub fn describe(self) -> &'static str {
        match self {
            Incomplete::TemporaryName => "has a temporary name",
            Incomplete::Empty => "is empty",
            Incomplete::StillChanging => "is still changing",
            Incomplete::OpenForWriting => "is open for writing",
            Incomplete::TruncatedZip => "is a zip archive without its end record (cut short)",
            Incomplete::TruncatedSafetensors => "is shorter than its safetensors header says",
            Incomplete::Unreadable => "cannot be read",
        }
    }
}

/// The checkpoint chosen, and the newer ones passed over with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckpointChoice {
    pub chosen: Option<PathBuf>,
    pub skipped: Vec<(PathBuf, Incomplete)>,
}

/// Why the pattern could not be used.
#[derive(Debug, thiserror::Error)]
#[error("bad --checkpoint-glob `{pattern}`: {reason}")]
pub struct GlobError {
    pub pattern: String,
    pub reason: String,
}

impl GlobError {
    pub fn hint(&self) -> &'static str {
        "use a shell-style pattern such as 'ckpt/*.pt' or 'out/**/checkpoint-*.safetensors', in quotes"
    }
}

/// Checks that a pattern parses, before the first attempt runs.
pub fn validate(pattern: &str) -> Result<(), GlobError> {
    glob::Pattern::new(pattern)
        .map(|_| ())
        .map_err(|e| GlobError {
            pattern: pattern.to_owned(),
            reason: e.to_string(),
        })
}

fn temporary_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.starts_with('.')
        || [
            ".tmp",
            ".temp",
            ".part",
            ".partial",
            ".incomplete",
            ".lock",
            "~",
        ]
        .iter()
        .any(|s| name.ends_with(s))
}

/// Checks the formats we know are whole. Unknown formats pass.
fn structurally_complete(path: &Path, size: u64) -> Result<(), Incomplete> {
    let mut file = File::open(path).map_err(|_| Incomplete::Unreadable)?;
    let mut magic = [0u8; 4];
    let got = file.read(&mut magic).map_err(|_| Incomplete::Unreadable)?;
    if got == 4 && &magic == b"PK\x03\x04" {
        return zip_complete(&mut file, size);
    }
    let safetensors = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"));
    if safetensors {
        return safetensors_complete(&mut file, size);
    }
    Ok(())
}

fn zip_complete(file: &mut File, size: u64) -> Result<(), Incomplete> {
    let tail_len = size.min(ZIP_TAIL);
    file.seek(SeekFrom::Start(size - tail_len))
        .map_err(|_| Incomplete::Unreadable)?;
    let mut tail = Vec::with_capacity(tail_len as usize);
    file.take(tail_len)
        .read_to_end(&mut tail)
        .map_err(|_| Incomplete::Unreadable)?;
    // The end record is 22 bytes plus a comment whose length it states; it must end the file.
    let whole = (0..tail.len().saturating_sub(21)).rev().any(|i| {
        tail[i..].starts_with(b"PK\x05\x06") && {
            let comment = u16::from_le_bytes([tail[i + 20], tail[i + 21]]) as usize;
            i + 22 + comment == tail.len()
        }
    });
    if whole {
        Ok(())
    } else {
        Err(Incomplete::TruncatedZip)
    }
}

fn safetensors_complete(file: &mut File, size: u64) -> Result<(), Incomplete> {
    let mut len = [0u8; 8];
    file.seek(SeekFrom::Start(0))
        .map_err(|_| Incomplete::Unreadable)?;
    file.read_exact(&mut len)
        .map_err(|_| Incomplete::TruncatedSafetensors)?;
    let header_len = u64::from_le_bytes(len);
    if header_len > MAX_SAFETENSORS_HEADER || 8 + header_len > size {
        return Err(Incomplete::TruncatedSafetensors);
    }
    let mut header = Vec::with_capacity(header_len as usize);
    file.take(header_len)
        .read_to_end(&mut header)
        .map_err(|_| Incomplete::Unreadable)?;
    let header: serde_json::Value =
        serde_json::from_slice(&header).map_err(|_| Incomplete::TruncatedSafetensors)?;
    let end = header
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(|t| t.get("data_offsets")?.get(1)?.as_u64())
        .max()
        .unwrap_or(0);
    if 8 + header_len + end <= size {
        Ok(())
    } else {
        Err(Incomplete::TruncatedSafetensors)
    }
}

/// Whether any process has `path` open for writing. Linux only (elsewhere: never).
fn open_for_writing(path: &Path) -> bool {
    let Ok(target) = fs::canonicalize(path) else {
        return false;
    };
    let Ok(procs) = fs::read_dir("/proc") else {
        return false;
    };
    for entry in procs.flatten().take(1 << 16) {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let fd_dir = entry.path().join("fd");
        let Ok(fds) = fs::read_dir(&fd_dir) else {
            continue;
        };
        for fd in fds.flatten().take(1 << 16) {
            if fs::read_link(fd.path()).is_ok_and(|l| l == target) {
                let info = entry.path().join("fdinfo").join(fd.file_name());
                if fdinfo_writable(&fs::read_to_string(info).unwrap_or_default()) {
                    return true;
                }
            }
        }
    }
    false
}

/// `flags:` in `/proc/PID/fdinfo/FD` is octal; the access mode is its low two bits.
fn fdinfo_writable(fdinfo: &str) -> bool {
    fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| flags & 0o3 != 0)
}

fn stat(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// The newest complete checkpoint matching `pattern` (relative to the current directory, as
/// the job sees it). Waits `settle` once to see which candidates are still changing.
pub fn newest_complete(pattern: &str, settle: Duration) -> Result<CheckpointChoice, GlobError> {
    let paths = glob::glob(pattern).map_err(|e| GlobError {
        pattern: pattern.to_owned(),
        reason: e.to_string(),
    })?;
    let mut files: Vec<(PathBuf, u64, SystemTime)> = paths
        .flatten()
        .take(100_000)
        .filter_map(|p| {
            let meta = fs::metadata(&p).ok()?;
            meta.is_file()
                .then(|| (p, meta.len(), meta.modified().ok()))
                .and_then(|(p, len, m)| Some((p, len, m?)))
        })
        .collect();
    // Newest first; the name breaks ties so the order is stable.
    files.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| b.0.cmp(&a.0)));
    files.truncate(MAX_CANDIDATES);

    let mut choice = CheckpointChoice::default();
    let mut candidates = Vec::new();
    for (path, size, modified) in files {
        let verdict = if temporary_name(&path) {
            Err(Incomplete::TemporaryName)
        } else if size == 0 {
            Err(Incomplete::Empty)
        } else if open_for_writing(&path) {
            Err(Incomplete::OpenForWriting)
        } else {
            structurally_complete(&path, size)
        };
        match verdict {
            Ok(()) => candidates.push((path, size, modified)),
            Err(why) => choice.skipped.push((path, why)),
        }
    }
    if !candidates.is_empty() && !settle.is_zero() {
        std::thread::sleep(settle);
    }
    for (path, size, modified) in candidates {
        if stat(&path) == Some((size, modified)) {
            choice.chosen = Some(path);
            break;
        }
        choice.skipped.push((path, Incomplete::StillChanging));
    }
    Ok(choice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_bytes() -> Vec<u8> {
        // A real empty-comment zip holding one stored file "a" with content "x".
        let mut z = Vec::new();
        z.extend_from_slice(b"PK\x03\x04");
        z.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        z.extend_from_slice(&[0; 12]);
        z.extend_from_slice(&[1, 0, 0, 0]);
        z.extend_from_slice(b"ax");
        let cd = z.len();
        z.extend_from_slice(b"PK\x01\x02");
        z.extend_from_slice(&[0; 42]);
        z.extend_from_slice(b"a");
        let cd_len = z.len() - cd;
        z.extend_from_slice(b"PK\x05\x06");
        z.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
        z.extend_from_slice(&(cd_len as u32).to_le_bytes());
        z.extend_from_slice(&(cd as u32).to_le_bytes());
        z.extend_from_slice(&[0, 0]);
        z
    }

    fn write(dir: &Path, name: &str, bytes: &[u8], age_s: u64) -> PathBuf {
        let path = dir.join(name);
        let mut f = File::create(&path).unwrap();
        f.write_all(bytes).unwrap();
        let t = SystemTime::now() - Duration::from_secs(age_s);
        f.set_modified(t).unwrap();
        path
    }

    #[test]
    fn picks_the_newest_whole_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let zip = zip_bytes();
        write(dir.path(), "ckpt-1.pt", &zip, 30);
        let good = write(dir.path(), "ckpt-2.pt", &zip, 20);
        // Cut short: the job died inside torch.save.
        let cut = write(dir.path(), "ckpt-3.pt", &zip[..zip.len() - 10], 10);
        let tmp = write(dir.path(), "ckpt-4.pt.tmp", &zip, 5);
        let empty = write(dir.path(), "ckpt-5.pt", b"", 1);
        let pattern = format!("{}/ckpt-*", dir.path().display());
        let choice = newest_complete(&pattern, Duration::ZERO).unwrap();
        assert_eq!(choice.chosen, Some(good));
        assert_eq!(
            choice.skipped,
            vec![
                (empty, Incomplete::Empty),
                (tmp, Incomplete::TemporaryName),
                (cut, Incomplete::TruncatedZip),
            ]
        );
    }

    #[test]
    fn a_file_open_for_writing_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let old = write(dir.path(), "a.bin", b"old", 30);
        let path = dir.path().join("b.bin");
        let mut writer = File::create(&path).unwrap();
        writer.write_all(b"partial").unwrap();
        let pattern = format!("{}/*.bin", dir.path().display());
        let choice = newest_complete(&pattern, Duration::ZERO).unwrap();
        assert_eq!(choice.chosen, Some(old.clone()));
        assert_eq!(
            choice.skipped,
            vec![(path.clone(), Incomplete::OpenForWriting)]
        );
        drop(writer);
        let choice = newest_complete(&pattern, Duration::ZERO).unwrap();
        assert_eq!(choice.chosen, Some(path));
    }

    #[test]
    fn safetensors_length_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        bytes.extend_from_slice(&[0; 8]);
        let whole = write(dir.path(), "m.safetensors", &bytes, 10);
        assert_eq!(structurally_complete(&whole, bytes.len() as u64), Ok(()));
        let cut = write(dir.path(), "n.safetensors", &bytes[..bytes.len() - 3], 5);
        assert_eq!(
            structurally_complete(&cut, bytes.len() as u64 - 3),
            Err(Incomplete::TruncatedSafetensors)
        );
    }

    #[test]
    fn nothing_matches() {
        let dir = tempfile::tempdir().unwrap();
        let pattern = format!("{}/*.pt", dir.path().display());
        assert_eq!(
            newest_complete(&pattern, Duration::ZERO).unwrap(),
            CheckpointChoice::default()
        );
        assert!(validate("ckpt/[").is_err());
    }

    #[test]
    fn fdinfo_flags() {
        assert!(fdinfo_writable("pos:\t0\nflags:\t0100001\nmnt_id:\t1\n"));
        assert!(fdinfo_writable("flags:\t02\n"));
        assert!(!fdinfo_writable("pos:\t0\nflags:\t0100000\n"));
        assert!(!fdinfo_writable(""));
    }
}
