//! Variable rules: `CUDA_VISIBLE_DEVICES` names GPUs that exist (GD406),
//! `CUDA_DEVICE_ORDER` is valid and set where numbering differs (GD407), `LD_LIBRARY_PATH`
//! does not shadow the driver (GD408), and `PYTORCH_CUDA_ALLOC_CONF` parses (GD409).

use super::checks::Checklist;
use super::driver::Context;
use super::knowledge::Version;
use gpu_doctor_env::EnvFacts;
use gpu_doctor_model::{Cause, Evidence, Finding, Severity};

pub fn check(facts: &EnvFacts, ctx: &Context, list: &mut Checklist) {
    visible_devices(facts, ctx, list);
    device_order(facts, ctx, list);
    ld_library_path(facts, list);
    alloc_conf(facts, list);
}

fn var_evidence(name: &str, value: &str) -> Evidence {
    Evidence {
        source: "environment".into(),
        text: format!("{name}={value}"),
        ..Evidence::default()
    }
}

fn visible_devices(facts: &EnvFacts, ctx: &Context, list: &mut Checklist) {
    const ID: &str = "env.cuda_visible_devices";
    let Some(value) = facts.variables.get("CUDA_VISIBLE_DEVICES") else {
        list.pass(ID, "not set: CUDA sees every GPU");
        return;
    };
    let trimmed = value.trim();
    let hide_all =
        trimmed.is_empty() || trimmed == "-1" || trimmed.eq_ignore_ascii_case("NoDevFiles");
    let mut problems = Vec::new();
    if hide_all {
        problems.push(if trimmed.is_empty() {
            "it is set but empty, which hides every GPU".to_owned()
        } else {
            format!("`{trimmed}` hides every GPU")
        });
    } else {
        let count = ctx.gpus.len();
        let mut seen = Vec::new();
        for entry in trimmed.split(',').map(str::trim) {
            let resolved = if let Ok(i) = entry.parse::<usize>() {
                if count > 0 && i >= count {
                    problems.push(format!(
                        "index {i} does not exist (GPUs are 0..{})",
                        count - 1
                    ));
                }
                Some(format!("#{i}"))
            } else if entry.starts_with("GPU-") || entry.starts_with("MIG-") {
                let matches: Vec<&String> = ctx
                    .gpus
                    .iter()
                    .map(|g| &g.3)
                    .filter(|u| u.starts_with(entry))
                    .collect();
                if entry.starts_with("GPU-") && count > 0 && matches.is_empty() {
                    problems.push(format!("no GPU has UUID {entry}"));
                } else if matches.len() > 1 {
                    problems.push(format!("{entry} matches {} GPUs", matches.len()));
                }
                matches
                    .first()
                    .map(|u| (*u).clone())
                    .or_else(|| Some(entry.to_owned()))
            } else {
                problems.push(format!(
                    "`{entry}` is neither an index nor a GPU-/MIG- UUID"
                ));
                None
            };
            if let Some(r) = resolved {
                if seen.contains(&r) {
                    problems.push(format!("`{entry}` is listed twice"));
                }
                seen.push(r);
            }
        }
        if !problems.is_empty() {
            problems.push("CUDA ignores everything from the first bad entry on".to_owned());
        }
    }
    if problems.is_empty() {
        list.pass(
            ID,
            format!("CUDA_VISIBLE_DEVICES={trimmed}: CUDA numbers these as 0.."),
        );
        return;
    }
    let f = Finding::new(
        "GD406",
        Cause::EnvVisibleDevices,
        Severity::Error,
        format!("CUDA_VISIBLE_DEVICES: {}", problems.join("; ")),
    )
    .with_evidence(var_evidence("CUDA_VISIBLE_DEVICES", value))
    .with_remedy(
        if ctx.gpus.is_empty() {
            "Unset it, or list GPU indices or UUIDs that exist".to_owned()
        } else {
            format!(
                "Unset it, or name GPUs that exist (indices 0..{} or UUIDs from `nvidia-smi -L`)",
                ctx.gpus.len() - 1
            )
        },
        Some(if ctx.gpus.is_empty() {
            "unset CUDA_VISIBLE_DEVICES".to_owned()
        } else {
            format!(
                "export CUDA_VISIBLE_DEVICES={}",
                (0..ctx.gpus.len())
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }),
        None,
    );
    list.problem(ID, f);
}

fn device_order(facts: &EnvFacts, ctx: &Context, list: &mut Checklist) {
    const ID: &str = "env.cuda_device_order";
    match facts.variables.get("CUDA_DEVICE_ORDER") {
        Some(v @ ("PCI_BUS_ID" | "FASTEST_FIRST")) => {
            list.pass(ID, format!("CUDA_DEVICE_ORDER={v}"));
        }
        Some(v) => {
            let f = Finding::new(
                "GD407",
                Cause::EnvVisibleDevices,
                Severity::Error,
                format!("CUDA_DEVICE_ORDER={v} is not a valid order (PCI_BUS_ID or FASTEST_FIRST)"),
            )
            .with_evidence(var_evidence("CUDA_DEVICE_ORDER", v))
            .with_remedy(
                "Use the order nvidia-smi uses",
                Some("export CUDA_DEVICE_ORDER=PCI_BUS_ID".into()),
                None,
            );
            list.problem(ID, f);
        }
        None => {
            let mut names: Vec<&String> = ctx.gpus.iter().map(|g| &g.1).collect();
            names.sort();
            names.dedup();
            if names.len() > 1 {
                let f = Finding::new(
                    "GD407",
                    Cause::EnvVisibleDevices,
                    Severity::Warn,
                    format!(
                        "CUDA_DEVICE_ORDER is not set and the GPUs differ ({}): CUDA numbers them fastest first, nvidia-smi and NVML by PCI bus, so `cuda:0` may not be GPU 0",
                        names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                )
                .with_remedy("Number GPUs the way nvidia-smi does", Some("export CUDA_DEVICE_ORDER=PCI_BUS_ID".into()), None);
                list.problem(ID, f);
            } else {
                list.pass(ID, "not set; all GPUs are the same model, so CUDA's and nvidia-smi's numbering agree");
            }
        }
    }
}

fn ld_library_path(facts: &EnvFacts, list: &mut Checklist) {
    const ID: &str = "env.ld_library_path";
    let Some(value) = facts.variables.get("LD_LIBRARY_PATH") else {
        list.pass(ID, "not set");
        return;
    };
    let kernel = facts
        .driver
        .kernel_module
        .as_ref()
        .and_then(|m| Version::parse(&m.version));
    // Driver libraries of another version found through LD_LIBRARY_PATH shadow the right ones.
    let shadowing: Vec<String> = facts
        .driver
        .nvml_libraries
        .iter()
        .chain(&facts.driver.cuda_libraries)
        .filter(|c| c.origin == "LD_LIBRARY_PATH" && !c.stub)
        .filter_map(|c| {
            let v = Version::parse(c.version.as_deref().filter(|v| v.contains('.'))?)?;
            (Some(&v) != kernel.as_ref()).then(|| format!("{} {v} in {}", c.name, c.path))
        })
        .collect();
    let compat: Vec<&str> = value.split(':').filter(|d| d.contains("/compat")).collect();
    if shadowing.is_empty() && compat.is_empty() {
        list.pass(
            ID,
            format!(
                "{} folder(s); no driver library of another version in them",
                value.split(':').filter(|s| !s.is_empty()).count()
            ),
        );
        return;
    }
    let (severity, message) = if shadowing.is_empty() {
        (
            Severity::Warn,
            format!(
                "LD_LIBRARY_PATH has CUDA forward-compatibility libraries ({}): they work on data-center GPUs only (CUDA errors 803/804 elsewhere)",
                compat.join(", ")
            ),
        )
    } else {
        (
            Severity::Error,
            format!(
                "LD_LIBRARY_PATH shadows the driver's libraries with another version: {} (kernel module {})",
                shadowing.join(", "),
                kernel.map_or_else(|| "not loaded".to_owned(), |k| k.to_string())
            ),
        )
    };
    let kept: Vec<&str> = value
        .split(':')
        .filter(|d| {
            !d.is_empty()
                && !compat.contains(d)
                && !shadowing
                    .iter()
                    .any(|s| s.contains(&format!(" in {}/", d.trim_end_matches('/'))))
        })
        .collect();
    let f = Finding::new("GD408", Cause::EnvNvmlMismatch, severity, message)
        .with_evidence(var_evidence("LD_LIBRARY_PATH", value))
        .with_remedy(
            "Drop those folders from LD_LIBRARY_PATH so the loader finds the installed driver's libraries",
            Some(if kept.is_empty() {
                "unset LD_LIBRARY_PATH".to_owned()
            } else {
                format!("export LD_LIBRARY_PATH={}", kept.join(":"))
            }),
            None,
        );
    list.problem(ID, f);
}

fn alloc_conf(facts: &EnvFacts, list: &mut Checklist) {
    const ID: &str = "env.pytorch_cuda_alloc_conf";
    let set: Vec<(&str, &str)> = ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"]
        .into_iter()
        .filter_map(|n| facts.variables.get(n).map(|v| (n, v)))
        .collect();
    if set.is_empty() {
        list.pass(ID, "not set (the caching allocator's defaults)");
        return;
    }
    let mut errors = Vec::new();
    for (name, value) in &set {
        if let Err(e) = parse_alloc_conf(value) {
            errors.push(format!("{name}: {e}"));
        }
    }
    if errors.is_empty() {
        list.pass(
            ID,
            set.iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        return;
    }
    let mut f = Finding::new(
        "GD409",
        Cause::Other,
        Severity::Error,
        format!(
            "{}: torch stops at the first CUDA allocation with this setting",
            errors.join("; ")
        ),
    );
    for (name, value) in &set {
        f = f.with_evidence(var_evidence(name, value));
    }
    f = f.with_remedy(
        "Use `key:value` pairs separated by commas, e.g.",
        Some("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into()),
        Some("keys: max_split_size_mb, roundup_power2_divisions, garbage_collection_threshold, expandable_segments, backend, release_lock_on_cudamalloc, pinned_use_cuda_host_register, pinned_num_register_threads".into()),
    );
    list.problem(ID, f);
}

/// Checks `PYTORCH_CUDA_ALLOC_CONF` the way c10's `CUDAAllocatorConfig` parses it:
/// comma-separated `key:value` pairs with known keys and values of the right kind.
pub fn parse_alloc_conf(value: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    // `roundup_power2_divisions:[256:1,512:2]` has commas inside brackets.
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, ch) in value.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&value[start..]);
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let Some((key, val)) = item.split_once(':') else {
            return Err(format!("`{item}` is not `key:value`"));
        };
        let (key, val) = (key.trim(), val.trim());
        let number = |v: &str| v.parse::<f64>().is_ok();
        let boolean = |v: &str| matches!(v, "True" | "False" | "true" | "false" | "1" | "0");
        let ok = match key {
            "max_split_size_mb" => val.parse::<u64>().is_ok_and(|v| v > 20),
            "garbage_collection_threshold" => val.parse::<f64>().is_ok_and(|v| v > 0.0 && v < 1.0),
            "roundup_power2_divisions" => {
                number(val) || (val.starts_with('[') && val.ends_with(']'))
            }
            "expandable_segments"
            | "release_lock_on_cudamalloc"
            | "pinned_use_cuda_host_register"
            | "pinned_use_background_threads"
            | "graph_capture_record_stream_reuse" => boolean(val),
            "backend" => matches!(val, "native" | "cudaMallocAsync"),
            "pinned_num_register_threads" => val
                .parse::<u32>()
                .is_ok_and(|v| v.is_power_of_two() && v <= 128),
            "per_process_memory_fraction" => val.parse::<f64>().is_ok_and(|v| v > 0.0 && v <= 1.0),
            _ => {
                return Err(format!(
                    "unknown option `{key}` (torch: \"Unrecognized CachingAllocator option: {key}\")"
                ));
            }
        };
        if !ok {
            return Err(format!("bad value `{val}` for `{key}`"));
        }
        out.push((key.to_owned(), val.to_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_conf_syntax() {
        assert!(parse_alloc_conf("expandable_segments:True").is_ok());
        assert!(parse_alloc_conf("max_split_size_mb:128,garbage_collection_threshold:0.6").is_ok());
        assert!(
            parse_alloc_conf("roundup_power2_divisions:[256:1,512:2,>:8],backend:native").is_ok()
        );
        assert!(
            parse_alloc_conf("expandable_segment:True")
                .unwrap_err()
                .contains("unknown option")
        );
        assert!(
            parse_alloc_conf("max_split_size_mb=128")
                .unwrap_err()
                .contains("key:value")
        );
        assert!(
            parse_alloc_conf("max_split_size_mb:10").is_err(),
            "must be > 20"
        );
        assert!(parse_alloc_conf("garbage_collection_threshold:1.5").is_err());
        assert!(parse_alloc_conf("backend:cudaMalloc").is_err());
    }
}
