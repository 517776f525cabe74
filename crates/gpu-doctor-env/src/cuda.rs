//! The CUDA probe: every toolkit (`/usr/local/cuda*`, `CUDA_HOME`, `PATH`, conda) with its
//! version, and every copy of libcudart, cuDNN, NCCL and cuBLAS (loader path, toolkits,
//! conda, pip `nvidia-*` wheels) with versions from file names, headers and wheel metadata.

use crate::Probe;
use crate::facts::{CudaFacts, HeaderVersion, LibraryCopy, Toolkit};
use crate::host::{Host, is_executable, list_dir, read_text, run_bounded};
use crate::libs::{LdEntry, copy_of, scan_dir, version_from_name};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The library families `check` follows: family → file-name prefix.
pub const FAMILIES: [(&str, &str); 4] = [
    ("cudart", "libcudart.so"),
    ("cudnn", "libcudnn.so"),
    ("nccl", "libnccl.so"),
    ("cublas", "libcublas.so"),
];

/// Reads toolkits and CUDA libraries.
#[derive(Debug, Clone, Default)]
pub struct CudaProbe {
    pub ldconfig: Vec<LdEntry>,
    /// `site-packages` folders from the Python probe, where pip wheels put CUDA libraries.
    pub site_packages: Vec<PathBuf>,
    /// Installed distributions (name → version), to date the wheels' libraries.
    pub packages: BTreeMap<String, String>,
}

impl Probe for CudaProbe {
    type Facts = CudaFacts;
    const NAME: &'static str = "cuda";

    fn probe(&self, host: &Host) -> CudaFacts {
        let toolkits = toolkits(host);
        let nvcc_on_path = host.which("nvcc").map(|p| p.display().to_string());
        let mut libraries = BTreeMap::new();
        let mut headers = BTreeMap::new();
        let dirs = self.library_dirs(host, &toolkits);
        for (family, prefix) in FAMILIES {
            let mut seen = BTreeSet::new();
            let mut copies: Vec<LibraryCopy> = Vec::new();
            let mut add = |c: LibraryCopy| {
                let key = c.resolved.clone().unwrap_or_else(|| c.path.clone());
                if seen.insert(key) {
                    copies.push(c);
                }
            };
            let (first, rest): (Vec<_>, Vec<_>) = dirs
                .iter()
                .partition(|(_, origin)| origin == "LD_LIBRARY_PATH");
            // The loader's order: `LD_LIBRARY_PATH`, then its cache, then the folders it
            // does not search by itself (toolkits, conda, wheels: found only by RPATH).
            for (dir, origin) in &first {
                scan_dir(dir, prefix, origin).into_iter().for_each(&mut add);
            }
            for e in &self.ldconfig {
                if e.name == prefix || e.name.starts_with(&format!("{prefix}.")) {
                    let p = host.path(&e.path);
                    if p.exists() {
                        add(copy_of(&e.name, &p, "ldconfig"));
                    }
                }
            }
            for (dir, origin) in &rest {
                for mut c in scan_dir(dir, prefix, origin) {
                    if origin == "pip" && c.version.as_deref().is_none_or(|v| !v.contains('.')) {
                        if let Some(v) = self.wheel_version(family, c.version.as_deref()) {
                            c.version = Some(v);
                        }
                    }
                    add(c);
                }
            }
            if !copies.is_empty() {
                libraries.insert(family.to_owned(), copies);
            }
            let found = header_versions(host, family, &toolkits, &self.site_packages);
            if !found.is_empty() {
                headers.insert(family.to_owned(), found);
            }
        }
        CudaFacts {
            toolkits,
            nvcc_on_path,
            libraries,
            headers,
        }
    }
}

