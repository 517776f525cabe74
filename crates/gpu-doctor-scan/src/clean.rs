//! Turns one raw line segment into clean text: colour codes and control bytes out, lossy
//! UTF-8, and the `[rankN]:` prefix that torchrun and friends put on every line taken off
//! (the rank is kept).

/// A cleaned segment and the rank its prefix named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clean {
    pub text: String,
    pub rank: Option<u32>,
}

/// Cleans one segment (already split on `\n` and `\r`, already capped in length).
pub fn clean(raw: &[u8]) -> Clean {
    let stripped = strip_controls(raw);
    let text = String::from_utf8_lossy(&stripped);
    let mut s: &str = text.trim();
    let mut rank = None;
    // Launchers nest prefixes (`[default0]:[rank0]: ...`): peel a few.
    for _ in 0..3 {
        match strip_rank_prefix(s) {
            Some((r, rest)) => {
                if r.is_some() {
                    rank = r;
                }
                s = rest.trim_start();
            }
            None => break,
        }
    }
    Clean {
        text: s.trim_end().to_owned(),
        rank,
    }
}

/// Removes ANSI escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \`, and
/// two-byte escapes) and turns other control bytes (NUL, backspace, ...) into spaces. Tabs
/// become spaces too, so patterns can rely on plain spaces.
fn strip_controls(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == 0x1b {
            i += 1;
            match raw.get(i) {
                Some(b'[') => {
                    i += 1;
                    // Parameters and intermediates, then one final byte in 0x40..=0x7e.
                    while i < raw.len() && !(0x40..=0x7e).contains(&raw[i]) {
                        i += 1;
                    }
                    i += 1;
                }
                Some(b']') => {
                    i += 1;
                    while i < raw.len() {
                        if raw[i] == 0x07 {
                            i += 1;
                            break;
                        }
                        if raw[i] == 0x1b && raw.get(i + 1) == Some(&b'\\') {
                            i += 2;
                            break;
                        }
                        i += 1;
                    }
                }
                Some(_) => i += 1,
                None => {}
            }
            continue;
        }
        if b < 0x20 || b == 0x7f {
            out.push(b' ');
        } else {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// `[rank3]:`, `rank3:`, `[default3]:` (accelerate / elastic), `[1,3]<stderr>:` (mpirun
/// `--tag-output`). Returns the rank (if the prefix names one) and the rest.
fn strip_rank_prefix(s: &str) -> Option<(Option<u32>, &str)> {
    if let Some(rest) = s.strip_prefix('[') {
        let close = rest.find(']')?;
        if close > 24 {
            return None;
        }
        let inner = &rest[..close];
        let after = &rest[close + 1..];
        let after = if let Some(a) = after.strip_prefix("<stderr>") {
            a
        } else if let Some(a) = after.strip_prefix("<stdout>") {
            a
        } else {
            after
        };
        let after = after.strip_prefix(':')?;
        let rank = if let Some(n) = inner.strip_prefix("rank") {
            Some(n.trim().parse().ok()?)
        } else if let Some(n) = inner.strip_prefix("default") {
            Some(n.trim().parse().ok()?)
        } else if let Some((_, r)) = inner.split_once(',') {
            Some(r.trim().parse().ok()?)
        } else {
            return None;
        };
        return Some((rank, after));
    }
    let rest = s.strip_prefix("rank")?;
    let colon = rest.find(':')?;
    let n: u32 = rest[..colon].trim().parse().ok()?;
    Some((Some(n), &rest[colon + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour_and_controls() {
        let c = clean(b"\x1b[1;31mRuntimeError\x1b[0m: CUDA\x00 error\x1b]0;title\x07!");
        assert_eq!(c.text, "RuntimeError: CUDA  error!");
    }

    #[test]
    fn strips_rank_prefixes() {
        assert_eq!(clean(b"[rank3]: torch.OutOfMemoryError").rank, Some(3));
        assert_eq!(
            clean(b"[rank3]: torch.OutOfMemoryError").text,
            "torch.OutOfMemoryError"
        );
        assert_eq!(clean(b"rank12: boom").rank, Some(12));
        assert_eq!(clean(b"[default1]:[rank5]: x").rank, Some(5));
        assert_eq!(clean(b"[1,2]<stderr>: x").text, "x");
        // Not a prefix: left alone.
        assert_eq!(clean(b"[W socket.cpp] x").text, "[W socket.cpp] x");
        assert_eq!(clean(b"[rankX]: x").text, "[rankX]: x");
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let c = clean(b"CUDA \xff\xfe error");
        assert!(c.text.starts_with("CUDA "));
        assert!(c.text.ends_with(" error"));
    }
}
