//! Turns one raw line segment into clean text: colour codes and control bytes out, lossy
//! UTF-8, full-width punctuation folded to ASCII, and the prefixes launchers put on every
//! line taken off: torchrun's `[rankN]:` and Slurm's `srun --label` `N: ` (the rank is kept),
//! docker compose's `service-1  | ` (the service is kept).

/// A cleaned segment and the rank its prefix named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clean {
    pub text: String,
    pub rank: Option<u32>,
    /// The docker compose service whose output this is (`qna-transformers_1`), when the
    /// line carries compose's prefix.
    pub service: Option<String>,
}

/// Cleans one segment (already split on `\n` and `\r`, already capped in length).
pub fn clean(raw: &[u8]) -> Clean {
    // Most lines hold no control byte: they are read in place, without a copy.
    let stripped = if has_controls(raw) {
        std::borrow::Cow::Owned(strip_controls(raw))
    } else {
        std::borrow::Cow::Borrowed(raw)
    };
    let text = String::from_utf8_lossy(&stripped);
    let mut s: &str = strip_quote_marks(text.trim());
    let service = compose_prefix(s).map(|(service, rest)| {
        s = rest;
        service.to_owned()
    });
    s = strip_vllm_prefix(s);
    if let Some(rest) = absl_info_prefix(s.as_bytes()) {
        // Only ASCII was removed, so the rest starts on a character boundary.
        s = &s[s.len() - rest.len()..];
    }
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
        text: fold_full_width(s.trim_end()),
        rank,
        service,
    }
}

/// docker compose's prefix on a service's output (`qna-transformers_1  | `, compose v2's
/// `ollama-1  | `): the service's name and what follows the bar. The replica number compose
/// appends to the name is required, which keeps a table's first column from passing for it.
fn compose_prefix(s: &str) -> Option<(&str, &str)> {
    let head = &s.as_bytes()[..s.len().min(80)];
    let bar = memchr::memchr(b'|', head)?;
    let name = s[..bar].trim_end();
    if name.len() == bar || !name.as_bytes()[0].is_ascii_alphanumeric() {
        return None;
    }
    let is_name_byte = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    let replica_digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let before_replica = name.len().checked_sub(replica_digits + 1)?;
    let numbered = replica_digits > 0 && matches!(name.as_bytes()[before_replica], b'_' | b'-');
    (numbered && name.bytes().all(|b| is_name_byte(&b))).then(|| {
        (
            name,
            s[bar + 1..].strip_prefix(' ').unwrap_or(&s[bar + 1..]),
        )
    })
}

/// The text with full-width forms (`：`, `，`, `（）`, `［］`, U+FF01..U+FF5E) and the
/// ideographic space turned into their ASCII letters: logs pasted through a Chinese or
/// Japanese input method or machine translation carry them in place of the punctuation the
/// patterns expect (`IndexKernel.cu：92： operator（）： block： [3358,0,0]，`).
fn fold_full_width(s: &str) -> String {
    // U+FF01..U+FF5E encode as EF BC 81..EF BD 9E and U+3000 as E3 80 80: a line without
    // those lead bytes is copied as it is.
    if memchr::memchr2(0xEF, 0xE3, s.as_bytes()).is_none() {
        return s.to_owned();
    }
    s.chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            _ => c,
        })
        .collect()
}

/// Whether the line holds a control byte (ESC, NUL, a tab ...) that [`strip_controls`] would
/// change. Written without an early exit so that the compiler can compare many bytes at once.
fn has_controls(raw: &[u8]) -> bool {
    raw.iter()
        .fold(0u8, |seen, &b| seen | u8::from(b < 0x20 || b == 0x7f))
        != 0
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
/// `--tag-output`), `3: ` (`srun --label`). Returns the rank (if the prefix names one) and
/// the rest.
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
    if let Some(rest) = s.strip_prefix("rank") {
        let colon = rest.find(':')?;
        let n: u32 = rest[..colon].trim().parse().ok()?;
        return Some((Some(n), &rest[colon + 1..]));
    }
    // Slurm's `srun --label`: the task number, a colon and a space (`12: Traceback ...`).
    let digits = s.bytes().take(6).take_while(u8::is_ascii_digit).count();
    let rest = s.get(digits..)?.strip_prefix(": ")?;
    (digits > 0 && !rest.is_empty()).then(|| (s[..digits].parse().ok(), rest))
}

