//! Who owns a GPU process, when it started, and which processes belong to a job: read from
//! `/proc` under an injectable root, and user and group names from `passwd` and `group`
//! files under the same kind of root.
//!
//! The parsing is pure functions over strings (tested on fixture text); [`ProcRoot`] does the
//! bounded reads. Every read is bounded: a `/proc/<pid>/status` is about 1.5 KiB, and the
//! account files of a large site are a few MiB.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The most read from a `/proc/<pid>/{status,stat,comm}` file.
const MAX_PROC_FILE_BYTES: u64 = 64 * 1024;
/// The most read from `/etc/passwd` or `/etc/group`.
const MAX_ACCOUNTS_BYTES: u64 = 16 * 1024 * 1024;
/// The most processes walked when looking for a job's descendants.
pub const MAX_PROCESSES_WALKED: usize = 1 << 20;

/// Who a process is, from `/proc/<pid>/status` and `/proc/<pid>/stat`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcOwner {
    /// Real user id.
    pub uid: u32,
    /// Effective user id (differs from `uid` for a setuid program).
    pub euid: u32,
    /// Real group id.
    pub gid: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
    /// Start time in clock ticks since boot (`stat` field 22): with the pid, it names one
    /// process for its whole life, so a reused pid is never mistaken for the old one.
    pub start_time: u64,
    /// The parent's pid.
    pub ppid: u32,
    /// The process group.
    pub pgrp: u32,
    /// `stat` state letter (`R`, `S`, `Z` for a zombie, ...).
    pub state: char,
    /// The short command name (`comm`).
    pub comm: String,
}

impl ProcOwner {
    /// Whether root is involved: the guard never touches such a process.
    pub fn is_root(&self) -> bool {
        self.uid == 0 || self.euid == 0
    }

    /// Whether the process is in group `gid` (primary or supplementary).
    pub fn in_group(&self, gid: u32) -> bool {
        self.gid == gid || self.groups.contains(&gid)
    }
}

/// Fields of `/proc/<pid>/stat` after the command name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub state: char,
    pub ppid: u32,
    pub pgrp: u32,
    pub start_time: u64,
}

