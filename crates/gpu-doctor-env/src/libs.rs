//! Finding copies of a shared library the way the dynamic loader would: `LD_LIBRARY_PATH`
//! first, then the `ldconfig` cache, then the folders toolkits, conda and pip wheels put
//! them in. The version comes from the file the symlinks end at (`libcudart.so.13.0.96`).

use crate::facts::LibraryCopy;
use crate::host::{Host, list_dir, run_bounded};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One `ldconfig -p` entry: the name and the path it points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdEntry {
    pub name: String,
    pub path: String,
}

/// Parses `ldconfig -p` output (`\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/libcuda.so.1`).
pub fn parse_ldconfig(text: &str) -> Vec<LdEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, path) = line.split_once("=>")?;
            let name = left.split_whitespace().next()?;
            Some(LdEntry {
                name: name.to_owned(),
                path: path.trim().to_owned(),
            })
        })
        .collect()
}

/// The loader cache: captured text when the host has it, else `ldconfig -p` (bounded).
pub fn ldconfig_entries(host: &Host) -> Vec<LdEntry> {
    if let Some(text) = &host.ldconfig {
        return parse_ldconfig(text);
    }
    if !host.is_real_root() {
        return Vec::new();
    }
    for program in ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"] {
        let mut cmd = Command::new(program);
        cmd.arg("-p");
        if let Ok(out) = run_bounded(cmd, Duration::from_secs(3))
            && out.status == Some(0)
        {
            return parse_ldconfig(&out.stdout);
        }
    }
    Vec::new()
}

/// The version in a library file name: `libcudnn.so.9.14.0` → `9.14.0`,
/// `libcuda.so.580.159.04` → `580.159.04`; `None` for a bare `.so`.
pub fn version_from_name(file_name: &str) -> Option<String> {
    let (_, rest) = file_name.split_once(".so.")?;
    let ok = !rest.is_empty()
        && rest
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    ok.then(|| rest.to_owned())
}

/// Whether a path is a toolkit's link-time stub (`.../lib64/stubs/libcuda.so`).
pub fn is_stub(path: &str) -> bool {
    path.split('/').any(|c| c == "stubs")
}

fn resolve(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// Builds a [`LibraryCopy`] for a file that exists.
pub fn copy_of(name: &str, path: &Path, origin: &str) -> LibraryCopy {
    let resolved = resolve(path);
    let version = resolved
        .as_deref()
        .and_then(Path::file_name)
        .and_then(|n| version_from_name(&n.to_string_lossy()))
        .or_else(|| version_from_name(name));
    let shown = path.display().to_string();
    LibraryCopy {
        name: name.to_owned(),
        stub: is_stub(&shown)
            || resolved
                .as_deref()
                .is_some_and(|r| is_stub(&r.display().to_string())),
        path: shown,
        resolved: resolved.map(|r| r.display().to_string()),
        version,
        origin: origin.to_owned(),
    }
}

/// Every copy of a library whose file name is one of `names`, in the loader's order:
/// `LD_LIBRARY_PATH` folders, then the `ldconfig` cache (paths joined to the host's root).
pub fn loader_order(host: &Host, ld: &[LdEntry], names: &[&str]) -> Vec<LibraryCopy> {
    let mut out = Vec::new();
    for dir in host.path_list("LD_LIBRARY_PATH") {
        for name in names {
            let p = dir.join(name);
            if p.exists() {
                out.push(copy_of(name, &p, "LD_LIBRARY_PATH"));
            }
        }
    }
    for e in ld {
        if names.contains(&e.name.as_str()) {
            let p = host.path(&e.path);
            if p.exists() {
                out.push(copy_of(&e.name, &p, "ldconfig"));
            }
        }
    }
    out
}

/// Every file in `dir` whose name starts with `prefix` (`libcudart.so`), one entry per
/// physical file (symlinks to the same file collapse onto the soname-looking name).
pub fn scan_dir(dir: &Path, prefix: &str, origin: &str) -> Vec<LibraryCopy> {
    let mut seen = BTreeSet::new();
    let mut names: Vec<String> = list_dir(dir)
        .into_iter()
        .filter(|n| n == prefix || n.starts_with(&format!("{prefix}.")))
        .collect();
    // The soname (`libx.so.13`) first, then the bare name, then the fully versioned one.
    names.sort_by_key(|n| {
        let dots = n.len() - n.replace('.', "").len();
        (dots != 2, dots)
    });
    let mut out = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let key = resolve(&path).unwrap_or_else(|| path.clone());
        if seen.insert(key) {
            out.push(copy_of(&name, &path, origin));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_real_ldconfig_lines() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/h200/env.txt"
        ))
        .unwrap();
        let entries = parse_ldconfig(&text);
        assert!(entries.contains(&LdEntry {
            name: "libcudart.so.13".into(),
            path: "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13".into()
        }));
        assert_eq!(
            entries.iter().filter(|e| e.name == "libcuda.so.1").count(),
            2
        );
    }

    #[test]
    fn versions_come_from_file_names() {
        assert_eq!(
            version_from_name("libcudnn.so.9.14.0").as_deref(),
            Some("9.14.0")
        );
        assert_eq!(
            version_from_name("libnvidia-ml.so.580.159.04").as_deref(),
            Some("580.159.04")
        );
        assert_eq!(version_from_name("libcudart.so"), None);
        assert_eq!(version_from_name("libcudart.so.13.bak"), None);
    }

    #[test]
    fn stubs_are_recognised() {
        assert!(is_stub("/usr/local/cuda/lib64/stubs/libnvidia-ml.so"));
        assert!(!is_stub("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"));
    }
}