/// The line without the Markdown quote marks (`> `, nested `> > `) that output pasted into an
/// issue thread often carries, or the bold mark (`**`) a reporter put around it. Python's
/// prompt (`>>> `) is not one.
fn strip_quote_marks(mut s: &str) -> &str {
    while let Some(rest) = s.strip_prefix("> ") {
        s = rest.trim_start();
    }
    if let Some(rest) = s.strip_prefix("**") {
        s = rest;
    }
    // The gutter Python (3.11+) draws before each line of an exception group's members
    // (`  | Traceback ...`, `  | E   ptxas fatal ...` under pytest). A table row (nvidia-smi's
    // `|   0  Tesla T4 ... |`) ends with its bar and keeps it.
    if let Some(rest) = exception_group_gutter(s) {
        s = rest;
    }
    // pytest's mark before each line of the error it reports: `E       RuntimeError: ...`.
    if let Some(rest) = s.strip_prefix(PYTEST_ERROR_MARK) {
        s = rest.trim_start();
    }
    s
}

/// What follows an exception group's gutter (`| ` before a line that does not end with a
/// bar), if the line has one.
fn exception_group_gutter(s: &str) -> Option<&str> {
    let rest = s.strip_prefix("| ")?;
    (!s.ends_with('|')).then(|| rest.trim_start())
}

/// pytest's mark on the lines of the error a failed test raised.
const PYTEST_ERROR_MARK: &str = "E   ";

/// What follows glog's and absl's prefix on an information or warning line (`I0716
/// 21:59:58.942886 139668278384448 run_docker.py:180] `): AlphaFold's docker runner, JAX's and
/// XLA's C++ logging relay other programs' output through it. Fatal lines (`F0823 ...`) keep
/// theirs: it is what makes them fatal.
pub(crate) fn absl_info_prefix(line: &[u8]) -> Option<&[u8]> {
    if !(matches!(line.first(), Some(b'I' | b'W'))
        && line.len() > 24
        && line[1..5].iter().all(u8::is_ascii_digit)
        && line[5] == b' '
        && line[8] == b':')
    {
        return None;
    }
    let head = &line[..line.len().min(160)];
    let close = memchr::memmem::find(head, b"] ")?;
    // The place before the bracket: `file.py:180`.
    let place = &head[..close];
    let colon = memchr::memrchr(b':', place)?;
    (colon + 1 < place.len() && place[colon + 1..].iter().all(u8::is_ascii_digit))
        .then(|| line[close + 2..].trim_ascii_start())
}

/// What follows a syslog or journal prefix (`May 23 12:49:52 mgmt1 slurmctld[80708]: `): the
/// journal relays services' own lines (`slurmctld: error: ...`), whose start says what they are.
/// The clean line keeps the prefix (its time and host are evidence); the look at line starts
/// and the failure forms look past it.
pub(crate) fn syslog_prefix(line: &[u8]) -> Option<&[u8]> {
    let stamp = line.len() > 20
        && line[0].is_ascii_uppercase()
        && line[1].is_ascii_lowercase()
        && line[2].is_ascii_lowercase()
        && line[3] == b' '
        && (line[4] == b' ' || line[4].is_ascii_digit())
        && line[5].is_ascii_digit()
        && line[6] == b' '
        && line[9] == b':'
        && line[12] == b':'
        && line[15] == b' ';
    if !stamp {
        return None;
    }
    // The host, then the program and its pid, which ends with `: `.
    let rest = &line[16..];
    let host_end = memchr::memchr(b' ', &rest[..rest.len().min(64)])?;
    let after_host = &rest[host_end + 1..];
    let program_end = memchr::memmem::find(&after_host[..after_host.len().min(64)], b": ")?;
    (!after_host[..program_end].contains(&b' ')).then(|| &after_host[program_end + 2..])
}

/// The line without vLLM's prefixes: the worker process's `(EngineCore_DP0 pid=418) ` and its
/// logger's `ERROR 01-29 15:38:21 [core.py:946] `, which stand before every line a vLLM
/// worker prints (a traceback's too).
fn strip_vllm_prefix(s: &str) -> &str {
    let bytes = strip_vllm_prefix_bytes(s.as_bytes());
    // Only ASCII was removed, so the rest starts on a character boundary.
    &s[s.len() - bytes.len()..]
}

