//! Sizes as frameworks print them: `12.00 GiB`, `1.25GiB`, `932.02 MiB`, `0 bytes`,
//! `1,073,741,824 bytes`, `12.3G`, `3.5 GB`.
//!
//! Binary and decimal prefixes are kept apart (`GiB` is 2^30, `GB` 10^9) except for a bare
//! `G`/`M`, which tools such as nvidia-smi and training loggers use for 2^30/2^20.

/// Bytes in a size written as a number and a unit. `None` for anything unparsable, for
/// negative numbers and for `NVML`'s 2^64 "unknown" sentinel (`17179869184.00 GiB`).
pub fn parse_size(number: &str, unit: &str) -> Option<u64> {
    let cleaned: String = number.chars().filter(|c| *c != ',').collect();
    let value: f64 = cleaned.parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    let multiplier = unit_multiplier(unit)?;
    let bytes = value * multiplier;
    // NVML reports an unknown per-process figure as 2^64 - 1; PyTorch prints it as
    // 17179869184.00 GiB. Anything at or above 2^63 bytes is not a real measurement.
    if bytes >= 9.223_372_036_854_776e18 {
        return None;
    }
    Some(bytes.round() as u64)
}

/// Bytes per unit, for the unit spellings seen in logs.
pub fn unit_multiplier(unit: &str) -> Option<f64> {
    let u = unit.trim();
    Some(match u {
        "" | "B" | "b" | "byte" | "bytes" => 1.0,
        "KiB" | "KB" | "kB" | "K" | "k" => {
            if u == "KB" || u == "kB" {
                1e3
            } else {
                1024.0
            }
        }
        "MiB" | "M" => 1024.0 * 1024.0,
        "MB" => 1e6,
        "GiB" | "G" => 1024.0 * 1024.0 * 1024.0,
        "GB" => 1e9,
        "TiB" | "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "TB" => 1e12,
        "EB" => 1e18,
        _ => return None,
    })
}

/// The size as a person reads it: `12.00 GiB`, `512.00 MiB`, `0 bytes`.
pub fn format_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < KIB * KIB {
        format!("{:.2} KiB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.2} MiB", b / (KIB * KIB))
    } else if b < KIB * KIB * KIB * KIB {
        format!("{:.2} GiB", b / (KIB * KIB * KIB))
    } else {
        format!("{:.2} TiB", b / (KIB * KIB * KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_spellings_in_logs() {
        assert_eq!(parse_size("12.00", "GiB"), Some(12 * (1 << 30)));
        assert_eq!(parse_size("1,073,741,824", "bytes"), Some(1 << 30));
        assert_eq!(parse_size("0", "bytes"), Some(0));
        assert_eq!(parse_size("1.5", "GB"), Some(1_500_000_000));
        assert_eq!(parse_size("20", "M"), Some(20 << 20));
        assert_eq!(parse_size("17179869184.00", "GiB"), None);
        assert_eq!(parse_size("-1", "GiB"), None);
        assert_eq!(parse_size("x", "GiB"), None);
        assert_eq!(parse_size("1", "parsecs"), None);
    }

    #[test]
    fn formats_like_pytorch() {
        assert_eq!(format_bytes(0), "0 bytes");
        assert_eq!(format_bytes(12 << 30), "12.00 GiB");
        assert_eq!(format_bytes(1 << 50), "1024.00 TiB");
        assert_eq!(format_bytes(600 << 20), "600.00 MiB");
        assert_eq!(format_bytes(2048), "2.00 KiB");
    }
}
