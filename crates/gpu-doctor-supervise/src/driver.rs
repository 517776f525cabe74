//! The process driver: runs one attempt of the job and nothing else.
//!
//! - The child leads its own process group, so a signal reaches the job and everything it
//!   started (data-loader workers, `torchrun` ranks) and nothing else.
//! - Its stdout and stderr are copied to ours byte for byte as they arrive, while the last
//!   `tail_bytes` of both are kept in a ring buffer for the diagnosis.
//! - SIGINT, SIGTERM and SIGHUP sent to the supervisor are forwarded to the group. A second
//!   signal, or `kill_timeout` after the first, escalates to SIGKILL of the group.
//! - When the child exits, whatever is left of its group is terminated, and (on Linux, where
//!   the supervisor is a child subreaper) descendants that left the group are found through
//!   `/proc` and killed too, then reaped: no orphans outlive an attempt.

use crate::policy::Exit;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;
use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the child's state is checked while nothing else happens.
const POLL: Duration = Duration::from_millis(20);
/// After the child exits, how long what is left of its group gets to exit on SIGTERM.
const ORPHAN_GRACE: Duration = Duration::from_secs(2);
/// After the group is gone, how long the output copiers get to drain the pipes.
const DRAIN: Duration = Duration::from_secs(2);

/// The signals the supervisor forwards to the job.
pub const FORWARDED: [i32; 3] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
];

/// Why an attempt could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("the job's command is empty")]
    EmptyCommand,
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("cannot install signal handlers: {0}")]
    Signals(std::io::Error),
    #[error("waiting for the job failed: {0}")]
    Wait(std::io::Error),
}

impl DriverError {
    pub fn hint(&self) -> &'static str {
        match self {
            DriverError::EmptyCommand => {
                "put the job after `--`: gpu-doctor run -- python train.py --batch-size 64"
            }
            DriverError::Spawn { .. } => {
                "check that the program exists on PATH and is executable (`command -v PROGRAM`)"
            }
            DriverError::Signals(_) | DriverError::Wait(_) => {
                "this is a bug or a resource limit; run the job directly to see its own error"
            }
        }
    }
}

/// Signals received by the supervisor, delivered through a channel so the driver can wait on
/// them and on the child at once. One per process: create it once, before the first attempt.
pub struct SignalForwarder {
    rx: Receiver<i32>,
    handle: signal_hook::iterator::Handle,
}

impl SignalForwarder {
    pub fn install() -> Result<Self, DriverError> {
        let mut signals =
            signal_hook::iterator::Signals::new(FORWARDED).map_err(DriverError::Signals)?;
        let handle = signals.handle();
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("gpu-doctor-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    if tx.send(sig).is_err() {
                        break;
                    }
                }
            })
            .map_err(DriverError::Signals)?;
        Ok(SignalForwarder { rx, handle })
    }

    /// A signal that arrived since the last look, without waiting.
    pub fn try_recv(&self) -> Option<i32> {
        self.rx.try_recv().ok()
    }

    /// Waits up to `timeout` for a signal.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<i32> {
        self.rx.recv_timeout(timeout).ok()
    }
}

impl Drop for SignalForwarder {
    fn drop(&mut self) {
        self.handle.close();
    }
}

/// Makes this process adopt orphaned descendants (Linux), so a grandchild that leaves the
/// job's process group can still be found and stopped. Harmless elsewhere.
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    {
        // Failure only means orphans go to init instead; the group sweep still works.
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
}

/// The last bytes of the job's output.
#[derive(Debug)]
struct Tail {
    buf: VecDeque<u8>,
    cap: usize,
    total: u64,
}

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let bytes = &bytes[bytes.len().saturating_sub(self.cap)..];
        let overflow = (self.buf.len() + bytes.len()).saturating_sub(self.cap);
        self.buf.drain(..overflow);
        self.buf.extend(bytes);
    }
}

/// One attempt to run.
#[derive(Debug, Clone, Default)]
pub struct Job {
    pub argv: Vec<String>,
    /// Variables set on top of the supervisor's own environment.
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
pub struct DriverOptions {
    pub tail_bytes: usize,
    pub kill_timeout: Duration,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            tail_bytes: 256 << 10,
            kill_timeout: Duration::from_secs(10),
        }
    }
}

/// How an attempt ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    /// The last bytes of stdout and stderr, interleaved as they arrived.
    pub tail: Vec<u8>,
    /// All bytes the job wrote.
    pub output_bytes: u64,
    pub duration: Duration,
    /// The first signal the user sent, forwarded to the job.
    pub interrupted_by: Option<i32>,
    /// The group had to be killed (second signal or `kill_timeout`).
    pub escalated: bool,
    /// Processes of the job still running after it exited, then stopped.
    pub orphans_stopped: usize,
}

/// What the driver calls back while the job runs.
pub trait Observer {
    /// The job started; `pgid` is its process group.
    fn started(&mut self, pgid: i32);
}

impl Observer for () {
    fn started(&mut self, _pgid: i32) {}
}

