//! The kernel-log probe: Xid lines (`NVRM: Xid (PCI:0000:05:00): 79, ...`) and a few other
//! driver lines that explain a dead GPU ("fallen off the bus", "API mismatch").
//!
//! It reads the file named by `GPU_DOCTOR_KERNEL_LOG` when that is set (tests, offline
//! triage: the same variable `explain --kernel` reads), else `dmesg`, else `journalctl -k`.
//! Reading is line by line with each line capped, and only the last [`MAX_XIDS`] Xids are
//! kept, so a huge log costs time proportional to its size and constant memory.

use crate::Probe;
use crate::facts::{KernelLogFacts, ProbeStatus, XidLine};
use crate::host::{Host, run_bounded};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::process::Command;
use std::time::Duration;

/// The most Xid lines kept (the most recent ones).
pub const MAX_XIDS: usize = 50;
/// The most other driver lines kept.
pub const MAX_OTHER: usize = 20;
/// Longest line kept, in bytes; the rest of a longer line is dropped.
pub const MAX_LINE: usize = 4096;
/// The variable that names a kernel log file to read instead of `dmesg`.
pub const KERNEL_LOG_VAR: &str = "GPU_DOCTOR_KERNEL_LOG";

#[derive(Debug, Clone, Default)]
pub struct KernelLogProbe;

impl Probe for KernelLogProbe {
    type Facts = KernelLogFacts;
    const NAME: &'static str = "kernel_log";

    fn probe(&self, host: &Host) -> KernelLogFacts {
        if let Some(file) = host.var(KERNEL_LOG_VAR).filter(|v| !v.is_empty()) {
            return match std::fs::File::open(file) {
                Ok(f) => scan(f, format!("file {file}")),
                Err(e) => unavailable(format!("cannot read {file} ({KERNEL_LOG_VAR}): {e}")),
            };
        }
        if !host.is_real_root() {
            return unavailable("no kernel log under a --root tree (set GPU_DOCTOR_KERNEL_LOG)");
        }
        let mut reasons = Vec::new();
        let attempts: [(&str, &[&str]); 2] = [
            ("dmesg", &[]),
            (
                "journalctl",
                &["-k", "-b", "-q", "--no-pager", "-n", "20000"],
            ),
        ];
        for (program, args) in attempts {
            let mut cmd = Command::new(program);
            cmd.args(args);
            match run_bounded(cmd, Duration::from_secs(3)) {
                Ok(out) if out.status == Some(0) && !out.stdout.trim().is_empty() => {
                    return scan(out.stdout.as_bytes(), program.to_owned());
                }
                Ok(out) => reasons.push(format!(
                    "{program}: {}",
                    out.stderr.lines().next().unwrap_or("no output").trim()
                )),
                Err(e) => reasons.push(e.to_string()),
            }
        }
        unavailable(format!(
            "{} (reading the kernel log may need root or the `adm` / `systemd-journal` group)",
            reasons.join("; ")
        ))
    }
}

fn unavailable(reason: impl Into<String>) -> KernelLogFacts {
    KernelLogFacts {
        status: ProbeStatus::unavailable(reason),
        ..KernelLogFacts::default()
    }
}

/// Scans a log for Xid lines, keeping the last [`MAX_XIDS`].
pub fn scan(reader: impl Read, source: String) -> KernelLogFacts {
    let mut xids = VecDeque::new();
    let mut other = VecDeque::new();
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        let Ok(n) = reader
            .by_ref()
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut buf)
        else {
            break;
        };
        if n == 0 {
            break;
        }
        if buf.last() != Some(&b'\n') && n == MAX_LINE {
            skip_rest_of_line(&mut reader);
        }
        line_no += 1;
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end();
        if let Some(x) = parse_xid(line, line_no) {
            if xids.len() == MAX_XIDS {
                xids.pop_front();
            }
            xids.push_back(x);
        } else if line.contains("NVRM")
            && (line.contains("fallen off the bus")
                || line.contains("API mismatch")
                || line.contains("RmInitAdapter failed"))
        {
            if other.len() == MAX_OTHER {
                other.pop_front();
            }
            other.push_back(strip_prefix(line).to_owned());
        }
    }
    KernelLogFacts {
        status: ProbeStatus::Ok,
        source: Some(source),
        xids: xids.into(),
        other: other.into(),
    }
}

/// Drops bytes up to and including the next newline.
fn skip_rest_of_line(reader: &mut impl BufRead) {
    loop {
        let (used, done) = match reader.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(b) => match b.iter().position(|&c| c == b'\n') {
                Some(i) => (i + 1, true),
                None => (b.len(), false),
            },
        };
        reader.consume(used);
        if done {
            return;
        }
    }
}

/// The part of a kernel line from `NVRM` on (drops `[  12.3]`, syslog and kmsg prefixes).
fn strip_prefix(line: &str) -> &str {
    line.find("NVRM").map_or(line, |i| &line[i..])
}

/// Parses `NVRM: Xid (PCI:0000:05:00): 79, pid=..., GPU has fallen off the bus.` and the
/// old form without `PCI:`.
pub fn parse_xid(line: &str, line_no: u64) -> Option<XidLine> {
    let at = line.find("NVRM: Xid (")?;
    let rest = &line[at + "NVRM: Xid (".len()..];
    let (pci, rest) = rest.split_once(')')?;
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let xid = digits.parse().ok()?;
    Some(XidLine {
        xid,
        pci: pci.trim_start_matches("PCI:").to_owned(),
        line: line_no,
        text: strip_prefix(line).chars().take(300).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    #[test]
    fn parses_every_xid_form() {
        let x = parse_xid("[ 12.3] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", 7).unwrap();
        assert_eq!((x.xid, x.pci.as_str(), x.line), (79, "0000:05:00", 7));
        assert!(x.text.starts_with("NVRM: Xid"));
        let old = parse_xid("NVRM: Xid (0000:03:00): 14, Channel 00000001", 1).unwrap();
        assert_eq!((old.xid, old.pci.as_str()), (14, "0000:03:00"));
        assert_eq!(parse_xid("NVRM: Xid (PCI:0000:03:00): bad", 1), None);
        assert_eq!(parse_xid("nothing here", 1), None);
    }

    #[test]
    fn keeps_only_the_last_xids_and_caps_lines() {
        let mut log = String::new();
        for i in 0..(MAX_XIDS + 10) {
            writeln!(log, "NVRM: Xid (PCI:0000:05:00): {}, x", i + 1).unwrap();
        }
        log.push_str(&"y".repeat(MAX_LINE * 3));
        log.push_str("\nNVRM: GPU 0000:18:00.0: GPU has fallen off the bus.\n");
        let facts = scan(log.as_bytes(), "test".into());
        assert_eq!(facts.xids.len(), MAX_XIDS);
        assert_eq!(facts.xids[0].xid, 11);
        assert_eq!(facts.xids.last().unwrap().line, (MAX_XIDS + 10) as u64);
        assert_eq!(facts.other.len(), 1);
    }

    #[test]
    fn the_h200_boot_log_has_no_xid() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/h200/env.txt"
        ))
        .unwrap();
        let facts = scan(text.as_bytes(), "env.txt".into());
        assert!(facts.xids.is_empty());
    }
}
