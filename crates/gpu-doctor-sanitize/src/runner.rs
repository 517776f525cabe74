//! Running a job under compute-sanitizer: a small process driver.
//!
//! It owns the child process: it starts `compute-sanitizer --tool T ... CMD` in its own
//! process group, copies the child's output through as it arrives (raw bytes, so
//! progress bars and partial lines show at once), feeds every line to the [`Parser`] on
//! the reader threads, forwards SIGINT, SIGTERM and SIGHUP to the child's group, and
//! returns the child's exit status with the condensed findings. (`gpu-doctor run` has its
//! own driver in `gpu-doctor-supervise`; this one is kept small and local so `sanitize`
//! does not depend on the supervisor's policy types.)

use crate::condense::{Condenser, Totals};
use crate::error::SanitizeError;
use crate::parse::{Event, MAX_LINE_BYTES, Parser, Tool};
use gpu_doctor_model::Finding;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;

/// What to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// The compute-sanitizer executable.
    pub sanitizer: PathBuf,
    pub tool: Tool,
    /// Extra compute-sanitizer flags, placed before the command.
    pub sanitizer_args: Vec<OsString>,
    /// The job and its arguments.
    pub command: Vec<OsString>,
}

impl Job {
    /// compute-sanitizer's arguments. `--print-limit 0` (print every report, so counts
    /// are right) unless the caller chose a limit.
    pub fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--tool".into(), self.tool.as_str().into()];
        let has_limit = self
            .sanitizer_args
            .iter()
            .any(|a| a.to_string_lossy().starts_with("--print-limit"));
        if !has_limit {
            args.push("--print-limit".into());
            args.push("0".into());
        }
        args.extend(self.sanitizer_args.iter().cloned());
        args.extend(self.command.iter().cloned());
        args
    }
}

/// Where the child's standard output is copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    Stdout,
    Stderr,
    /// Not copied (tests, benchmarks).
    Nowhere,
}

/// How the job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobExit {
    Code(i32),
    Signal(i32),
}

impl JobExit {
    /// The status a shell would report: the code, or 128 + the signal.
    pub fn code(self) -> i32 {
        match self {
            JobExit::Code(c) => c,
            JobExit::Signal(s) => 128 + s,
        }
    }
}

/// The job's end and what compute-sanitizer found.
#[derive(Debug)]
pub struct Outcome {
    pub exit: JobExit,
    pub findings: Vec<Finding>,
    pub totals: Totals,
    /// Lines of output read.
    pub lines: u64,
}

/// Runs `job`, copying its standard output to `stdout_to` and its standard error to
/// stderr (unless `stdout_to` is [`Echo::Nowhere`]), compute-sanitizer's report lines
/// included.
pub fn run(job: &Job, stdout_to: Echo) -> Result<Outcome, SanitizeError> {
    run_filtered(job, stdout_to, false)
}

/// [`run`], leaving out compute-sanitizer's report lines (those that start with its
/// `=========` prefix) from the echo when `hide_reports`: they are condensed instead.
pub fn run_filtered(
    job: &Job,
    stdout_to: Echo,
    hide_reports: bool,
) -> Result<Outcome, SanitizeError> {
    if job.command.is_empty() {
        return Err(SanitizeError::NoCommand);
    }
    let mut child = Command::new(&job.sanitizer)
        .args(job.args())
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a signal forwarded to the group reaches the sanitizer and
        // the job it started alike.
        .process_group(0)
        .spawn()
        .map_err(|source| SanitizeError::Spawn {
            program: job.sanitizer.clone(),
            source,
        })?;
    let forwarder = SignalForwarder::start(child.id());

    let (tx, rx) = mpsc::channel::<(Vec<Event>, u64)>();
    let stderr_to = if stdout_to == Echo::Nowhere {
        Echo::Nowhere
    } else {
        Echo::Stderr
    };
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            pump(out, stdout_to, hide_reports, &tx);
        }));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            pump(err, stderr_to, hide_reports, &tx);
        }));
    }
    drop(tx);

    let mut condenser = Condenser::new(Some(job.tool));
    let mut lines = 0;
    for (events, n) in rx {
        lines += n;
        for event in events {
            condenser.add(event);
        }
    }
    for reader in readers {
        // A reader only fails by panicking, which it does not do on any input; the
        // output already read is condensed either way.
        let _ = reader.join();
    }
    let status = child.wait()?;
    drop(forwarder);
    let exit = match (status.code(), status.signal()) {
        (Some(code), _) => JobExit::Code(code),
        (None, Some(sig)) => JobExit::Signal(sig),
        (None, None) => JobExit::Code(1),
    };
    let totals = condenser.totals();
    Ok(Outcome {
        exit,
        findings: crate::findings::findings(condenser.defects(), &totals, "compute-sanitizer"),
        totals,
        lines,
    })
}

