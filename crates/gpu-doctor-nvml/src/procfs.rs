//! Who a GPU process is: its user, command line and container, from `/proc/<pid>`.
//!
//! NVML only gives a pid and a byte count. This module owns turning that pid into something a
//! person recognises. The parsing is pure functions over strings and bytes (tested on fixture
//! text); [`ProcFs`] does the bounded reads, under a configurable root so tests can point it
//! at a fake tree, and caches each pid's details while the pid stays on a GPU (a process's
//! owner, command line and cgroup do not change under it in practice, and re-reading three
//! files per process per sample would cost more than the NVML calls themselves).

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The longest command line kept, in bytes (a Python job's argv can be many KiB).
pub const MAX_COMMAND_BYTES: usize = 1024;
/// The most read from a cgroup file (a process's cgroup list is a few hundred bytes).
const MAX_CGROUP_BYTES: u64 = 64 * 1024;
/// The most read from the passwd file.
const MAX_PASSWD_BYTES: u64 = 4 * 1024 * 1024;

/// What `/proc` says about one process. Every field is absent when the process is in
/// another pid namespace, already gone, or not ours to read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessDetails {
    pub user: Option<String>,
    pub command: Option<String>,
    pub container: Option<String>,
}

/// Reads process details under a root (`/proc` normally), with a per-pid cache.
#[derive(Debug)]
pub struct ProcFs {
    root: PathBuf,
    passwd: PathBuf,
    users: Option<HashMap<u32, String>>,
    cache: HashMap<u32, ProcessDetails>,
}

impl Default for ProcFs {
    fn default() -> Self {
        ProcFs::new("/proc", "/etc/passwd")
    }
}

impl ProcFs {
    /// Reads processes under `root` and user names from `passwd`.
    pub fn new(root: impl Into<PathBuf>, passwd: impl Into<PathBuf>) -> Self {
        ProcFs {
            root: root.into(),
            passwd: passwd.into(),
            users: None,
            cache: HashMap::new(),
        }
    }

    /// The details of `pid`, from the cache when it was read before.
    pub fn details(&mut self, pid: u32) -> ProcessDetails {
        if let Some(d) = self.cache.get(&pid) {
            return d.clone();
        }
        let details = self.read(pid);
        // A pid that could not be seen at all is not cached: it may be a process that is
        // still starting, and the next sample should try again.
        if details != ProcessDetails::default() {
            self.cache.insert(pid, details.clone());
        }
        details
    }

    /// Forgets every pid not in `live`, so a reused pid is read afresh.
    pub fn retain(&mut self, live: &HashSet<u32>) {
        self.cache.retain(|pid, _| live.contains(pid));
    }

    fn read(&mut self, pid: u32) -> ProcessDetails {
        let dir = self.root.join(pid.to_string());
        let user = uid_of(&dir).map(|uid| self.user_name(uid));
        let command = read_bounded(&dir.join("cmdline"), MAX_COMMAND_BYTES as u64 + 1)
            .and_then(|bytes| format_cmdline(&bytes, MAX_COMMAND_BYTES));
        let container = read_bounded(&dir.join("cgroup"), MAX_CGROUP_BYTES)
            .and_then(|bytes| container_from_cgroup(&String::from_utf8_lossy(&bytes)));
        ProcessDetails {
            user,
            command,
            container,
        }
    }

    fn user_name(&mut self, uid: u32) -> String {
        let passwd = &self.passwd;
        let users = self.users.get_or_insert_with(|| {
            read_bounded(passwd, MAX_PASSWD_BYTES)
                .map(|b| parse_passwd(&String::from_utf8_lossy(&b)))
                .unwrap_or_default()
        });
        users.get(&uid).cloned().unwrap_or_else(|| uid.to_string())
    }
}

#[cfg(unix)]
fn uid_of(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    // The owner of /proc/<pid> is the process's effective uid: one stat, no parsing.
    std::fs::metadata(dir).ok().map(|m| m.uid())
}

#[cfg(not(unix))]
fn uid_of(_dir: &Path) -> Option<u32> {
    None
}

