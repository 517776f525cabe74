//! Whether the CUDA Multi-Process Service runs here, and with which limits.
//!
//! MPS is found the way `ps` would find it: `/proc/<pid>/comm` is `nvidia-cuda-mps` (the
//! kernel cuts names at 15 characters, so the control daemon and the server look alike
//! there) and `argv[0]` tells them apart. The daemon's and servers' environment (readable by
//! root or their owner) gives the pipe directory and the default limits every client gets:
//! `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT` and `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`.

use serde::{Deserialize, Serialize};
use std::io::Read as _;
use std::path::Path;

/// `comm` of both MPS programs (cut at 15 characters).
const MPS_COMM: &str = "nvidia-cuda-mps";
/// The most of a command line read to classify a process.
const MAX_CMDLINE_BYTES: u64 = 4096;
/// The most of an environment read (a daemon's is a few KiB).
const MAX_ENVIRON_BYTES: u64 = 256 * 1024;
/// The most `/proc` entries looked at.
const MAX_PIDS: usize = 1 << 20;

fn read_bounded(path: &Path, max: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(max)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// `NAME=value` pairs of a NUL-separated environment.
fn parse_environ(bytes: &[u8]) -> Vec<(String, String)> {
    bytes
        .split(|&b| b == 0)
        .filter_map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            let (k, v) = kv.split_once('=')?;
            Some((k.to_owned(), v.to_owned()))
        })
        .collect()
}

/// What runs of MPS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct MpsStatus {
    /// Pids of `nvidia-cuda-mps-control` (the daemon clients connect to).
    pub control_pids: Vec<u32>,
    /// Pids of `nvidia-cuda-mps-server` (one per user with clients).
    pub server_pids: Vec<u32>,
    /// `CUDA_MPS_PIPE_DIRECTORY` of the daemon (default `/tmp/nvidia-mps` when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipe_directory: Option<String>,
    /// `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT` the daemon or a server was started with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned_device_mem_limit: Option<String>,
    /// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` the daemon or a server was started with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_thread_percentage: Option<String>,
    /// Whether any MPS process's environment could be read (root, or the daemon's owner):
    /// when not, the three settings above are unknown, not unset.
    pub environ_readable: bool,
}

impl MpsStatus {
    /// Whether a control daemon runs: then every CUDA program on the machine becomes an MPS
    /// client.
    pub fn running(&self) -> bool {
        !self.control_pids.is_empty() || !self.server_pids.is_empty()
    }

    /// One line for `status`: `MPS: control daemon pid 812, 1 server (pid 901); memory
    /// limit 0=40G; active threads 50%`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match self.control_pids.as_slice() {
            [] => parts.push("no control daemon".to_owned()),
            [pid] => parts.push(format!("control daemon pid {pid}")),
            pids => parts.push(format!(
                "{} control daemons (pids {})",
                pids.len(),
                join(pids)
            )),
        }
        match self.server_pids.as_slice() {
            [] => parts.push("no server yet".to_owned()),
            [pid] => parts.push(format!("1 server (pid {pid})")),
            pids => parts.push(format!("{} servers (pids {})", pids.len(), join(pids))),
        }
        if self.environ_readable {
            parts.push(format!(
                "memory limit {}",
                self.pinned_device_mem_limit.as_deref().unwrap_or("none")
            ));
            parts.push(format!(
                "active threads {}",
                self.active_thread_percentage
                    .as_deref()
                    .map_or_else(|| "100%".to_owned(), |p| format!("{p}%"))
            ));
        } else {
            parts.push("limits unknown (its environment is not readable; run as root)".into());
        }
        format!("MPS: {}", parts.join("; "))
    }
}

