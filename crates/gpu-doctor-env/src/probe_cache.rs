//! The framework probe cache: a framework's probe result kept on disk while nothing that could
//! change it has changed, so `check` does not import torch (seconds) on every run.
//!
//! Importing a framework and making a CUDA context is what makes `check` slow (4 s for torch
//! on an H200 host, against about 70 ms for every other probe together). Its answer (version,
//! CUDA build, cuDNN, architectures, "a computation works") only changes when the interpreter,
//! an installed wheel, a variable CUDA reads, the driver or the boot changes, so the key holds
//! all of those and a result is reused only while the key is equal and younger than
//! [`MAX_AGE`]. Only successes are kept: a framework whose import or GPU computation failed
//! is probed afresh every time, because that is exactly when the user is changing things to
//! fix it. GPU health is never cached: it comes from NVML on every run.

use crate::facts::Framework;
use crate::host::{Host, list_dir, read_text};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The oldest cached result still used.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// Raised whenever the entry layout or the key's meaning changes.
const FORMAT: u32 = 1;
/// Variable-name prefixes that change what a framework finds or loads.
const KEY_VARIABLE_PREFIXES: [&str; 14] = [
    "CUDA_",
    "LD_",
    "PYTHON",
    "NVIDIA_",
    "XLA_",
    "TF_",
    "JAX_",
    "PYTORCH_",
    "TORCH_",
    "CUPY_",
    "NCCL_",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "HIP_",
];

/// Everything a framework probe's answer depends on. Two runs with equal keys would probe
/// the same thing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    format: u32,
    /// gpu-doctor's version and the probe script's hash: a new probe asks new questions.
    gpu_doctor: String,
    script: u64,
    interpreter: String,
    framework: String,
    /// Installed wheels' `RECORD` files and the framework's import origin, with mtimes.
    fingerprint: Vec<String>,
    variables: BTreeMap<String, String>,
    /// `/proc/driver/nvidia/version`: a driver upgrade invalidates.
    driver: Option<String>,
    /// A reboot invalidates (modules loaded, GPUs reset).
    boot_id: Option<String>,
    /// `/dev/nvidia*` names: a missing `nvidia-uvm` node is a classic "CUDA not available".
    device_nodes: Vec<String>,
}