impl CudaProbe {
    fn library_dirs(&self, host: &Host, toolkits: &[Toolkit]) -> Vec<(PathBuf, String)> {
        let mut dirs: Vec<(PathBuf, String)> = host
            .path_list("LD_LIBRARY_PATH")
            .into_iter()
            .map(|d| (d, "LD_LIBRARY_PATH".to_owned()))
            .collect();
        for tk in toolkits {
            let root = PathBuf::from(&tk.path);
            dirs.push((root.join("lib64"), "toolkit".into()));
            for target in list_dir(&root.join("targets")) {
                dirs.push((
                    root.join("targets").join(target).join("lib"),
                    "toolkit".into(),
                ));
            }
        }
        if let Some(conda) = host.var("CONDA_PREFIX") {
            dirs.push((PathBuf::from(conda).join("lib"), "conda".into()));
        }
        for sp in &self.site_packages {
            let nv = sp.join("nvidia");
            for pkg in list_dir(&nv) {
                dirs.push((nv.join(pkg).join("lib"), "pip".into()));
            }
        }
        dirs
    }

    /// A pip wheel ships `libcudnn.so.9` with no fuller version in the name: take the
    /// version from the wheel's distribution (`nvidia-cudnn-cu13 9.19.0.56`) when its major
    /// matches the soname's.
    fn wheel_version(&self, family: &str, soname_major: Option<&str>) -> Option<String> {
        let stem = match family {
            "cudart" => "nvidia-cuda-runtime",
            "cudnn" => "nvidia-cudnn",
            "nccl" => "nvidia-nccl",
            "cublas" => "nvidia-cublas",
            _ => return None,
        };
        self.packages
            .iter()
            .filter(|(name, _)| {
                name.to_ascii_lowercase()
                    .replace('_', "-")
                    .starts_with(stem)
            })
            .map(|(_, v)| v)
            .find(|v| {
                // cuBLAS and the CUDA runtime wheels' majors track CUDA's; cuDNN's its own.
                soname_major.is_none_or(|m| v.split('.').next() == Some(m))
            })
            .cloned()
    }
}

