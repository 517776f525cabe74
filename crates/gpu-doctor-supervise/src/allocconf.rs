//! PyTorch's allocator settings (`PYTORCH_CUDA_ALLOC_CONF`, and `PYTORCH_ALLOC_CONF` since 2.8):
//! adding `expandable_segments:True` to whatever the user already set.
//!
//! Both names are set to the same merged value: PyTorch 2.8–2.11 warn that the CUDA name is
//! deprecated, and 2.9.1 silently ignored the new name for CUDA (pytorch/pytorch#183387), so
//! only setting both is safe across versions.

/// The two environment variables PyTorch reads its allocator settings from.
pub const ALLOC_CONF_VARS: [&str; 2] = ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"];

/// Splits `key:value,key:[a:1,b:2]` into its top-level options (commas inside brackets belong
/// to the option, as in `roundup_power2_divisions:[256:1,512:2]`).
fn options(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in value.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&value[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .collect()
}

fn key(option: &str) -> &str {
    option.split(':').next().unwrap_or(option).trim()
}

/// Whether the settings already turn expandable segments on.
pub fn has_expandable_segments(value: &str) -> bool {
    options(value).iter().any(|o| {
        key(o) == "expandable_segments"
            && o.split(':')
                .nth(1)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    })
}

/// Whether the settings choose the `cudaMallocAsync` backend, where expandable segments do
/// not apply.
pub fn uses_async_backend(value: &str) -> bool {
    options(value)
        .iter()
        .any(|o| key(o) == "backend" && o.contains("cudaMallocAsync"))
}

/// The user's settings from both variables merged (the newer name wins on a repeated key),
/// with `expandable_segments:True` set.
pub fn with_expandable_segments(cuda_conf: Option<&str>, alloc_conf: Option<&str>) -> String {
    let mut merged: Vec<String> = Vec::new();
    for value in [cuda_conf, alloc_conf].into_iter().flatten() {
        for option in options(value) {
            let k = key(option);
            merged.retain(|m| key(m) != k);
            merged.push(option.to_owned());
        }
    }
    merged.retain(|m| key(m) != "expandable_segments");
    merged.push("expandable_segments:True".to_owned());
    merged.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_table() {
        let cases: &[(Option<&str>, Option<&str>, &str)] = &[
            (None, None, "expandable_segments:True"),
            (
                Some("max_split_size_mb:128"),
                None,
                "max_split_size_mb:128,expandable_segments:True",
            ),
            (
                Some("max_split_size_mb:128"),
                Some("max_split_size_mb:256,garbage_collection_threshold:0.6"),
                "max_split_size_mb:256,garbage_collection_threshold:0.6,expandable_segments:True",
            ),
            (
                Some("expandable_segments:False"),
                None,
                "expandable_segments:True",
            ),
            (
                Some("roundup_power2_divisions:[256:1,512:2],max_split_size_mb:64"),
                None,
                "roundup_power2_divisions:[256:1,512:2],max_split_size_mb:64,expandable_segments:True",
            ),
            (Some(" , "), None, "expandable_segments:True"),
        ];
        for &(cuda, alloc, want) in cases {
            assert_eq!(
                with_expandable_segments(cuda, alloc),
                want,
                "{cuda:?} {alloc:?}"
            );
        }
    }

    #[test]
    fn detects_settings() {
        assert!(has_expandable_segments(
            "max_split_size_mb:20,expandable_segments:True"
        ));
        assert!(has_expandable_segments("expandable_segments:true"));
        assert!(!has_expandable_segments("expandable_segments:False"));
        assert!(!has_expandable_segments(""));
        assert!(uses_async_backend("backend:cudaMallocAsync"));
        assert!(!uses_async_backend("backend:native"));
    }
}
