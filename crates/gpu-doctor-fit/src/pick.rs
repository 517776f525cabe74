//! Choosing GPUs for a job: by health, free memory and utilisation ([`rank`]), with leases
//! in a lock directory ([`LeaseDir`]) so that jobs started together take different GPUs.
//!
//! A lease is a file `<gpu uuid>.lease` holding the picker's pid and an expiry. `pick` holds
//! it for `--hold` (default 60 s): long enough for the job it starts to allocate memory, so
//! that the next `pick` sees the GPU as used; after that NVML's numbers speak for the GPU.
//! Reading the leases, choosing and writing new ones happens under an exclusive `flock` on
//! `<dir>/.lock`, so two pickers never interleave; the kernel drops the lock if one dies.

use crate::FitError;
use gpu_doctor_model::{DeviceState, GpuIndex, Inventory, Sample};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a GPU must offer to be picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickRequest {
    pub min_free_bytes: u64,
    /// Highest GPU utilisation accepted, in percent (`None`: any).
    pub max_util_percent: Option<u32>,
    pub count: usize,
}

/// One GPU, as `pick` judged it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub index: GpuIndex,
    /// Absent when the inventory does not name the GPU.
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub memory_free_bytes: Option<u64>,
    pub utilization_gpu_percent: Option<u32>,
    /// Why it was not picked (`None`: it qualifies).
    pub rejected: Option<String>,
}

impl Candidate {
    /// The name the lease and `CUDA_VISIBLE_DEVICES` use: the UUID, else `index-N`.
    pub fn key(&self) -> String {
        self.uuid
            .clone()
            .unwrap_or_else(|| format!("index-{}", self.index))
    }
}

/// Judges every GPU in `sample`: health first (lost, uncorrectable ECC errors, pending or
/// failed row remaps, pending page retirement), then leases, free memory and utilisation.
/// Qualifying GPUs come first, most free memory first, then least busy, then by index.
pub fn rank(
    inventory: &Inventory,
    sample: &Sample,
    req: &PickRequest,
    leased: &dyn Fn(&str) -> Option<String>,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = sample
        .devices
        .iter()
        .map(|d| {
            let info = inventory.devices.iter().find(|i| i.index == d.index);
            let mut c = Candidate {
                index: d.index,
                uuid: info.map(|i| i.uuid.0.clone()),
                name: info.map(|i| i.name.clone()),
                memory_free_bytes: d.memory_free_bytes.get(),
                utilization_gpu_percent: d.utilization_gpu_percent.get(),
                rejected: None,
            };
            c.rejected = reject(d, &c, req, leased);
            c
        })
        .collect();
    out.sort_by(|a, b| {
        a.rejected
            .is_some()
            .cmp(&b.rejected.is_some())
            .then(b.memory_free_bytes.cmp(&a.memory_free_bytes))
            .then(a.utilization_gpu_percent.cmp(&b.utilization_gpu_percent))
            .then(a.index.cmp(&b.index))
    });
    out
}

fn reject(
    d: &gpu_doctor_model::DeviceSample,
    c: &Candidate,
    req: &PickRequest,
    leased: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let DeviceState::Lost { reason } = &d.state {
        return Some(format!("lost ({reason})"));
    }
    if let Some(ecc) = d.ecc_errors.value()
        && ecc.volatile_uncorrected > 0
    {
        return Some(format!(
            "{} uncorrectable ECC errors since the driver loaded",
            ecc.volatile_uncorrected
        ));
    }
    if let Some(r) = d.remapped_rows.value() {
        if r.failure {
            return Some("a row remap failed".into());
        }
        if r.pending {
            return Some("a row remap waits for a GPU reset".into());
        }
    }
    if let Some(p) = d.retired_pages.value()
        && p.pending
    {
        return Some("a page retirement waits for a driver reload".into());
    }
    if let Some(holder) = leased(&c.key()) {
        return Some(format!("leased by {holder}"));
    }
    match c.memory_free_bytes {
        None => return Some("free memory unknown".into()),
        Some(free) if free < req.min_free_bytes => {
            return Some(format!(
                "{} free, under --min-free {}",
                crate::plan::human_bytes(free),
                crate::plan::human_bytes(req.min_free_bytes)
            ));
        }
        Some(_) => {}
    }
    if let Some(max) = req.max_util_percent {
        match c.utilization_gpu_percent {
            Some(u) if u > max => return Some(format!("{u} % busy, over --max-util {max}")),
            None => return Some("utilisation unknown".into()),
            Some(_) => {}
        }
    }
    None
}

/// A lease on one GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub gpu: String,
    pub pid: u32,
    /// Milliseconds since the Unix epoch after which the lease is void.
    pub until_ms: u64,
}