/// [`strip_vllm_prefix`] on raw bytes.
pub(crate) fn strip_vllm_prefix_bytes(mut line: &[u8]) -> &[u8] {
    if line.first() == Some(&b'(')
        && let Some(close) = memchr::memchr(b')', &line[..line.len().min(64)])
        && let Some(pid) = memchr::memmem::find(&line[..close], b" pid=")
        && line[pid + 5..close].iter().all(u8::is_ascii_digit)
    {
        line = line[close + 1..].trim_ascii_start();
    }
    for level in [
        &b"INFO "[..],
        b"WARNING ",
        b"ERROR ",
        b"DEBUG ",
        b"CRITICAL ",
    ] {
        if let Some(rest) = line.strip_prefix(level) {
            // `01-29 15:38:21 [core.py:946] `
            let stamp = rest.len() > 16
                && rest[2] == b'-'
                && rest[5] == b' '
                && rest[8] == b':'
                && rest[11] == b':';
            if stamp
                && let Some(open) = memchr::memchr(b'[', &rest[..rest.len().min(24)])
                && let Some(close) = memchr::memchr(b']', &rest[open..rest.len().min(open + 64)])
            {
                return rest[open + close + 1..].trim_ascii_start();
            }
            // Before 0.6 the place had no opening bracket: `07-31 15:13:06 engine.py:61] `.
            if stamp
                && let Some(place) = rest.get(15..)
                && let Some(space) = memchr::memchr(b' ', &place[..place.len().min(64)])
                && space > 1
                && place[space - 1] == b']'
            {
                return place[space..].trim_ascii_start();
            }
            break;
        }
    }
    line
}

/// The line without its launcher prefixes (`[rank3]:`, `[default0]:`, `rank3:`,
/// `[1,0]<stderr>:`, `3: `, nested up to three) and the spaces after them, on raw bytes: the
/// scanner's look at line starts, which runs before any cleaning, sees what [`clean`] would
/// keep. Also drops Markdown quote marks and one colour code at the very start (`ESC[31m`).
pub(crate) fn strip_prefixes_bytes(mut line: &[u8]) -> &[u8] {
    while let Some(rest) = line.strip_prefix(b"> ") {
        line = rest.trim_ascii_start();
    }
    if let Some(rest) = line.strip_prefix(b"**") {
        line = rest;
    }
    if let Some(rest) = line.strip_prefix(PYTEST_ERROR_MARK.as_bytes()) {
        line = rest.trim_ascii_start();
    }
    line = strip_vllm_prefix_bytes(line);
    if let Some(rest) = absl_info_prefix(line) {
        line = rest;
    }
    if line.first() == Some(&0x1b) && line.get(1) == Some(&b'[') {
        if let Some(end) = line
            .iter()
            .take(16)
            .skip(2)
            .position(u8::is_ascii_alphabetic)
        {
            line = &line[end + 3..];
        }
    }
    for _ in 0..3 {
        let rest = match line.first() {
            Some(b'[') => bracket_prefix(line),
            Some(b'r') => line
                .strip_prefix(b"rank")
                .and_then(|r| digits_then_colon(r)),
            Some(b'0'..=b'9') => srun_label(line),
            _ => None,
        };
        match rest {
            Some(r) => line = r.trim_ascii_start(),
            None => break,
        }
    }
    line
}

/// `[rank3]:`, `[default0]:`, `[1,0]<stderr>:` at the start: what follows it.
fn bracket_prefix(line: &[u8]) -> Option<&[u8]> {
    let close = memchr::memchr(b']', &line[..line.len().min(26)])?;
    let inner = &line[1..close];
    let numbered = |n: &[u8]| !n.is_empty() && n.iter().all(u8::is_ascii_digit);
    let known = inner.strip_prefix(b"rank").is_some_and(numbered)
        || inner.strip_prefix(b"default").is_some_and(numbered)
        || inner
            .iter()
            .position(|b| *b == b',')
            .is_some_and(|comma| numbered(&inner[comma + 1..]));
    if !known {
        return None;
    }
    let after = &line[close + 1..];
    let after = after
        .strip_prefix(b"<stderr>")
        .or_else(|| after.strip_prefix(b"<stdout>"))
        .unwrap_or(after);
    after.strip_prefix(b":")
}