/// Batches of events sent from a reader thread at a time, to keep channel traffic low.
const BATCH_LINES: u64 = 256;

const PREFIX: &[u8] = b"=========";

/// Whether the line being read is echoed: decided from its first bytes, so the job's
/// partial lines (progress bars) still show as they arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineEcho {
    /// Fewer bytes than the prefix seen, all matching it so far.
    Undecided,
    Echo,
    Hide,
}

/// Copies `input` to `echo` as it arrives and parses it line by line. A line longer than
/// [`MAX_LINE_BYTES`] is parsed from its first bytes; the rest is still copied through.
fn pump(input: impl Read, echo: Echo, hide_reports: bool, tx: &mpsc::Sender<(Vec<Event>, u64)>) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut parser = Parser::new();
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut state = LineEcho::Undecided;
    let mut batch = Vec::new();
    let mut batch_lines = 0;
    let mut out = Sink::new(echo);
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let used = chunk.len();
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            let start = line.len();
            let room = (MAX_LINE_BYTES + 1).saturating_sub(start);
            line.extend_from_slice(&piece[..piece.len().min(room)]);
            let ends = piece.ends_with(b"\n");
            if hide_reports {
                if state == LineEcho::Undecided {
                    let seen = &line[..line.len().min(PREFIX.len())];
                    if seen.len() == PREFIX.len() && seen == PREFIX {
                        state = LineEcho::Hide;
                    } else if !PREFIX.starts_with(seen) || ends {
                        state = LineEcho::Echo;
                        // The bytes held back while undecided, then this piece's rest.
                        out.write(&line[..start]);
                    }
                }
                if state == LineEcho::Echo {
                    out.write(piece);
                }
            } else {
                out.write(piece);
            }
            if ends {
                batch.extend(parser.push_bytes(&line));
                line.clear();
                state = LineEcho::Undecided;
                batch_lines += 1;
                if batch_lines >= BATCH_LINES {
                    let _ = tx.send((std::mem::take(&mut batch), batch_lines));
                    batch_lines = 0;
                }
            }
        }
        out.flush();
        reader.consume(used);
    }
    if !line.is_empty() {
        if hide_reports && state == LineEcho::Undecided {
            out.write(&line);
            out.flush();
        }
        batch.extend(parser.push_bytes(&line));
        batch_lines += 1;
    }
    batch.extend(parser.finish());
    let _ = tx.send((batch, batch_lines));
}

/// Where echoed bytes go. A closed terminal must not stop the job: write errors are
/// ignored.
struct Sink {
    echo: Echo,
    buf: Vec<u8>,
}

impl Sink {
    fn new(echo: Echo) -> Self {
        Sink {
            echo,
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.echo != Echo::Nowhere {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Writes what one read brought, at once, so output is not held back.
    fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let _ = match self.echo {
            Echo::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&self.buf).and_then(|()| out.flush())
            }
            Echo::Stderr => std::io::stderr().lock().write_all(&self.buf),
            Echo::Nowhere => Ok(()),
        };
        self.buf.clear();
    }
}

/// Forwards SIGINT, SIGTERM and SIGHUP to the child's process group while it lives.
struct SignalForwarder {
    handle: Option<signal_hook::iterator::Handle>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SignalForwarder {
    fn start(child: u32) -> Self {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            // Without forwarding the job still runs; Ctrl-C then stops gpu-doctor only
            // after the job ends, which is the worst case, not a failure.
            return SignalForwarder {
                handle: None,
                thread: None,
            };
        };
        let handle = signals.handle();
        let thread = std::thread::spawn(move || {
            let Some(group) = i32::try_from(child)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            else {
                return;
            };
            for sig in signals.forever() {
                let signal = match sig {
                    SIGINT => rustix::process::Signal::INT,
                    SIGTERM => rustix::process::Signal::TERM,
                    SIGHUP => rustix::process::Signal::HUP,
                    _ => continue,
                };
                // The group may be gone already; nothing to do then.
                let _ = rustix::process::kill_process_group(group, signal);
            }
        });
        SignalForwarder {
            handle: Some(handle),
            thread: Some(thread),
        }
    }
}

impl Drop for SignalForwarder {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.close();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