impl CacheKey {
    /// What the keys of every framework probed with `interpreter` on `host` share; read once
    /// per `check` (`for_framework` makes each one's key).
    pub fn new(host: &Host, script: &str, interpreter: &str, fingerprint: &[String]) -> CacheKey {
        CacheKey {
            format: FORMAT,
            gpu_doctor: env!("CARGO_PKG_VERSION").to_owned(),
            script: fnv1a(script.as_bytes()),
            interpreter: interpreter.to_owned(),
            framework: String::new(),
            fingerprint: fingerprint.to_vec(),
            variables: host
                .env
                .iter()
                .filter(|(k, _)| KEY_VARIABLE_PREFIXES.iter().any(|p| k.starts_with(p)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            driver: read_text(&host.path("/proc/driver/nvidia/version")),
            boot_id: read_text(&host.path("/proc/sys/kernel/random/boot_id"))
                .map(|s| s.trim().to_owned()),
            device_nodes: list_dir(&host.path("/dev"))
                .into_iter()
                .filter(|n| n.starts_with("nvidia"))
                .collect(),
        }
    }

    /// The key for probing `framework`.
    #[must_use]
    pub fn for_framework(&self, framework: &str) -> CacheKey {
        CacheKey {
            framework: framework.to_owned(),
            ..self.clone()
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    key: CacheKey,
    /// Unix seconds.
    probed_at: u64,
    framework: Framework,
}

/// A folder of cached framework probes (`~/.cache/gpu-doctor/probes` by default).
#[derive(Debug, Clone)]
pub struct ProbeCache {
    dir: PathBuf,
}

impl ProbeCache {
    pub fn new(dir: impl Into<PathBuf>) -> ProbeCache {
        ProbeCache { dir: dir.into() }
    }

    /// `$XDG_CACHE_HOME/gpu-doctor/probes`, else `$HOME/.cache/gpu-doctor/probes`.
    pub fn default_dir(env: &BTreeMap<String, String>) -> Option<PathBuf> {
        let base = env
            .get("XDG_CACHE_HOME")
            .filter(|v| v.starts_with('/'))
            .map(PathBuf::from)
            .or_else(|| {
                env.get("HOME")
                    .filter(|v| v.starts_with('/'))
                    .map(|h| Path::new(h).join(".cache"))
            })?;
        Some(base.join("gpu-doctor").join("probes"))
    }

    /// The cached result for `key`, when there is one that is equal and young enough; its
    /// `cached_at` says when it was probed. Anything unreadable counts as absent.
    pub fn load(&self, key: &CacheKey, now: SystemTime) -> Option<Framework> {
        let text = read_text(&self.file(key))?;
        let entry: Entry = serde_json::from_str(&text).ok()?;
        let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
        let fresh = entry.probed_at <= now && now - entry.probed_at <= MAX_AGE.as_secs();
        (entry.key == *key && fresh).then_some(Framework {
            cached_at: Some(entry.probed_at),
            ..entry.framework
        })
    }

    /// Keeps `framework` for `key` when the probe succeeded (see the module docs). Writes a
    /// temporary file and renames it, so a concurrent `check` never reads half an entry.
    /// Failing to write only costs speed next time, so errors are ignored.
    pub fn store(&self, key: &CacheKey, framework: &Framework, now: SystemTime) {
        if !worth_keeping(framework) {
            return;
        }
        let Ok(probed_at) = now.duration_since(UNIX_EPOCH).map(|d| d.as_secs()) else {
            return;
        };
        let entry = Entry {
            key: key.clone(),
            probed_at,
            framework: Framework {
                cached_at: None,
                ..framework.clone()
            },
        };
        let Ok(text) = serde_json::to_string(&entry) else {
            return;
        };
        let path = self.file(key);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written =
            std::fs::create_dir_all(&self.dir).is_ok() && std::fs::write(&tmp, text).is_ok();
        if written && std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    fn file(&self, key: &CacheKey) -> PathBuf {
        // One file per interpreter and framework; the rest of the key is checked on load.
        let id = fnv1a(format!("{}\0{}", key.interpreter, key.framework).as_bytes());
        self.dir.join(format!("{}-{id:016x}.json", key.framework))
    }
}

/// Only a framework that imported and computed on the GPU is kept.
fn worth_keeping(fw: &Framework) -> bool {
    fw.import_error.is_none() && fw.version.is_some() && fw.cuda_works == Some(true)
}

/// FNV-1a, 64 bit: stable across Rust versions (unlike `DefaultHasher`), which matters for a
/// name on disk, and enough for a cache that compares the whole key anyway.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(root: &Path) -> Host {
        std::fs::create_dir_all(root.join("dev")).unwrap();
        std::fs::write(root.join("dev/nvidia0"), "").unwrap();
        std::fs::create_dir_all(root.join("proc/driver/nvidia")).unwrap();
        std::fs::write(
            root.join("proc/driver/nvidia/version"),
            "NVRM version: 580.159.04\n",
        )
        .unwrap();
        Host {
            root: root.to_path_buf(),
            env: BTreeMap::from([
                ("CUDA_VISIBLE_DEVICES".to_owned(), "0".to_owned()),
                ("TERM".to_owned(), "xterm".to_owned()),
            ]),
            ..Host::system()
        }
    }

    fn working_torch() -> Framework {
        Framework {
            version: Some("2.11.0+cu130".into()),
            cuda_works: Some(true),
            probe_ms: Some(4200),
            ..Framework::default()
        }
    }

    fn key(h: &Host) -> CacheKey {
        CacheKey::new(h, "script", "/usr/bin/python3", &["torch 1 2".into()]).for_framework("torch")
    }

    #[test]
    fn a_stored_success_comes_back_with_its_probe_time() {
        let dir = tempfile::tempdir().unwrap();
        let h = host(dir.path());
        let cache = ProbeCache::new(dir.path().join("cache"));
        let t0 = UNIX_EPOCH + Duration::from_secs(1_000_000);
        cache.store(&key(&h), &working_torch(), t0);
        let got = cache
            .load(&key(&h), t0 + Duration::from_secs(60))
            .expect("cached");
        assert_eq!(got.cached_at, Some(1_000_000));
        assert_eq!(got.version.as_deref(), Some("2.11.0+cu130"));
    }

    #[test]
    fn anything_in_the_key_changing_misses() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = host(dir.path());
        let cache = ProbeCache::new(dir.path().join("cache"));
        let t0 = UNIX_EPOCH + Duration::from_secs(1_000_000);
        cache.store(&key(&h), &working_torch(), t0);
        // A variable a terminal sets is not in the key...
        h.env.insert("TERM".into(), "dumb".into());
        assert!(cache.load(&key(&h), t0).is_some());
        // ...one CUDA reads is.
        h.env.insert("CUDA_VISIBLE_DEVICES".into(), "1".into());
        assert!(cache.load(&key(&h), t0).is_none());
        h.env.insert("CUDA_VISIBLE_DEVICES".into(), "0".into());
        // A wheel reinstalled.
        let other = CacheKey::new(&h, "script", "/usr/bin/python3", &["torch 3 2".into()])
            .for_framework("torch");
        assert!(cache.load(&other, t0).is_none());
        // A driver upgrade.
        std::fs::write(
            dir.path().join("proc/driver/nvidia/version"),
            "NVRM version: 590.1\n",
        )
        .unwrap();
        assert!(cache.load(&key(&h), t0).is_none());
    }

    #[test]
    fn old_entries_and_failures_are_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let h = host(dir.path());
        let cache = ProbeCache::new(dir.path().join("cache"));
        let t0 = UNIX_EPOCH + Duration::from_secs(1_000_000);
        cache.store(&key(&h), &working_torch(), t0);
        assert!(
            cache
                .load(&key(&h), t0 + MAX_AGE + Duration::from_secs(1))
                .is_none()
        );

        let broken = Framework {
            cuda_works: Some(false),
            cuda_error: Some("CUDA driver version is insufficient".into()),
            ..working_torch()
        };
        let dir2 = tempfile::tempdir().unwrap();
        let cache2 = ProbeCache::new(dir2.path());
        cache2.store(&key(&h), &broken, t0);
        assert!(cache2.load(&key(&h), t0).is_none());
    }

    #[test]
    fn a_corrupt_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let h = host(dir.path());
        let cache = ProbeCache::new(dir.path().join("cache"));
        let t0 = UNIX_EPOCH + Duration::from_secs(1_000_000);
        cache.store(&key(&h), &working_torch(), t0);
        let file = cache.file(&key(&h));
        std::fs::write(&file, b"{\"key\": tru").unwrap();
        assert!(cache.load(&key(&h), t0).is_none());
    }
}
