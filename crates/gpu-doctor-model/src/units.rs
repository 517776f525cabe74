//! Byte sizes and durations as people write them (`40GiB`, `1.5 GB`, `100ms`, `2h`).

/// Bytes in a GiB, as a float for display arithmetic.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// `3.5 GiB`, `512.0 MiB`, `12 B`: binary units, one decimal.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Parses `40GiB`, `40G` (binary), `40GB` (decimal), `1.5 TiB`, `512MiB`, `1000` (bytes).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size such as 40GiB or 512MiB"))?;
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => GIB,
        "t" | "tib" => GIB * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{text}` (use B, KiB, MiB, GiB, TiB, or KB/MB/GB/TB)"
            ));
        }
    };
    let bytes = number * multiplier;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

/// Parses `100ms`, `1.5s`, `10m`, `2h`, `7d`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration such as 100ms, 30s, 2h"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "" | "s" | "sec" => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        "d" => number * 86400.0,
        other => {
            return Err(format!(
                "unknown duration unit `{other}` in `{text}` (use ms, s, m, h, d)"
            ));
        }
    };
    std::time::Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{text}` is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("40GiB"), Ok(40 << 30));
        assert_eq!(parse_bytes("1.5 GB"), Ok(1_500_000_000));
        assert_eq!(parse_bytes("512"), Ok(512));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("3 parsecs").is_err());
        assert_eq!(format_bytes(3_758_096_384), "3.5 GiB");
        assert_eq!(format_bytes(1000), "1000 B");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("100ms").unwrap().as_millis(), 100);
        assert_eq!(parse_duration("2h").unwrap().as_secs(), 7200);
        assert_eq!(parse_duration("5").unwrap().as_secs(), 5);
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("1 fortnight").is_err());
    }
}