fn join(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which MPS program a process is, from its `comm` and `argv[0]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Control,
    Server,
}

/// Classifies a process by `comm` and its NUL-separated command line.
pub fn classify(comm: &str, cmdline: &[u8]) -> Option<Role> {
    if comm.trim_end() != MPS_COMM {
        return None;
    }
    let argv0 = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    let argv0 = String::from_utf8_lossy(argv0);
    let name = argv0.rsplit('/').next().unwrap_or_default();
    if name.starts_with("nvidia-cuda-mps-control") {
        Some(Role::Control)
    } else if name.starts_with("nvidia-cuda-mps-server") {
        Some(Role::Server)
    } else {
        None
    }
}

/// Looks for MPS in the `/proc` at `proc_dir`.
pub fn detect(proc_dir: &Path) -> MpsStatus {
    let mut status = MpsStatus::default();
    let mut pids: Vec<u32> = std::fs::read_dir(proc_dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
                .take(MAX_PIDS)
                .collect()
        })
        .unwrap_or_default();
    pids.sort_unstable();
    for pid in pids {
        let dir = proc_dir.join(pid.to_string());
        let Some(comm) = read_bounded(&dir.join("comm"), 64) else {
            continue;
        };
        let comm = String::from_utf8_lossy(&comm);
        if comm.trim_end() != MPS_COMM {
            continue;
        }
        let cmdline = read_bounded(&dir.join("cmdline"), MAX_CMDLINE_BYTES).unwrap_or_default();
        let Some(role) = classify(&comm, &cmdline) else {
            continue;
        };
        match role {
            Role::Control => status.control_pids.push(pid),
            Role::Server => status.server_pids.push(pid),
        }
        if let Some(env) =
            read_bounded(&dir.join("environ"), MAX_ENVIRON_BYTES).map(|b| parse_environ(&b))
        {
            status.environ_readable = true;
            for (name, value) in env {
                let slot = match name.as_str() {
                    "CUDA_MPS_PIPE_DIRECTORY" if role == Role::Control => {
                        &mut status.pipe_directory
                    }
                    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT" => &mut status.pinned_device_mem_limit,
                    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" => &mut status.active_thread_percentage,
                    _ => continue,
                };
                // The daemon's setting is listed first (it has the lower pid in practice);
                // keep the first one found.
                if slot.is_none() {
                    *slot = Some(value);
                }
            }
        }
    }
    if status.environ_readable && !status.control_pids.is_empty() && status.pipe_directory.is_none()
    {
        status.pipe_directory = Some("/tmp/nvidia-mps".into());
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(dir: &std::path::Path, pid: u32, comm: &str, argv0: &str, environ: Option<&str>) {
        let d = dir.join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(d.join("cmdline"), format!("{argv0}\0-d\0")).unwrap();
        if let Some(env) = environ {
            std::fs::write(d.join("environ"), env.replace(';', "\0")).unwrap();
        }
    }

    #[test]
    fn classify_by_argv0() {
        assert_eq!(
            classify(
                "nvidia-cuda-mps\n",
                b"/usr/bin/nvidia-cuda-mps-control\0-d\0"
            ),
            Some(Role::Control)
        );
        assert_eq!(
            classify("nvidia-cuda-mps", b"nvidia-cuda-mps-server\0"),
            Some(Role::Server)
        );
        assert_eq!(classify("python3", b"nvidia-cuda-mps-server\0"), None);
        assert_eq!(classify("nvidia-cuda-mps", b"/opt/x/other\0"), None);
    }

    #[test]
    fn nothing_running() {
        let dir = tempfile::tempdir().unwrap();
        fake(dir.path(), 100, "python3", "python3", None);
        let s = detect(dir.path());
        assert!(!s.running());
        assert_eq!(s, MpsStatus::default());
    }

    #[test]
    fn daemon_and_server_with_limits() {
        let dir = tempfile::tempdir().unwrap();
        fake(
            dir.path(),
            812,
            "nvidia-cuda-mps",
            "/usr/bin/nvidia-cuda-mps-control",
            Some(
                "PATH=/usr/bin;CUDA_MPS_PIPE_DIRECTORY=/run/mps;CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=40G;CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50;",
            ),
        );
        fake(
            dir.path(),
            901,
            "nvidia-cuda-mps",
            "nvidia-cuda-mps-server",
            None,
        );
        let s = detect(dir.path());
        assert!(s.running());
        assert_eq!(s.control_pids, vec![812]);
        assert_eq!(s.server_pids, vec![901]);
        assert_eq!(s.pipe_directory.as_deref(), Some("/run/mps"));
        assert_eq!(s.pinned_device_mem_limit.as_deref(), Some("0=40G"));
        assert_eq!(
            s.summary(),
            "MPS: control daemon pid 812; 1 server (pid 901); memory limit 0=40G; active threads 50%"
        );
    }

    #[test]
    fn an_unreadable_environment_is_unknown_not_unset() {
        let dir = tempfile::tempdir().unwrap();
        fake(
            dir.path(),
            812,
            "nvidia-cuda-mps",
            "nvidia-cuda-mps-control",
            None,
        );
        let s = detect(dir.path());
        assert!(s.running() && !s.environ_readable);
        assert_eq!(s.pipe_directory, None);
        assert!(
            s.summary()
                .ends_with("limits unknown (its environment is not readable; run as root)")
        );
    }
}