/// A directory of leases. Every use goes through [`LeaseDir::locked`].
#[derive(Debug, Clone)]
pub struct LeaseDir {
    path: PathBuf,
}

/// The leases in force, read under the directory's lock.
#[derive(Debug)]
pub struct Leases {
    dir: PathBuf,
    now_ms: u64,
    active: BTreeMap<String, Lease>,
}

/// A lease file larger than this is not ours; it is ignored rather than read.
const MAX_LEASE_BYTES: u64 = 4096;

impl LeaseDir {
    /// The default place: `$XDG_RUNTIME_DIR/gpu-doctor/locks`, else `/tmp/gpu-doctor-locks`.
    pub fn default_path() -> PathBuf {
        match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d).join("gpu-doctor").join("locks"),
            None => PathBuf::from("/tmp/gpu-doctor-locks"),
        }
    }

    pub fn new(path: impl Into<PathBuf>) -> LeaseDir {
        LeaseDir { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` with the leases in force, holding the directory's exclusive lock throughout.
    pub fn locked<T>(
        &self,
        now_ms: u64,
        f: impl FnOnce(&mut Leases) -> Result<T, FitError>,
    ) -> Result<T, FitError> {
        let err = |reason: String| FitError::Lock {
            path: self.path.clone(),
            reason,
        };
        std::fs::create_dir_all(&self.path).map_err(|e| err(e.to_string()))?;
        let lock_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.path.join(".lock"))
            .map_err(|e| err(format!(".lock: {e}")))?;
        // Blocks until the other picker is done; it holds the lock for milliseconds.
        rustix::fs::flock(&lock_file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| err(format!("flock: {e}")))?;
        let mut leases = Leases {
            dir: self.path.clone(),
            now_ms,
            active: BTreeMap::new(),
        };
        leases.load().map_err(|e| err(e.to_string()))?;
        let result = f(&mut leases);
        // Closing the file releases the lock, also if `f` failed.
        drop(lock_file);
        result
    }
}

impl Leases {
    fn load(&mut self) -> std::io::Result<()> {
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("lease") {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if meta.len() > MAX_LEASE_BYTES {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            match serde_json::from_str::<Lease>(&text) {
                Ok(lease) if lease.until_ms > self.now_ms => {
                    self.active.insert(lease.gpu.clone(), lease);
                }
                // Expired or unreadable: clean it up (we hold the lock, nobody else writes).
                _ => {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        Ok(())
    }

    /// Who holds `gpu`, in words, if anyone.
    pub fn holder(&self, gpu: &str) -> Option<String> {
        self.active.get(gpu).map(|l| {
            let left = l.until_ms.saturating_sub(self.now_ms).div_ceil(1000);
            format!("pid {} for {left} s more", l.pid)
        })
    }

    pub fn active(&self) -> impl Iterator<Item = &Lease> {
        self.active.values()
    }

    /// Takes `gpu` for `hold_ms` on behalf of `pid`: written to a temporary file and renamed,
    /// so a reader never sees half a lease.
    pub fn take(&mut self, gpu: &str, pid: u32, hold_ms: u64) -> Result<Lease, FitError> {
        let lease = Lease {
            gpu: gpu.to_owned(),
            pid,
            until_ms: self.now_ms.saturating_add(hold_ms),
        };
        let name = file_name(gpu);
        let tmp = self.dir.join(format!(".{name}.{pid}.tmp"));
        let dst = self.dir.join(format!("{name}.lease"));
        let err = |e: std::io::Error| FitError::Lock {
            path: dst.clone(),
            reason: e.to_string(),
        };
        let body = serde_json::to_vec(&lease).map_err(|e| err(std::io::Error::other(e)))?;
        let mut f = File::create(&tmp).map_err(err)?;
        f.write_all(&body).map_err(err)?;
        f.sync_all().map_err(err)?;
        std::fs::rename(&tmp, &dst).map_err(err)?;
        self.active.insert(lease.gpu.clone(), lease.clone());
        Ok(lease)
    }
}

/// A lease file name from a GPU key: only characters that are safe in a path.
fn file_name(gpu: &str) -> String {
    gpu.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_doctor_model::{DeviceInfo, DeviceSample, EccCounts, GpuUuid, Reading, RemappedRows};

    fn gpu(index: u32, free_gib: u64, util: u32) -> (DeviceInfo, DeviceSample) {
        let info = DeviceInfo {
            index: GpuIndex(index),
            uuid: GpuUuid(format!("GPU-{index:08}")),
            name: "NVIDIA H200".into(),
            pci_bus_id: Reading::Unsupported,
            compute_capability: Reading::Unsupported,
            memory_total_bytes: Reading::Value(141 << 30),
            temperature_slowdown_celsius: Reading::Unsupported,
            temperature_shutdown_celsius: Reading::Unsupported,
            pcie_max_link: Reading::Unsupported,
            serial: Reading::Unsupported,
        };
        let sample = DeviceSample {
            index: GpuIndex(index),
            memory_free_bytes: Reading::Value(free_gib << 30),
            utilization_gpu_percent: Reading::Value(util),
            ecc_errors: Reading::Value(EccCounts::default()),
            remapped_rows: Reading::Value(RemappedRows::default()),
            ..DeviceSample::default()
        };
        (info, sample)
    }

    fn machine(gpus: Vec<(DeviceInfo, DeviceSample)>) -> (Inventory, Sample) {
        let (infos, samples): (Vec<_>, Vec<_>) = gpus.into_iter().unzip();
        (
            Inventory {
                devices: infos,
                ..Inventory::default()
            },
            Sample {
                devices: samples,
                ..Sample::default()
            },
        )
    }

    fn req(min_free_gib: u64, max_util: Option<u32>) -> PickRequest {
        PickRequest {
            min_free_bytes: min_free_gib << 30,
            max_util_percent: max_util,
            count: 1,
        }
    }

    #[test]
    fn healthy_free_idle_gpus_come_first_by_free_memory() {
        let mut sick = gpu(2, 140, 0);
        sick.1.ecc_errors = Reading::Value(EccCounts {
            volatile_uncorrected: 3,
            ..EccCounts::default()
        });
        let mut lost = gpu(3, 140, 0);
        lost.1.state = DeviceState::Lost {
            reason: "fell off the bus".into(),
        };
        lost.1.memory_free_bytes = Reading::Failed("GPU is lost".into());
        let mut remap = gpu(4, 140, 0);
        remap.1.remapped_rows = Reading::Value(RemappedRows {
            pending: true,
            ..RemappedRows::default()
        });
        let (inv, s) = machine(vec![
            gpu(0, 30, 0),
            gpu(1, 100, 5),
            sick,
            lost,
            remap,
            gpu(5, 120, 60),
        ]);
        let ranked = rank(&inv, &s, &req(20, Some(10)), &|_| None);
        let order: Vec<u32> = ranked.iter().map(|c| c.index.0).collect();
        assert_eq!(order[..2], [1, 0]);
        let why = |i: u32| {
            ranked
                .iter()
                .find(|c| c.index.0 == i)
                .unwrap()
                .rejected
                .clone()
                .unwrap()
        };
        assert!(why(2).contains("uncorrectable"), "{}", why(2));
        assert!(why(3).starts_with("lost"), "{}", why(3));
        assert!(why(4).contains("remap"), "{}", why(4));
        assert_eq!(why(5), "60 % busy, over --max-util 10");
    }

    #[test]
    fn too_little_free_memory_and_leases_disqualify() {
        let (inv, s) = machine(vec![gpu(0, 10, 0), gpu(1, 100, 0)]);
        let leased = |k: &str| (k == "GPU-00000001").then(|| "pid 7".to_owned());
        let ranked = rank(&inv, &s, &req(20, None), &leased);
        assert!(ranked.iter().all(|c| c.rejected.is_some()));
        assert_eq!(
            ranked[1].rejected.as_deref(),
            Some("10.0 GiB free, under --min-free 20.0 GiB")
        );
        assert_eq!(ranked[0].rejected.as_deref(), Some("leased by pid 7"));
    }

    #[test]
    fn leases_expire_and_are_taken_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let leases = LeaseDir::new(dir.path());
        leases
            .locked(1_000, |l| {
                assert!(l.holder("GPU-a").is_none());
                l.take("GPU-a", 42, 60_000)?;
                Ok(())
            })
            .unwrap();
        let held = leases.locked(30_000, |l| Ok(l.holder("GPU-a"))).unwrap();
        assert_eq!(held.as_deref(), Some("pid 42 for 31 s more"));
        let after = leases.locked(61_001, |l| Ok(l.holder("GPU-a"))).unwrap();
        assert_eq!(after, None);
        // The expired lease file was removed.
        assert!(!dir.path().join("GPU-a.lease").exists());
    }

    #[test]
    fn garbage_lease_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("GPU-x.lease"), b"not json").unwrap();
        std::fs::write(dir.path().join("GPU-y.lease"), vec![b'{'; 10_000]).unwrap();
        let n = LeaseDir::new(dir.path())
            .locked(0, |l| Ok(l.active().count()))
            .unwrap();
        assert_eq!(n, 0);
        assert_eq!(file_name("../GPU x/"), "___GPU_x_");
    }
}
