//! The Python probe: the interpreter (`python3` from `PATH`, or `--python PATH`), whether a
//! venv or conda env is active, installed `nvidia-*` wheels, and for torch, tensorflow, jax
//! and cupy their version, CUDA build, cuDNN, compiled architectures, the CUDA libraries
//! they map and whether a tiny GPU computation works.
//!
//! One short "base" interpreter finds out what is installed; then each installed framework
//! is probed in its own interpreter, all at once. Separate interpreters because importing
//! torch and jax into one process makes the second reuse the first one's cuDNN (so "which
//! copy does each framework load" would be wrong) and because the slowest import (often
//! jax or tensorflow) then bounds the wall time instead of the sum. Every interpreter runs
//! under the host's time limit.
//!
//! A framework that imported and computed on the GPU is kept in the host's probe cache
//! (`probe_cache`) and reused while nothing it depends on has changed: importing torch is
//! seconds, everything else `check` does is tens of milliseconds.

use crate::Probe;
use crate::facts::{Framework, Interpreter, ProbeStatus, PythonFacts};
use crate::host::{Host, RunError, run_bounded};
use crate::probe_cache::{CacheKey, ProbeCache};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Instant, SystemTime};

const SCRIPT: &str = include_str!("python/probe.py");
const MARK: &str = "GPU_DOCTOR_PROBE ";

/// Runs the interpreter probes.
#[derive(Debug, Clone, Default)]
pub struct PythonProbe;

#[derive(Debug, Deserialize)]
struct BaseReport {
    interpreter: Interpreter,
    #[serde(default)]
    packages: BTreeMap<String, String>,
    #[serde(default)]
    frameworks: Vec<String>,
    /// What the probe cache keys on (see `probe.py`).
    #[serde(default)]
    fingerprint: Vec<String>,
}

impl Probe for PythonProbe {
    type Facts = PythonFacts;
    const NAME: &'static str = "python";

    fn probe(&self, host: &Host) -> PythonFacts {
        let Some(python) = host.python.clone().or_else(|| host.which("python3")) else {
            return PythonFacts {
                status: ProbeStatus::unavailable(
                    "no `python3` on PATH (pass `--python PATH` to probe another interpreter)",
                ),
                ..PythonFacts::default()
            };
        };
        let base: BaseReport = match run_probe(host, &python, "base") {
            Ok(v) => match serde_json::from_value(v) {
                Ok(b) => b,
                Err(e) => {
                    return PythonFacts {
                        status: ProbeStatus::unavailable(format!(
                            "{} answered the probe with something unexpected: {e}",
                            python.display()
                        )),
                        ..PythonFacts::default()
                    };
                }
            },
            Err(reason) => {
                return PythonFacts {
                    status: ProbeStatus::unavailable(reason),
                    ..PythonFacts::default()
                };
            }
        };
        let cache = host.probe_cache.as_ref().map(ProbeCache::new);
        let host_key = cache.as_ref().map(|_| {
            CacheKey::new(
                host,
                SCRIPT,
                &base.interpreter.executable,
                &base.fingerprint,
            )
        });
        let frameworks: BTreeMap<String, Framework> = std::thread::scope(|s| {
            let handles: Vec<_> = base
                .frameworks
                .iter()
                .map(|name| {
                    let python = &python;
                    let cache = cache
                        .as_ref()
                        .zip(host_key.as_ref().map(|k| k.for_framework(name)));
                    (
                        name.clone(),
                        s.spawn(move || {
                            let now = SystemTime::now();
                            let cached = cache
                                .as_ref()
                                .filter(|_| !host.fresh_probes)
                                .and_then(|(c, key)| c.load(key, now));
                            if let Some(hit) = cached {
                                return hit;
                            }
                            let fresh = probe_framework(host, python, name);
                            if let Some((c, key)) = &cache {
                                c.store(key, &fresh, now);
                            }
                            fresh
                        }),
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|(name, h)| {
                    let fw = h.join().unwrap_or_else(|_| Framework {
                        import_error: Some("the probe thread panicked".into()),
                        ..Framework::default()
                    });
                    (name, fw)
                })
                .collect()
        });
        PythonFacts {
            status: ProbeStatus::Ok,
            interpreter: Some(base.interpreter),
            packages: base.packages,
            frameworks,
        }
    }
}

fn probe_framework(host: &Host, python: &PathBuf, name: &str) -> Framework {
    let start = Instant::now();
    match run_probe(host, python, name) {
        Ok(v) => serde_json::from_value(v).unwrap_or_else(|e| Framework {
            import_error: Some(format!("unexpected probe output: {e}")),
            ..Framework::default()
        }),
        Err(reason) => Framework {
            // The import itself may have hung (a wedged driver does that): say so.
            cuda_works: Some(false),
            cuda_error: Some(reason),
            probe_ms: Some(u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)),
            ..Framework::default()
        },
    }
}

/// Runs `python -c SCRIPT what` and returns the JSON after the marker.
fn run_probe(host: &Host, python: &PathBuf, what: &str) -> Result<serde_json::Value, String> {
    let mut cmd = Command::new(python);
    cmd.arg("-c").arg(SCRIPT).arg(what);
    cmd.env_clear().envs(&host.env);
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    let out = run_bounded(cmd, host.timeout).map_err(|e| match e {
        RunError::Timeout { seconds, .. } => {
            format!(
                "the {what} probe did not finish within {seconds:.0} s (raise it with --timeout)"
            )
        }
        RunError::Spawn { .. } => e.to_string(),
    })?;
    let Some(json) = out.stdout.lines().rev().find_map(|l| l.strip_prefix(MARK)) else {
        let last = out
            .stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        return Err(format!(
            "{} {what} probe failed (exit {}): {last}",
            python.display(),
            out.status
                .map_or_else(|| "signal".to_owned(), |c| c.to_string())
        ));
    };
    serde_json::from_str(json).map_err(|e| format!("the {what} probe printed bad JSON: {e}"))
}