fn read_bounded(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// `name:x:uid:...` lines → uid to name. Lines that do not parse are skipped.
pub fn parse_passwd(text: &str) -> HashMap<u32, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next().filter(|n| !n.is_empty())?;
            let uid = fields.nth(1)?.parse().ok()?;
            Some((uid, name.to_owned()))
        })
        .collect()
}

/// `/proc/<pid>/cmdline` (arguments separated by NUL) → one line joined with spaces, cut at
/// `max` bytes (on a character boundary, marked with `…`). Empty (a kernel thread or a
/// zombie) is `None`.
pub fn format_cmdline(bytes: &[u8], max: usize) -> Option<String> {
    let args: Vec<String> = bytes
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if args.is_empty() {
        return None;
    }
    let mut line = args.join(" ");
    if line.len() > max || bytes.len() > max {
        let mut cut = max.min(line.len());
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    Some(line)
}

/// The container a process runs in, from its `/proc/<pid>/cgroup` text.
///
/// A 64-hex container id is written as Kubernetes writes it in `containerID`:
/// `docker://<id>`, `containerd://<id>`, `cri-o://<id>`, `podman://<id>` (the bare id when
/// the runtime cannot be told). A process in a Kubernetes pod whose container id is not in
/// the path is `k8s-pod://<pod uid>`. `None` when the process is not in a container.
pub fn container_from_cgroup(text: &str) -> Option<String> {
    let mut pod = None;
    for line in text.lines() {
        // `hierarchy-id:controllers:path`; the path may itself contain ':'.
        let Some(path) = line.splitn(3, ':').nth(2) else {
            continue;
        };
        for segment in path.split('/') {
            if let Some(id) = container_segment(segment) {
                return Some(id);
            }
            if pod.is_none() {
                pod = pod_uid(segment);
            }
        }
    }
    pod.map(|uid| format!("k8s-pod://{uid}"))
}

/// A path segment naming a container: `docker-<id>.scope`, `cri-containerd-<id>.scope`,
/// `crio-<id>.scope`, `libpod-<id>.scope`, or a bare `<id>` (cgroup v1 `/docker/<id>`,
/// `/kubepods/.../<id>`).
fn container_segment(segment: &str) -> Option<String> {
    const PREFIXES: [(&str, &str); 5] = [
        ("cri-containerd-", "containerd://"),
        ("docker-", "docker://"),
        ("crio-", "cri-o://"),
        ("libpod-", "podman://"),
        ("containerd-", "containerd://"),
    ];
    let name = segment.strip_suffix(".scope").unwrap_or(segment);
    for (prefix, scheme) in PREFIXES {
        if let Some(id) = name.strip_prefix(prefix)
            && is_container_id(id)
        {
            return Some(format!("{scheme}{id}"));
        }
    }
    is_container_id(name).then(|| name.to_owned())
}

fn is_container_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `pod<uid>` (cgroupfs) or `kubepods-<qos>-pod<uid with _>.slice` (systemd) → the pod uid.
fn pod_uid(segment: &str) -> Option<String> {
    let name = segment.strip_suffix(".slice").unwrap_or(segment);
    let at = name.rfind("pod")?;
    let uid = name[at + 3..].replace('_', "-");
    let is_uid = uid.len() == 36
        && uid.bytes().enumerate().all(|(i, b)| {
            if [8, 13, 18, 23].contains(&i) {
                b == b'-'
            } else {
                b.is_ascii_hexdigit()
            }
        });
    is_uid.then_some(uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f4e8a1c9b2d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f";

    #[test]
    fn cgroup_v1_docker() {
        let text = format!("12:memory:/docker/{ID}\n11:cpu,cpuacct:/docker/{ID}\n");
        assert_eq!(container_from_cgroup(&text), Some(ID.to_owned()));
    }

    #[test]
    fn cgroup_v2_docker_scope() {
        let text = format!("0::/system.slice/docker-{ID}.scope\n");
        assert_eq!(container_from_cgroup(&text), Some(format!("docker://{ID}")));
    }

    #[test]
    fn kubernetes_systemd_containerd() {
        let text = format!(
            "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f6a_4b7c_8d9e_0f1a2b3c4d5e.slice/cri-containerd-{ID}.scope\n"
        );
        assert_eq!(
            container_from_cgroup(&text),
            Some(format!("containerd://{ID}"))
        );
    }

    #[test]
    fn kubernetes_cgroupfs_bare_id_and_pod_only() {
        let text =
            format!("4:devices:/kubepods/burstable/pod1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e/{ID}\n");
        assert_eq!(container_from_cgroup(&text), Some(ID.to_owned()));
        let pod_only = "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1b2c3d4e_5f6a_4b7c_8d9e_0f1a2b3c4d5e.slice\n";
        assert_eq!(
            container_from_cgroup(pod_only),
            Some("k8s-pod://1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e".to_owned())
        );
    }

    #[test]
    fn crio_and_podman() {
        let crio = format!("0::/kubepods.slice/crio-{ID}.scope\n");
        assert_eq!(container_from_cgroup(&crio), Some(format!("cri-o://{ID}")));
        let podman = format!("0::/machine.slice/libpod-{ID}.scope/container\n");
        assert_eq!(
            container_from_cgroup(&podman),
            Some(format!("podman://{ID}"))
        );
    }

    #[test]
    fn host_processes_have_no_container() {
        let text = "0::/user.slice/user-1000.slice/session-3.scope\n";
        assert_eq!(container_from_cgroup(text), None);
        assert_eq!(container_from_cgroup("0::/\n"), None);
        assert_eq!(container_from_cgroup("garbage without colons"), None);
        // 63 hex digits is not an id.
        assert_eq!(
            container_from_cgroup(&format!("0::/docker/{}\n", &ID[1..])),
            None
        );
    }

    #[test]
    fn cmdline_is_joined_and_bounded() {
        assert_eq!(
            format_cmdline(b"python3\0train.py\0--lr\x000.1\0", 100).as_deref(),
            Some("python3 train.py --lr 0.1")
        );
        assert_eq!(format_cmdline(b"", 100), None);
        assert_eq!(format_cmdline(b"\0\0", 100), None);
        let long = format_cmdline(b"python3\0aaaaaaaaaa\0", 10).unwrap();
        assert_eq!(long, "python3 aa…");
        // Never cut inside a UTF-8 character.
        let cut = format_cmdline("ééééé".as_bytes(), 5).unwrap();
        assert_eq!(cut, "éé…");
    }

    #[test]
    fn passwd_maps_uids() {
        let users = parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\n# comment\nalice:x:1000:1000::/home/alice:/bin/sh\nbroken\n",
        );
        assert_eq!(users.get(&0).map(String::as_str), Some("root"));
        assert_eq!(users.get(&1000).map(String::as_str), Some("alice"));
        assert_eq!(users.len(), 2);
    }

    #[test]
    fn reads_a_fake_proc_tree_and_caches() {
        let dir = tempfile::tempdir().unwrap();
        let proc_dir = dir.path().join("4242");
        std::fs::create_dir(&proc_dir).unwrap();
        std::fs::write(proc_dir.join("cmdline"), b"python3\0-c\0import torch\0").unwrap();
        std::fs::write(
            proc_dir.join("cgroup"),
            format!("0::/system.slice/docker-{ID}.scope\n"),
        )
        .unwrap();
        #[cfg(unix)]
        let uid = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(&proc_dir).unwrap().uid()
        };
        let passwd = dir.path().join("passwd");
        std::fs::write(&passwd, format!("tester:x:{uid}:{uid}::/:/bin/sh\n")).unwrap();
        let mut fs = ProcFs::new(dir.path(), &passwd);
        let d = fs.details(4242);
        assert_eq!(d.user.as_deref(), Some("tester"));
        assert_eq!(d.command.as_deref(), Some("python3 -c import torch"));
        assert_eq!(d.container, Some(format!("docker://{ID}")));
        // Cached: a change on disk is not seen while the pid stays.
        std::fs::write(proc_dir.join("cmdline"), b"other\0").unwrap();
        assert_eq!(
            fs.details(4242).command.as_deref(),
            Some("python3 -c import torch")
        );
        // Forgotten once the pid leaves, read afresh when it comes back.
        fs.retain(&HashSet::new());
        assert_eq!(fs.details(4242).command.as_deref(), Some("other"));
        // A pid that is not there has no details.
        assert_eq!(fs.details(1), ProcessDetails::default());
    }
}