/// Every toolkit, deduplicated by its real path, with its version.
pub fn toolkits(host: &Host) -> Vec<Toolkit> {
    let mut candidates: Vec<(PathBuf, &str)> = Vec::new();
    let local = host.path("/usr/local");
    for name in list_dir(&local) {
        if name.starts_with("cuda") {
            candidates.push((local.join(name), "/usr/local"));
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = host.var(var).filter(|v| !v.is_empty()) {
            candidates.push((PathBuf::from(v), "CUDA_HOME"));
        }
    }
    for dir in host.path_list("PATH") {
        if is_executable(&dir.join("nvcc"))
            && let Some(root) = dir.parent()
        {
            candidates.push((root.to_path_buf(), "PATH"));
        }
    }
    if let Some(conda) = host.var("CONDA_PREFIX") {
        let root = PathBuf::from(conda);
        if is_executable(&root.join("bin/nvcc")) {
            candidates.push((root, "conda"));
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (path, origin) in candidates {
        let Ok(real) = std::fs::canonicalize(&path) else {
            continue;
        };
        if !real.is_dir() || !seen.insert(real.clone()) {
            continue;
        }
        let nvcc = Some(real.join("bin/nvcc")).filter(|p| is_executable(p));
        let version = toolkit_version(host, &real, nvcc.as_deref());
        if nvcc.is_none() && version.is_none() {
            continue; // `/usr/local/cuda-compat` and the like, not a toolkit.
        }
        out.push(Toolkit {
            path: real.display().to_string(),
            nvcc: nvcc.map(|p| p.display().to_string()),
            version,
            origin: origin.to_owned(),
        });
    }
    out
}

/// nvcc's version from `version.json` (CUDA 11.1+), `version.txt` (older), or, on the
/// real machine only, `nvcc --version`.
fn toolkit_version(host: &Host, root: &Path, nvcc: Option<&Path>) -> Option<String> {
    if let Some(text) = read_text(&root.join("version.json"))
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
    {
        for key in ["cuda_nvcc", "cuda"] {
            if let Some(v) = json[key]["version"].as_str() {
                return Some(v.to_owned());
            }
        }
    }
    if let Some(text) = read_text(&root.join("version.txt"))
        && let Some(v) = text.split_whitespace().find(|w| w.contains('.'))
    {
        return Some(v.to_owned());
    }
    let nvcc = nvcc?;
    if !host.is_real_root() {
        return None;
    }
    let mut cmd = Command::new(nvcc);
    cmd.arg("--version");
    let out = run_bounded(cmd, Duration::from_secs(5)).ok()?;
    parse_nvcc_version(&out.stdout)
}

/// `Cuda compilation tools, release 13.0, V13.0.88` → `13.0.88`.
pub fn parse_nvcc_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("release"))?;
    if let Some(v) = line.rsplit_once(", V").map(|(_, v)| v.trim()) {
        return Some(v.to_owned());
    }
    let after = line.split_once("release ")?.1;
    Some(after.split(',').next()?.trim().to_owned())
}

/// Versions from the family's header in the usual include folders.
fn header_versions(
    host: &Host,
    family: &str,
    toolkits: &[Toolkit],
    site_packages: &[PathBuf],
) -> Vec<HeaderVersion> {
    let (files, keys): (&[&str], [&str; 3]) = match family {
        "cudnn" => (
            &["cudnn_version.h", "cudnn.h"],
            ["CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"],
        ),
        "nccl" => (&["nccl.h"], ["NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"]),
        "cublas" => (
            &["cublas_api.h"],
            ["CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH"],
        ),
        "cudart" => (
            &["cuda_runtime_api.h"],
            ["CUDART_VERSION", "CUDART_VERSION", "CUDART_VERSION"],
        ),
        _ => return Vec::new(),
    };
    let mut dirs = vec![
        host.path("/usr/include"),
        host.path("/usr/include/x86_64-linux-gnu"),
        host.path("/usr/include/aarch64-linux-gnu"),
    ];
    for tk in toolkits {
        dirs.push(PathBuf::from(&tk.path).join("include"));
    }
    if let Some(conda) = host.var("CONDA_PREFIX") {
        dirs.push(PathBuf::from(conda).join("include"));
    }
    for sp in site_packages {
        for pkg in list_dir(&sp.join("nvidia")) {
            dirs.push(sp.join("nvidia").join(pkg).join("include"));
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for dir in dirs {
        for file in files {
            let path = dir.join(file);
            let Ok(real) = std::fs::canonicalize(&path) else {
                continue;
            };
            if !seen.insert(real) {
                continue;
            }
            let Some(text) = read_text(&path) else {
                continue;
            };
            let defines = parse_defines(&text);
            let version = if family == "cudart" {
                defines
                    .get("CUDART_VERSION")
                    .and_then(|v| v.parse::<u32>().ok())
                    .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10))
            } else {
                let parts: Option<Vec<&String>> = keys.iter().map(|k| defines.get(*k)).collect();
                parts.map(|p| p.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("."))
            };
            if let Some(version) = version {
                out.push(HeaderVersion {
                    path: path.display().to_string(),
                    version,
                });
                break;
            }
        }
    }
    out
}

/// `#define NAME 123` lines with numeric values.
fn parse_defines(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("#define")?;
            let mut words = rest.split_whitespace();
            let name = words.next()?;
            let value = words.next()?;
            value
                .chars()
                .all(|c| c.is_ascii_digit())
                .then(|| (name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// The major version of a library copy (`13` for `libcudart.so.13` or `13.0.96`).
pub fn major_of(copy: &LibraryCopy) -> Option<u32> {
    copy.version
        .as_deref()
        .or(version_from_name(&copy.name).as_deref())
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_version_from_the_h200() {
        let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n";
        assert_eq!(parse_nvcc_version(text).as_deref(), Some("13.0.88"));
    }

    #[test]
    fn defines_are_read() {
        let d = parse_defines(
            "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 14\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000)\n",
        );
        assert_eq!(d.get("CUDNN_MAJOR").map(String::as_str), Some("9"));
        assert!(!d.contains_key("CUDNN_VERSION"));
    }
}