fn copier(
    mut from: impl Read + Send + 'static,
    mut to: impl Write + Send + 'static,
    tail: Arc<Mutex<Tail>>,
    done: mpsc::Sender<()>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("gpu-doctor-copy".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            let mut passthrough = true;
            loop {
                match from.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        // A closed terminal must not stop the job: keep reading, stop writing.
                        if passthrough && (to.write_all(&buf[..n]).is_err() || to.flush().is_err())
                        {
                            passthrough = false;
                        }
                        if let Ok(mut t) = tail.lock() {
                            t.push(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        })
}

/// Runs one attempt to its end.
pub fn run(
    job: &Job,
    opts: &DriverOptions,
    signals: &SignalForwarder,
    observer: &mut dyn Observer,
) -> Result<Outcome, DriverError> {
    let (program, args) = job.argv.split_first().ok_or(DriverError::EmptyCommand)?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(&job.env)
        .process_group(0)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|source| DriverError::Spawn {
        program: program.clone(),
        source,
    })?;
    let Ok(pgid) = i32::try_from(child.id()) else {
        // Cannot happen on Linux (pids fit in 22 bits); never signal a wrapped-around group.
        let _ = child.kill();
        let _ = child.wait();
        return Err(DriverError::Wait(std::io::Error::other(
            "process id out of range",
        )));
    };
    observer.started(pgid);

    let tail = Arc::new(Mutex::new(Tail {
        buf: VecDeque::with_capacity(opts.tail_bytes.min(1 << 20)),
        cap: opts.tail_bytes,
        total: 0,
    }));
    let (done_tx, done_rx) = mpsc::channel();
    let mut copiers = Vec::new();
    if let Some(out) = child.stdout.take()
        && let Ok(h) = copier(out, std::io::stdout(), tail.clone(), done_tx.clone())
    {
        copiers.push(h);
    }
    if let Some(err) = child.stderr.take()
        && let Ok(h) = copier(err, std::io::stderr(), tail.clone(), done_tx.clone())
    {
        copiers.push(h);
    }
    drop(done_tx);

    let (status, interrupted_by, escalated) = wait(&mut child, pgid, opts, signals)?;
    let orphans_stopped = sweep(pgid);

    // The pipes close when the last process holding them is gone; wait a little for the
    // copiers to pass on what is still buffered, but never hang on a pipe someone kept open.
    let deadline = Instant::now() + DRAIN;
    let mut finished = 0;
    while finished < copiers.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
        finished += 1;
    }
    if finished == copiers.len() {
        for h in copiers {
            let _ = h.join();
        }
    }

    let exit = match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(1),
    };
    let (tail, output_bytes) = tail
        .lock()
        .map(|t| (t.buf.iter().copied().collect(), t.total))
        .unwrap_or_default();
    Ok(Outcome {
        exit,
        tail,
        output_bytes,
        duration: started.elapsed(),
        interrupted_by,
        escalated,
        orphans_stopped,
    })
}

fn to_signal(sig: i32) -> Signal {
    Signal::try_from(sig).unwrap_or(Signal::SIGTERM)
}

/// Waits for the child while forwarding signals; returns its status, the first signal
/// forwarded and whether the group had to be killed.
fn wait(
    child: &mut Child,
    pgid: i32,
    opts: &DriverOptions,
    signals: &SignalForwarder,
) -> Result<(std::process::ExitStatus, Option<i32>, bool), DriverError> {
    let group = Pid::from_raw(pgid);
    let mut first: Option<(i32, Instant)> = None;
    let mut escalated = false;
    loop {
        if let Some(status) = child.try_wait().map_err(DriverError::Wait)? {
            return Ok((status, first.map(|(s, _)| s), escalated));
        }
        if let Some(sig) = signals.recv_timeout(POLL) {
            match first {
                None => {
                    let _ = killpg(group, to_signal(sig));
                    first = Some((sig, Instant::now()));
                }
                Some(_) if !escalated => {
                    let _ = killpg(group, Signal::SIGKILL);
                    escalated = true;
                }
                Some(_) => {}
            }
        }
        if let Some((_, at)) = first
            && !escalated
            && at.elapsed() >= opts.kill_timeout
        {
            let _ = killpg(group, Signal::SIGKILL);
            escalated = true;
        }
    }
}

/// Processes that belong to the job after its leader exited: the rest of its process group,
/// and (as subreaper) our own children that left it.
fn leftovers(pgid: i32) -> Vec<i32> {
    let me = i32::try_from(std::process::id()).unwrap_or(-1);
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let state = fields.first().copied().unwrap_or("");
            let parent: i32 = fields.get(1).and_then(|f| f.parse().ok()).unwrap_or(0);
            let group: i32 = fields.get(2).and_then(|f| f.parse().ok()).unwrap_or(0);
            state != "Z" && (group == pgid || parent == me)
        })
        .collect()
}

/// Stops what is left of the job: SIGTERM, a short grace, then SIGKILL; reaps adopted
/// children. Returns how many processes were left.
fn sweep(pgid: i32) -> usize {
    let group = Pid::from_raw(pgid);
    let left = leftovers(pgid);
    if left.is_empty() && killpg(group, None).is_err() {
        return 0;
    }
    let _ = killpg(group, Signal::SIGTERM);
    for pid in &left {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGTERM);
    }
    let deadline = Instant::now() + ORPHAN_GRACE;
    loop {
        reap(&left);
        let still = leftovers(pgid);
        if still.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            let _ = killpg(group, Signal::SIGKILL);
            for pid in &still {
                let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
            }
            std::thread::sleep(POLL);
            reap(&still);
            break;
        }
        std::thread::sleep(POLL);
    }
    left.len()
}

/// Collects the exit status of adopted children among `pids`, so they do not stay zombies.
fn reap(pids: &[i32]) {
    for pid in pids {
        let _ = waitpid(Pid::from_raw(*pid), Some(WaitPidFlag::WNOHANG));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_bytes() {
        let mut t = Tail {
            buf: VecDeque::new(),
            cap: 8,
            total: 0,
        };
        t.push(b"hello ");
        t.push(b"world");
        assert_eq!(t.buf.iter().copied().collect::<Vec<u8>>(), b"lo world");
        t.push(b"0123456789abc");
        assert_eq!(t.buf.iter().copied().collect::<Vec<u8>>(), b"56789abc");
        assert_eq!(t.total, 24);
    }
}
