//! `gpu-doctor record`: GPU state over time into an NDJSON recording.
//!
//! The file format is `gpu_doctor_source::RecordingWriter`'s (documented in
//! `docs/recording.md`): a header, then samples and events, each line flushed as it is
//! written so a killed recorder leaves a readable file. Ticks are scheduled against a fixed
//! start so the interval does not drift by the time a sample takes.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use clap::Args;
use gpu_doctor_model::units::parse_duration;
use gpu_doctor_model::{Clock, SCHEMA_VERSION, SystemClock};
use gpu_doctor_source::{RecordingHeader, RecordingWriter, SourceError};
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The recording to write (NDJSON; `-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Time between samples, e.g. 100ms, 1s.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Stop after this long, e.g. 60s, 2h (default: until interrupted).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Stop after this many samples.
    #[arg(long)]
    pub count: Option<u64>,
}

pub fn run(ctx: &Context, args: RecordArgs) -> anyhow::Result<ExitStatus> {
    if args.interval < Duration::from_millis(10) {
        return Err(Hinted::new(
            "an interval under 10ms only measures the driver",
            "use --interval 100ms or more",
        ));
    }
    let mut source = ctx.open_source()?;
    let inventory = source.inventory()?;
    let clock = SystemClock;
    let header = RecordingHeader {
        schema_version: SCHEMA_VERSION,
        tool: format!("gpu-doctor {}", env!("CARGO_PKG_VERSION")),
        hostname: hostname(),
        started_ms: clock.now_ms(),
        interval_ms: u64::try_from(args.interval.as_millis()).unwrap_or(u64::MAX),
        inventory,
    };
    let out: Box<dyn std::io::Write> = if args.output.as_os_str() == "-" {
        Box::new(std::io::stdout().lock())
    } else {
        let file = File::create(&args.output).map_err(|e| {
            Hinted::new(
                format!("cannot create {}: {e}", args.output.display()),
                "choose a writable path with -o",
            )
        })?;
        Box::new(BufWriter::new(file))
    };
    let mut writer = RecordingWriter::new(out, header)?;
    let start = Instant::now();
    let mut written = 0u64;
    loop {
        let sample = match source.sample() {
            Ok(sample) => sample,
            // Recording a replay copies it; its end is the recording's end.
            Err(SourceError::Exhausted) => break,
            Err(e) => return Err(e.into()),
        };
        for event in source.drain_events()? {
            writer.write_event(&event)?;
        }
        writer.write_sample(&sample)?;
        written += 1;
        if args.count.is_some_and(|n| written >= n) {
            break;
        }
        let next = args.interval.saturating_mul(u32::try_from(written).unwrap_or(u32::MAX));
        if args.duration.is_some_and(|d| next >= d) {
            break;
        }
        if let Some(wait) = next.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    eprintln!(
        "recorded {written} sample{} to {}",
        if written == 1 { "" } else { "s" },
        args.output.display()
    );
    Ok(ExitStatus::Success)
}

fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
}