/// Slurm's `srun --label` prefix (`12: `) at the start: what follows it.
pub(crate) fn srun_label(line: &[u8]) -> Option<&[u8]> {
    digits_then_colon(line)?
        .strip_prefix(b" ")
        .filter(|rest| !rest.is_empty())
}

/// `12:` after `rank`: what follows the colon.
fn digits_then_colon(rest: &[u8]) -> Option<&[u8]> {
    let digits = rest
        .iter()
        .take(6)
        .take_while(|b| b.is_ascii_digit())
        .count();
    (digits > 0 && rest.get(digits) == Some(&b':')).then(|| &rest[digits + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_prefixes_are_not_part_of_the_line() {
        let line = b"(EngineCore_DP0 pid=418) ERROR 01-29 15:38:21 [core.py:946] AssertionError: Error in memory profiling.";
        assert_eq!(
            clean(line).text,
            "AssertionError: Error in memory profiling."
        );
        assert_eq!(
            strip_prefixes_bytes(line),
            b"AssertionError: Error in memory profiling."
        );
        assert_eq!(
            clean(b"INFO 01-29 15:38:21 [gpu_worker.py:333] Available KV cache memory: 1 GiB").text,
            "Available KV cache memory: 1 GiB"
        );
        assert_eq!(
            clean(b"(Worker_TP1 pid=15193) Traceback (most recent call last):").text,
            "Traceback (most recent call last):"
        );
        // Before 0.6, without the opening bracket.
        assert_eq!(
            clean(b"ERROR 07-31 15:13:06 async_llm_engine.py:61]   File \"x.py\", line 1").text,
            "File \"x.py\", line 1"
        );
        // Not vLLM's: left alone.
        assert_eq!(clean(b"(x) ERROR something").text, "(x) ERROR something");
        assert_eq!(
            clean(b"ERROR 07-31 15:13:06 the disk is full").text,
            "ERROR 07-31 15:13:06 the disk is full"
        );
        assert_eq!(
            clean(b"ERROR: nvidia-installer").text,
            "ERROR: nvidia-installer"
        );
    }

    #[test]
    fn syslog_prefix_is_found() {
        let line = b"May 23 12:49:52 mgmt1.int.cloud slurmctld[80708]: slurmctld: error: Setting node nodegpu1 state to INVAL";
        assert_eq!(
            syslog_prefix(line),
            Some(&b"slurmctld: error: Setting node nodegpu1 state to INVAL"[..])
        );
        assert_eq!(
            syslog_prefix(b"Aug  7 01:02:03 host kernel: NVRM: Xid (PCI:0000:05:00): 79"),
            Some(&b"NVRM: Xid (PCI:0000:05:00): 79"[..])
        );
        // Not a syslog line.
        assert_eq!(
            syslog_prefix(b"May the GPU be with you, always and ever"),
            None
        );
    }

    #[test]
    fn absl_prefix_is_not_part_of_the_line() {
        let line = b"I0716 21:59:58.942886 139668278384448 run_docker.py:180] RuntimeError: cuSolver internal error";
        assert_eq!(clean(line).text, "RuntimeError: cuSolver internal error");
        assert_eq!(
            strip_prefixes_bytes(line),
            b"RuntimeError: cuSolver internal error"
        );
        // A fatal line keeps its prefix; a line that only starts with I and digits is left.
        let fatal = "F0823 10:05:15.257066  3197 hl_cuda_cublas.cc:137] Check failed: a == b";
        assert_eq!(clean(fatal.as_bytes()).text, fatal);
        assert_eq!(
            clean(b"I1234 is not a log line").text,
            "I1234 is not a log line"
        );
    }

    #[test]
    fn an_exception_groups_gutter_is_not_part_of_the_line() {
        assert_eq!(
            clean(b"  | ValueError: bad shape").text,
            "ValueError: bad shape"
        );
        assert_eq!(
            clean(b"  | E           RuntimeError: CUDA error").text,
            "RuntimeError: CUDA error"
        );
        // A table row keeps its bars.
        let row = "|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 |";
        assert_eq!(clean(row.as_bytes()).text, row);
    }

    #[test]
    fn pytests_error_mark_is_not_part_of_the_line() {
        let line =
            b"E           RuntimeError: CUDA error: an illegal memory access was encountered";
        assert_eq!(
            clean(line).text,
            "RuntimeError: CUDA error: an illegal memory access was encountered"
        );
        assert_eq!(
            strip_prefixes_bytes(line),
            b"RuntimeError: CUDA error: an illegal memory access was encountered"
        );
        // A word that starts with E is not the mark.
        assert_eq!(clean(b"Epoch 3   loss 0.1").text, "Epoch 3   loss 0.1");
    }

    #[test]
    fn markdown_quote_marks_are_not_part_of_the_line() {
        assert_eq!(
            clean(b">         Kernel driver in use: nouveau").text,
            "Kernel driver in use: nouveau"
        );
        assert_eq!(clean(b"> > [rank2]: CUDA error").text, "CUDA error");
        assert_eq!(clean(b"> > [rank2]: CUDA error").rank, Some(2));
        // Python's prompt stays.
        assert_eq!(clean(b">>> import torch").text, ">>> import torch");
        assert_eq!(strip_prefixes_bytes(b"> Kernel driver"), b"Kernel driver");
    }

    #[test]
    fn strips_colour_and_controls() {
        let c = clean(b"\x1b[1;31mRuntimeError\x1b[0m: CUDA\x00 error\x1b]0;title\x07!");
        assert_eq!(c.text, "RuntimeError: CUDA  error!");
    }

    #[test]
    fn strips_prefixes_on_bytes_as_clean_does() {
        for (raw, rest) in [
            (&b"[rank3]: ValueError: x"[..], &b"ValueError: x"[..]),
            (b"[default0]:[rank5]: KeyError: 'a'", b"KeyError: 'a'"),
            (b"rank12: boom", b"boom"),
            (b"[1,2]<stderr>:Traceback", b"Traceback"),
            (b"\x1b[31mValueError: red", b"ValueError: red"),
            (b"[W socket.cpp] x", b"[W socket.cpp] x"),
            (b"[rankX]: x", b"[rankX]: x"),
            (b"ranking: 3", b"ranking: 3"),
        ] {
            assert_eq!(strip_prefixes_bytes(raw), rest);
        }
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
    fn full_width_punctuation_is_folded_to_ascii() {
        let c = clean(
            "IndexKernel.cu：92： operator（）： block： [3358,0,0]，\u{3000}断言失败。".as_bytes(),
        );
        assert_eq!(
            c.text,
            "IndexKernel.cu:92: operator(): block: [3358,0,0], 断言失败。"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let c = clean(b"CUDA \xff\xfe error");
        assert!(c.text.starts_with("CUDA "));
        assert!(c.text.ends_with(" error"));
    }

    #[test]
    fn compose_and_srun_prefixes_are_not_part_of_the_line() {
        let c = clean(b"qna-transformers_1  | RuntimeError: Found no NVIDIA driver");
        assert_eq!(c.text, "RuntimeError: Found no NVIDIA driver");
        assert_eq!(c.service.as_deref(), Some("qna-transformers_1"));
        let c = clean(b"ollama-1  | Error: llama runner process has terminated");
        assert_eq!(c.service.as_deref(), Some("ollama-1"));
        // A name without compose's replica number, or a table's bar, is not a service.
        for line in [&b"GPU  | Name"[..], b"| 0  NVIDIA H200 |", b"name x | y"] {
            let c = clean(line);
            assert_eq!(c.service, None, "{}", String::from_utf8_lossy(line));
        }
        let c = clean(b"12: Traceback (most recent call last):");
        assert_eq!(
            (c.text.as_str(), c.rank),
            ("Traceback (most recent call last):", Some(12))
        );
        assert_eq!(strip_prefixes_bytes(b"3: File \"x.py\""), b"File \"x.py\"");
        // A time, a bare number and a colon without a space stay.
        assert_eq!(clean(b"12:49:52 done").text, "12:49:52 done");
        assert_eq!(clean(b"7:").text, "7:");
        assert_eq!(strip_prefixes_bytes(b"12:49:52 x"), b"12:49:52 x");
    }
}