/// Parses `/proc/<pid>/stat`. The command name is in parentheses and may itself contain
/// spaces and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(3) ppid(4) pgrp(5) ... starttime(22), so index 0 is field 3.
    Some(Stat {
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// Parses the `Uid:`, `Gid:` and `Groups:` lines of `/proc/<pid>/status` into
/// (real uid, effective uid, real gid, groups).
pub fn parse_status(text: &str) -> Option<(u32, u32, u32, Vec<u32>)> {
    let mut uid = None;
    let mut gid = None;
    let mut groups = Vec::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("Uid:") {
            let ids: Vec<u32> = v
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            uid = Some((*ids.first()?, *ids.get(1)?));
        } else if let Some(v) = line.strip_prefix("Gid:") {
            gid = v.split_whitespace().next().and_then(|x| x.parse().ok());
        } else if let Some(v) = line.strip_prefix("Groups:") {
            groups = v
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
        }
    }
    let (uid, euid) = uid?;
    Some((uid, euid, gid?, groups))
}

/// `/proc` (or a fake tree for tests, or a host `/proc` mounted into a container).
#[derive(Debug, Clone)]
pub struct ProcRoot {
    root: PathBuf,
}

impl Default for ProcRoot {
    fn default() -> Self {
        ProcRoot::new("/proc")
    }
}

fn read_bounded(path: &Path, max: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn read_text(path: &Path, max: u64) -> Option<String> {
    read_bounded(path, max).map(|b| String::from_utf8_lossy(&b).into_owned())
}

impl ProcRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ProcRoot { root: root.into() }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Who `pid` is; `None` when it is gone, in another pid namespace or unreadable.
    pub fn owner(&self, pid: u32) -> Option<ProcOwner> {
        let dir = self.root.join(pid.to_string());
        let stat = parse_stat(&read_text(&dir.join("stat"), MAX_PROC_FILE_BYTES)?)?;
        let (uid, euid, gid, groups) =
            parse_status(&read_text(&dir.join("status"), MAX_PROC_FILE_BYTES)?)?;
        let comm = read_text(&dir.join("comm"), 256)
            .map(|c| c.trim_end().to_owned())
            .unwrap_or_default();
        Some(ProcOwner {
            uid,
            euid,
            gid,
            groups,
            start_time: stat.start_time,
            ppid: stat.ppid,
            pgrp: stat.pgrp,
            state: stat.state,
            comm,
        })
    }

    /// `/proc/<pid>/stat` only (cheaper than [`ProcRoot::owner`]).
    pub fn stat(&self, pid: u32) -> Option<Stat> {
        parse_stat(&read_text(
            &self.root.join(pid.to_string()).join("stat"),
            MAX_PROC_FILE_BYTES,
        )?)
    }

    /// Whether `pid` is still the process that started at `start_time` and has not exited
    /// (a zombie has exited: it only waits for its parent to read its status).
    pub fn is_same_live(&self, pid: u32, start_time: u64) -> bool {
        self.stat(pid)
            .is_some_and(|s| s.start_time == start_time && s.state != 'Z' && s.state != 'X')
    }

    /// Every numeric entry of the root: the pids visible here.
    pub fn pids(&self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
            .take(MAX_PROCESSES_WALKED)
            .collect()
    }

    /// `root` and every process below it (children, grandchildren, ...), plus every process
    /// in `root`'s process group: a job that double-forks or spawns workers is still the job.
    pub fn job_pids(&self, root: u32) -> BTreeSet<u32> {
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut pgrp_members: Vec<(u32, u32)> = Vec::new();
        for pid in self.pids() {
            if let Some(s) = self.stat(pid) {
                children.entry(s.ppid).or_default().push(pid);
                pgrp_members.push((pid, s.pgrp));
            }
        }
        let mut job = BTreeSet::new();
        let mut queue = vec![root];
        while let Some(pid) = queue.pop() {
            if job.insert(pid)
                && let Some(kids) = children.get(&pid)
            {
                queue.extend(kids);
            }
        }
        if let Some(pgrp) = self.stat(root).map(|s| s.pgrp)
            && pgrp == root
        {
            // Only when the job leads its own group: otherwise the group is the caller's
            // (a shell's), and its other members are not the job.
            job.extend(
                pgrp_members
                    .iter()
                    .filter(|(_, g)| *g == pgrp)
                    .map(|(p, _)| p),
            );
        }
        job
    }

    /// The NUL-separated environment of `pid`, as (name, value) pairs; `None` when it cannot
    /// be read (another user's process, for a non-root reader).
    pub fn environ(&self, pid: u32) -> Option<Vec<(String, String)>> {
        let bytes = read_bounded(
            &self.root.join(pid.to_string()).join("environ"),
            MAX_PROC_FILE_BYTES * 4,
        )?;
        Some(
            bytes
                .split(|&b| b == 0)
                .filter_map(|kv| {
                    let kv = String::from_utf8_lossy(kv);
                    let (k, v) = kv.split_once('=')?;
                    Some((k.to_owned(), v.to_owned()))
                })
                .collect(),
        )
    }
}

/// The effective uid of this process: what the policy's "may I stop it" is decided for.
pub fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// User and group names, from `passwd` and `group` files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accounts {
    pub users: BTreeMap<String, u32>,
    pub groups: BTreeMap<String, u32>,
}

impl Accounts {
    /// Reads `passwd` and `group` (missing files give empty maps: names then match nothing).
    pub fn load(passwd: &Path, group: &Path) -> Accounts {
        let text = |p: &Path| read_text(p, MAX_ACCOUNTS_BYTES).unwrap_or_default();
        Accounts {
            users: parse_id_file(&text(passwd)),
            groups: parse_id_file(&text(group)),
        }
    }

