//! Stopping a process cleanly: SIGTERM, a grace period to let it save and exit, SIGKILL if
//! it is still there.
//!
//! Before every signal the pid is checked to still be the same process (same start time in
//! `/proc/<pid>/stat`, not a zombie): between the sample that condemned a process and the
//! signal, it may have exited and its pid been given to someone else, and that someone must
//! never receive the signal.

use crate::proc::ProcRoot;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid as NixPid;
use serde::Serialize;
use std::time::{Duration, Instant};

/// How often the process is looked at while waiting for it to exit.
const POLL: Duration = Duration::from_millis(50);
/// How long a process sent SIGKILL is given to disappear before saying it did not.
const AFTER_KILL: Duration = Duration::from_secs(2);

/// How a stop ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum StopOutcome {
    /// It had already exited: nothing was sent.
    AlreadyGone,
    /// The pid now belongs to another process: nothing was sent.
    PidReused,
    /// It exited within the grace period after SIGTERM.
    Terminated { after_ms: u64 },
    /// It ignored SIGTERM for the whole grace period and was killed.
    Killed,
    /// A signal could not be sent (no permission, usually).
    Failed { reason: String },
}

impl StopOutcome {
    /// A few words for the log line.
    pub fn describe(&self) -> String {
        match self {
            StopOutcome::AlreadyGone => "had already exited".into(),
            StopOutcome::PidReused => "pid now belongs to another process; nothing sent".into(),
            StopOutcome::Terminated { after_ms } => format!("exited {after_ms} ms after SIGTERM"),
            StopOutcome::Killed => "ignored SIGTERM for the grace period; killed (SIGKILL)".into(),
            StopOutcome::Failed { reason } => format!("could not be stopped: {reason}"),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn nix_pid(pid: u32) -> Option<NixPid> {
    // Pid 0 and negative pids mean "my group" and "a group" to kill(2): never send those.
    i32::try_from(pid)
        .ok()
        .filter(|&p| p > 1)
        .map(NixPid::from_raw)
}

/// Waits up to `limit` for `gone()`; returns how long it took.
fn wait_until(limit: Duration, gone: impl Fn() -> bool) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if gone() {
            return Some(start.elapsed());
        }
        if start.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(
            POLL.min(limit.saturating_sub(start.elapsed()))
                .max(Duration::from_millis(1)),
        );
    }
}

/// Stops process `pid`, which started at `start_time` (see [`crate::proc::ProcOwner`]).
pub fn stop_process(proc: &ProcRoot, pid: u32, start_time: u64, grace: Duration) -> StopOutcome {
    let Some(target) = nix_pid(pid) else {
        return StopOutcome::Failed {
            reason: format!("refusing to signal pid {pid}"),
        };
    };
    let same = || proc.is_same_live(pid, start_time);
    match proc.stat(pid) {
        None => return StopOutcome::AlreadyGone,
        Some(s) if s.start_time != start_time => return StopOutcome::PidReused,
        Some(s) if s.state == 'Z' || s.state == 'X' => return StopOutcome::AlreadyGone,
        Some(_) => {}
    }
    if let Err(e) = kill(target, Signal::SIGTERM) {
        return StopOutcome::Failed {
            reason: format!("SIGTERM: {e}"),
        };
    }
    if let Some(after) = wait_until(grace, || !same()) {
        return StopOutcome::Terminated {
            after_ms: millis(after),
        };
    }
    // Checked again right before the kill: the grace period is long enough for the pid to
    // have been reused.
    if !same() {
        return StopOutcome::Terminated {
            after_ms: millis(grace),
        };
    }
    if let Err(e) = kill(target, Signal::SIGKILL) {
        return StopOutcome::Failed {
            reason: format!("SIGKILL: {e}"),
        };
    }
    if wait_until(AFTER_KILL, || !same()).is_some() {
        StopOutcome::Killed
    } else {
        StopOutcome::Failed {
            reason: "still there after SIGKILL (uninterruptible sleep in the driver?)".into(),
        }
    }
}

/// Stops a job's whole process group, led by `leader` (which started at `start_time`):
/// SIGTERM to the group, `grace`, SIGKILL to the group. The leader must be the caller's own
/// child, so its pid cannot be reused before the caller reaps it.
pub fn stop_group(proc: &ProcRoot, leader: u32, start_time: u64, grace: Duration) -> StopOutcome {
    let Some(group) = nix_pid(leader) else {
        return StopOutcome::Failed {
            reason: format!("refusing to signal group {leader}"),
        };
    };
    match proc.stat(leader) {
        None => return StopOutcome::AlreadyGone,
        Some(s) if s.start_time != start_time => return StopOutcome::PidReused,
        Some(s) if s.pgrp != leader => {
            return StopOutcome::Failed {
                reason: format!("pid {leader} does not lead its own process group"),
            };
        }
        Some(s) if s.state == 'Z' || s.state == 'X' => return StopOutcome::AlreadyGone,
        Some(_) => {}
    }
    if let Err(e) = killpg(group, Signal::SIGTERM) {
        return StopOutcome::Failed {
            reason: format!("SIGTERM to the group: {e}"),
        };
    }
    let alive = || proc.is_same_live(leader, start_time);
    if let Some(after) = wait_until(grace, || !alive()) {
        // The leader is gone; whatever of its group is left gets no more time.
        let _ = killpg(group, Signal::SIGKILL);
        return StopOutcome::Terminated {
            after_ms: millis(after),
        };
    }
    if let Err(e) = killpg(group, Signal::SIGKILL) {
        return StopOutcome::Failed {
            reason: format!("SIGKILL to the group: {e}"),
        };
    }
    if wait_until(AFTER_KILL, || !alive()).is_some() {
        StopOutcome::Killed
    } else {
        StopOutcome::Failed {
            reason: "still there after SIGKILL".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn start_of(pid: u32) -> u64 {
        ProcRoot::default().stat(pid).unwrap().start_time
    }

    #[test]
    fn a_polite_process_exits_on_sigterm() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        let start = start_of(pid);
        let outcome = stop_process(&ProcRoot::default(), pid, start, Duration::from_secs(5));
        // `sleep` dies of SIGTERM at once; it is a zombie (our child) until reaped.
        assert!(
            matches!(outcome, StopOutcome::Terminated { after_ms } if after_ms < 5000),
            "{outcome:?}"
        );
        assert!(child.wait().unwrap().code().is_none());
    }

    #[test]
    fn a_stubborn_process_is_killed_after_the_grace() {
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; echo ready; sleep 30 & wait"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the trap to be in place before signalling.
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let pid = child.id();
        let start = start_of(pid);
        let begun = Instant::now();
        let outcome = stop_process(&ProcRoot::default(), pid, start, Duration::from_millis(300));
        assert_eq!(outcome, StopOutcome::Killed);
        assert!(begun.elapsed() >= Duration::from_millis(300));
        child.wait().unwrap();
    }

    #[test]
    fn a_reused_pid_is_never_signalled() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        let wrong_start = start_of(pid) + 1;
        assert_eq!(
            stop_process(
                &ProcRoot::default(),
                pid,
                wrong_start,
                Duration::from_secs(1)
            ),
            StopOutcome::PidReused
        );
        // Still alive: nothing was sent.
        assert!(child.try_wait().unwrap().is_none());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(
            stop_process(
                &ProcRoot::default(),
                pid,
                wrong_start - 1,
                Duration::from_secs(1)
            ),
            StopOutcome::AlreadyGone
        );
    }

    #[test]
    fn refuses_special_pids() {
        assert!(matches!(
            stop_process(&ProcRoot::default(), 0, 0, Duration::ZERO),
            StopOutcome::Failed { .. }
        ));
        assert!(matches!(
            stop_process(&ProcRoot::default(), 1, 0, Duration::ZERO),
            StopOutcome::Failed { .. }
        ));
    }
}
