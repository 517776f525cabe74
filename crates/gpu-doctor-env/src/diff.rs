//! Comparing two [`EnvFacts`] (`gpu-doctor env diff A.json B.json`): every value that
//! differs, by its dotted path, ranked by how likely it is to explain "works there, not
//! here" (driver and framework builds first, hostnames last). Live readings that change
//! from second to second (temperatures, memory in use, timings) are left out.

use crate::EnvFacts;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One value that differs between two machines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// Dotted path into the export, e.g. `python.frameworks.torch.cuda_build`.
    pub path: String,
    /// The value on the first machine (`None`: absent there).
    pub a: Option<String>,
    pub b: Option<String>,
    /// 0 = most likely to matter.
    pub rank: u8,
}

/// Paths that change on their own and explain nothing.
const NOISE: [&str; 15] = [
    "timings_ms",
    "probe_ms",
    "cached_at",
    "schema_version",
    "gpus.sample.timestamp_ms",
    "gpus.sample.processes",
    "memory_used_bytes",
    "memory_free_bytes",
    "utilization_",
    "temperature_celsius",
    "power_draw_milliwatts",
    "clock_sm_mhz",
    "clock_memory_mhz",
    "kernel_log.xids",
    "serial",
];

/// How much a path matters, most first.
const RANKS: [(&str, u8); 16] = [
    ("driver.kernel_module.version", 0),
    ("gpus.inventory.driver_version", 0),
    ("gpus.inventory.cuda_driver_version", 0),
    ("python.frameworks.", 1),
    ("gpus.inventory.devices.", 2),
    ("variables.set.CUDA_VISIBLE_DEVICES", 2),
    ("variables.set.LD_LIBRARY_PATH", 2),
    ("variables.set.PYTORCH", 2),
    ("driver.", 3),
    ("gpus.sample.devices.", 3),
    ("python.packages.", 4),
    ("python.interpreter.version", 4),
    ("cuda.", 5),
    ("variables.", 5),
    ("python.", 6),
    ("kernel_log.", 7),
];

fn rank(path: &str) -> u8 {
    RANKS
        .iter()
        .find(|(p, _)| path.starts_with(p))
        .map_or(8, |(_, r)| *r)
}

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, String>) {
    if NOISE.iter().any(|n| prefix.contains(n)) {
        return;
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, v, out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            out.insert(prefix.to_owned(), parts.join(", "));
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), v, out);
            }
        }
        Value::Null => {}
        other => {
            out.insert(prefix.to_owned(), scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every difference, most likely to matter first, then by path.
pub fn diff(a: &EnvFacts, b: &EnvFacts) -> Vec<Difference> {
    let mut fa = BTreeMap::new();
    let mut fb = BTreeMap::new();
    flatten("", &serde_json::to_value(a).unwrap_or_default(), &mut fa);
    flatten("", &serde_json::to_value(b).unwrap_or_default(), &mut fb);
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<Difference> = keys
        .into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| Difference {
            path: k.clone(),
            a: fa.get(k).cloned(),
            b: fb.get(k).cloned(),
            rank: rank(k),
        })
        .collect();
    out.sort_by(|x, y| x.rank.cmp(&y.rank).then(x.path.cmp(&y.path)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Framework, KernelModule};

    #[test]
    fn the_driver_and_framework_build_come_first() {
        let mut a = EnvFacts::default();
        a.host.hostname = Some("good".into());
        a.driver.kernel_module = Some(KernelModule {
            version: "550.54.14".into(),
            flavor: "open".into(),
            line: "x".into(),
        });
        a.python.frameworks.insert(
            "torch".into(),
            Framework {
                version: Some("2.3.0+cu121".into()),
                cuda_build: Some("12.1".into()),
                probe_ms: Some(900),
                ..Framework::default()
            },
        );
        let mut b = a.clone();
        b.host.hostname = Some("bad".into());
        b.driver.kernel_module.as_mut().unwrap().version = "470.182.03".into();
        b.python.frameworks.get_mut("torch").unwrap().probe_ms = Some(1200);
        b.timings_ms.insert("python".into(), 5);
        let d = diff(&a, &b);
        let paths: Vec<&str> = d.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["driver.kernel_module.version", "host.hostname"]);
        assert_eq!(d[0].b.as_deref(), Some("470.182.03"));
        assert!(diff(&a, &a).is_empty());
    }
}