    /// The system's `/etc/passwd` and `/etc/group`.
    pub fn system() -> Accounts {
        Accounts::load(Path::new("/etc/passwd"), Path::new("/etc/group"))
    }

    pub fn uid(&self, name: &str) -> Option<u32> {
        self.users.get(name).copied()
    }

    pub fn gid(&self, name: &str) -> Option<u32> {
        self.groups.get(name).copied()
    }

    /// The name of `uid`, or the number when it has none.
    pub fn user_name(&self, uid: u32) -> String {
        self.users
            .iter()
            .find(|(_, u)| **u == uid)
            .map_or_else(|| uid.to_string(), |(n, _)| n.clone())
    }
}

/// `name:x:id:...` lines (passwd and group share the first three fields) into name → id.
/// The first entry of a name wins, as in `getpwnam`.
pub fn parse_id_file(text: &str) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let mut fields = line.split(':');
        let (Some(name), Some(_), Some(id)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        if let Ok(id) = id.parse() {
            out.entry(name.to_owned()).or_insert(id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "4242 (python3 (a b)) S 4200 4242 4200 0 -1 4194560 1 0 0 0 3 1 0 0 20 0 1 0 987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0";

    #[test]
    fn stat_fields_count_from_the_last_paren() {
        assert_eq!(
            parse_stat(STAT),
            Some(Stat {
                state: 'S',
                ppid: 4200,
                pgrp: 4242,
                start_time: 987_654
            })
        );
        assert_eq!(parse_stat("12 (x) R"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn status_ids() {
        let text = "Name:\tpython3\nUid:\t1000\t1001\t1000\t1000\nGid:\t100\t100\t100\t100\nGroups:\t27 100 2001 \n";
        assert_eq!(
            parse_status(text),
            Some((1000, 1001, 100, vec![27, 100, 2001]))
        );
        assert_eq!(parse_status("Name: x\n"), None);
    }

    #[test]
    fn id_files() {
        let m = parse_id_file(
            "root:x:0:0::/root:/bin/bash\n# c\nalice:x:1000:1000::/h:/bin/sh\nbad\nalice:x:5:5::\n",
        );
        assert_eq!(m.get("root"), Some(&0));
        assert_eq!(m.get("alice"), Some(&1000));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn a_fake_tree() {
        let dir = tempfile::tempdir().unwrap();
        let p = |pid: u32, ppid: u32, pgrp: u32, uid: u32| {
            let d = dir.path().join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("stat"),
                format!(
                    "{pid} (job) S {ppid} {pgrp} 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {} 0",
                    100 + pid
                ),
            )
            .unwrap();
            std::fs::write(
                d.join("status"),
                format!("Uid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t50\t50\t50\t50\nGroups:\t50 60\n"),
            )
            .unwrap();
            std::fs::write(d.join("comm"), "job\n").unwrap();
        };
        p(10, 1, 10, 1000);
        p(11, 10, 10, 1000);
        p(12, 11, 12, 1000); // its own group, but a descendant
        p(13, 1, 10, 1000); // re-parented to init, still in the job's group
        p(20, 1, 20, 0);
        let root = ProcRoot::new(dir.path());
        assert_eq!(
            root.job_pids(10).into_iter().collect::<Vec<_>>(),
            vec![10, 11, 12, 13]
        );
        assert_eq!(
            root.job_pids(11).into_iter().collect::<Vec<_>>(),
            vec![11, 12]
        );
        let o = root.owner(11).unwrap();
        assert_eq!(
            (o.uid, o.gid, o.start_time, o.ppid, o.comm.as_str()),
            (1000, 50, 111, 10, "job")
        );
        assert!(o.in_group(60) && !o.in_group(70) && !o.is_root());
        assert!(root.owner(20).unwrap().is_root());
        assert!(root.is_same_live(11, 111));
        assert!(!root.is_same_live(11, 112));
        assert!(root.owner(99).is_none());
    }
}
