//! Finding the compute-sanitizer executable.
//!
//! Looks on PATH first, then where CUDA toolkits install it: `$CUDA_HOME/bin`,
//! `$CUDA_PATH/bin`, `/usr/local/cuda/bin`, `/usr/local/cuda-*/bin` (newest version first),
//! `/opt/cuda/bin` and `/opt/nvidia/*/compute-sanitizer`. The places are data
//! ([`SearchPlaces`]) so tests can point the search at a temporary folder.

use crate::error::SanitizeError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const EXE: &str = "compute-sanitizer";

/// Where to look, in order.
#[derive(Debug, Clone, Default)]
pub struct SearchPlaces {
    /// The PATH to search (`None`: do not search PATH).
    pub path: Option<OsString>,
    /// Folders that may hold the executable directly.
    pub folders: Vec<PathBuf>,
    /// Folders whose sub-folders may hold it, as `/usr/local/cuda-*/bin` (root, suffix).
    pub globs: Vec<(PathBuf, String, PathBuf)>,
}

impl SearchPlaces {
    /// The real places, from the environment.
    pub fn from_env() -> Self {
        let mut folders = Vec::new();
        for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
            if let Some(home) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                folders.push(PathBuf::from(home).join("bin"));
            }
        }
        folders.push(PathBuf::from("/usr/local/cuda/bin"));
        SearchPlaces {
            path: std::env::var_os("PATH"),
            folders,
            globs: vec![
                (
                    PathBuf::from("/usr/local"),
                    "cuda-".to_owned(),
                    PathBuf::from("bin"),
                ),
                (
                    PathBuf::from("/opt"),
                    "cuda".to_owned(),
                    PathBuf::from("bin"),
                ),
                (
                    PathBuf::from("/opt/nvidia"),
                    String::new(),
                    PathBuf::from("compute-sanitizer"),
                ),
            ],
        }
    }

    /// Every folder this search looks in, PATH's folders first.
    fn candidates(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .path
            .as_deref()
            .map(|p| {
                std::env::split_paths(p)
                    .filter(|d| !d.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        out.extend(self.folders.iter().cloned());
        for (root, prefix, suffix) in &self.globs {
            let Ok(entries) = std::fs::read_dir(root) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix.as_str()))
                .map(|e| e.path().join(suffix))
                .collect();
            // Newest toolkit first: `cuda-13.0` before `cuda-12.4` before `cuda-12.10`
            // would be wrong with a plain sort, so compare the version numbers.
            found.sort_by_key(|p| std::cmp::Reverse(version_key(p)));
            out.extend(found);
        }
        out
    }

    /// The places searched, as said in the error when nothing is found (PATH is named
    /// as such, not folder by folder).
    fn described(&self) -> Vec<PathBuf> {
        let mut out = self.folders.clone();
        for (root, prefix, suffix) in &self.globs {
            out.push(root.join(format!("{prefix}*")).join(suffix));
        }
        out
    }
}

fn version_key(path: &Path) -> Vec<u64> {
    path.components()
        .filter_map(|c| c.as_os_str().to_str())
        .flat_map(|s| {
            s.split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect::<Vec<u64>>()
        })
        .collect()
}

/// The first compute-sanitizer found in `places`.
pub fn locate(places: &SearchPlaces) -> Result<PathBuf, SanitizeError> {
    for dir in places.candidates() {
        let exe = dir.join(EXE);
        if is_executable(&exe) {
            return Ok(exe);
        }
    }
    Err(SanitizeError::NotFound {
        searched: places.described(),
    })
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exe(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(EXE);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        p
    }

    #[test]
    fn path_comes_first() {
        let tmp = tempfile::tempdir().unwrap();
        let on_path = exe(&tmp.path().join("p"));
        exe(&tmp.path().join("home/bin"));
        let places = SearchPlaces {
            path: Some(tmp.path().join("p").into_os_string()),
            folders: vec![tmp.path().join("home/bin")],
            globs: vec![],
        };
        assert_eq!(locate(&places).unwrap(), on_path);
    }

    #[test]
    fn newest_toolkit_wins() {
        let tmp = tempfile::tempdir().unwrap();
        exe(&tmp.path().join("cuda-12.9/bin"));
        let newest = exe(&tmp.path().join("cuda-12.10/bin"));
        exe(&tmp.path().join("cuda-11.8/bin"));
        let places = SearchPlaces {
            path: None,
            folders: vec![],
            globs: vec![(tmp.path().to_owned(), "cuda-".into(), "bin".into())],
        };
        assert_eq!(locate(&places).unwrap(), newest);
    }

    #[test]
    fn a_file_that_is_not_executable_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(EXE), "not a program").unwrap();
        let places = SearchPlaces {
            path: Some(tmp.path().as_os_str().to_owned()),
            folders: vec![],
            globs: vec![],
        };
        assert!(locate(&places).is_err());
    }

    #[test]
    fn not_found_names_every_place() {
        let tmp = tempfile::tempdir().unwrap();
        let places = SearchPlaces {
            path: None,
            folders: vec![tmp.path().join("cuda/bin")],
            globs: vec![(tmp.path().to_owned(), "cuda-".into(), "bin".into())],
        };
        let err = locate(&places).unwrap_err().to_string();
        assert!(
            err.contains(&format!("{}/cuda/bin", tmp.path().display())),
            "{err}"
        );
        assert!(
            err.contains(&format!("{}/cuda-*/bin", tmp.path().display())),
            "{err}"
        );
    }
}
