//! [`Host`]: where the probes look. Every path a probe reads goes through [`Host::path`], so a
//! test (or `check --root DIR`) points the probes at a fake tree in a temporary folder, and
//! every external command goes through [`run_bounded`], so nothing a probe starts can hang
//! `check` or fill its memory.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Most bytes kept from a command's stdout or stderr; the rest is read and dropped.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;
/// Most bytes read from one text file (`/proc` files, headers, `version.json`).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most entries read from one directory, so a huge `lib` folder cannot stall a probe.
pub const MAX_DIR_ENTRIES: usize = 20_000;

/// The machine the probes describe.
#[derive(Debug, Clone)]
pub struct Host {
    /// Prefix for fixed system paths (`/proc`, `/dev`, `/sys`, `/usr/local`, `/etc`); `/`
    /// on a real run. Paths taken from variables (`PATH`, `LD_LIBRARY_PATH`) are used as is.
    pub root: PathBuf,
    /// The environment variables the probes read (the process's own on a real run).
    pub env: BTreeMap<String, String>,
    /// The text of `ldconfig -p`, when it was captured beforehand; `None` runs `ldconfig -p`.
    pub ldconfig: Option<String>,
    /// The interpreter to probe (`--python`); `None` means `python3` from `PATH`.
    pub python: Option<PathBuf>,
    /// Limit for each external command (the framework probes in particular).
    pub timeout: Duration,
    /// Who asks, for the device-node permission check.
    pub identity: Identity,
    /// Where framework probe results are kept between runs; `None` probes afresh every time
    /// and keeps nothing.
    pub probe_cache: Option<PathBuf>,
    /// Probe afresh even when the cache holds a result (and keep the new one).
    pub fresh_probes: bool,
}

/// A user and their groups.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    pub uid: u32,
    pub gids: Vec<u32>,
}

impl Identity {
    /// This process's user and groups, from `/proc/self/status` (no libc needed).
    pub fn current() -> Identity {
        let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let mut id = Identity::default();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("Uid:") {
                id.uid = rest
                    .split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(u32::MAX);
            } else if let Some(rest) = line.strip_prefix("Gid:") {
                if let Some(g) = rest.split_whitespace().nth(1).and_then(|v| v.parse().ok()) {
                    id.gids.push(g);
                }
            } else if let Some(rest) = line.strip_prefix("Groups:") {
                id.gids.extend(
                    rest.split_whitespace()
                        .filter_map(|v| v.parse::<u32>().ok()),
                );
            }
        }
        id
    }
}

impl Host {
    /// The real machine: `/`, this process's environment and identity.
    pub fn system() -> Host {
        Host {
            root: PathBuf::from("/"),
            env: std::env::vars().collect(),
            ldconfig: None,
            python: None,
            timeout: Duration::from_secs(20),
            identity: Identity::current(),
            probe_cache: None,
            fresh_probes: false,
        }
    }

    /// A fixed system path under [`Host::root`].
    pub fn path(&self, absolute: &str) -> PathBuf {
        self.root.join(absolute.trim_start_matches('/'))
    }

    /// Whether the probes look at the real machine (external commands only make sense then).
    pub fn is_real_root(&self) -> bool {
        self.root == Path::new("/")
    }

    pub fn var(&self, name: &str) -> Option<&str> {
        self.env.get(name).map(String::as_str)
    }

    /// The folders of a `:`-separated variable, in order, without empty entries.
    pub fn path_list(&self, name: &str) -> Vec<PathBuf> {
        self.var(name)
            .map(|v| {
                v.split(':')
                    .filter(|s| !s.is_empty())
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The first executable called `name` on `PATH`.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        self.path_list("PATH")
            .into_iter()
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    }
}

pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Reads at most [`MAX_FILE_BYTES`] of a text file, lossily.
pub fn read_text(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The names in a folder (at most [`MAX_DIR_ENTRIES`]), sorted so results are stable.
pub fn list_dir(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .take(MAX_DIR_ENTRIES)
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What a bounded command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Why a command gave nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("could not start `{program}`: {reason}")]
    Spawn { program: String, reason: String },
    #[error("`{program}` did not finish within {seconds:.1} s and was stopped")]
    Timeout { program: String, seconds: f64 },
}

/// Runs a command with a time limit, keeping at most [`MAX_OUTPUT_BYTES`] of each stream.
/// The child is killed when the limit passes.
pub fn run_bounded(mut command: Command, timeout: Duration) -> Result<CommandOutput, RunError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RunError::Spawn {
            program: program.clone(),
            reason: e.to_string(),
        })?;
    // Readers on their own threads: a child that fills one pipe while we wait on the
    // other would otherwise deadlock.
    let out = child
        .stdout
        .take()
        .map(|s| std::thread::spawn(move || drain(s)));
    let err = child
        .stderr
        .take()
        .map(|s| std::thread::spawn(move || drain(s)));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::Timeout {
                    program,
                    seconds: timeout.as_secs_f64(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let join = |h: Option<std::thread::JoinHandle<String>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Ok(CommandOutput {
        status: status.and_then(|s| s.code()),
        stdout: join(out),
        stderr: join(err),
        elapsed: start.elapsed(),
    })
}

fn drain(mut stream: impl Read) -> String {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_past_its_limit_is_stopped() {
        let mut cmd = Command::new("sleep");
        cmd.arg("5");
        let err = run_bounded(cmd, Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, RunError::Timeout { .. }), "{err}");
    }

    #[test]
    fn output_is_kept() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = run_bounded(cmd, Duration::from_secs(5)).unwrap();
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.status, Some(3));
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let err = run_bounded(
            Command::new("/nonexistent/gpu-doctor-test"),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(matches!(err, RunError::Spawn { .. }));
    }
}
