//! `gpu-doctor record`: GPU state over time into an NDJSON recording.
//!
//! The file format is `gpu_doctor_source::RecordingWriter`'s (documented in
//! `docs/recording.md`): a header, then samples and events, each line flushed as it is
//! written so a killed recorder leaves a readable file. Ticks are scheduled against a fixed
//! start so the interval does not drift by the time a sample takes.

use crate::commands::report::store_error;
use crate::commands::{Context, SourceSpec};
use crate::exit::{ExitStatus, Hinted};
use clap::Args;
use gpu_doctor_model::units::parse_duration;
use gpu_doctor_model::{Clock, SCHEMA_VERSION, SystemClock};
use gpu_doctor_source::{RecordingHeader, RecordingWriter, SourceError};
use gpu_doctor_store::Store;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The recording to write (NDJSON; `-` for stdout).
    #[arg(short, long, value_name = "FILE", required_unless_present = "store")]
    pub output: Option<PathBuf>,
    /// Also (or instead) write to the history store: the default per-user one, or PATH.
    /// This is how the background agent runs (contrib/gpu-doctor-record.service).
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "")]
    pub store: Option<PathBuf>,
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
    let mut store = match &args.store {
        Some(path) if path.as_os_str().is_empty() => Some(Store::open(&Store::default_path())),
        Some(path) => Some(Store::open(path)),
        None => None,
    }
    .transpose()
    .map_err(store_error)?;
    let mut writer = match &args.output {
        None => None,
        Some(path) => {
            let out: Box<dyn std::io::Write> = if path.as_os_str() == "-" {
                Box::new(std::io::stdout().lock())
            } else {
                let file = File::create(path).map_err(|e| {
                    Hinted::new(
                        format!("cannot create {}: {e}", path.display()),
                        "choose a writable path with -o",
                    )
                })?;
                Box::new(BufWriter::new(file))
            };
            Some(RecordingWriter::new(out, header)?)
        }
    };
    let replay = matches!(ctx.source, SourceSpec::Replay(_));
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
            if let Some(writer) = &mut writer {
                writer.write_event(&event)?;
            }
            if let Some(store) = &mut store {
                store.ingest_event(&event).map_err(store_error)?;
            }
        }
        if let Some(writer) = &mut writer {
            writer.write_sample(&sample)?;
        }
        if let Some(store) = &mut store {
            store.ingest(&sample).map_err(store_error)?;
        }
        written += 1;
        if args.count.is_some_and(|n| written >= n) {
            break;
        }
        let next = args
            .interval
            .saturating_mul(u32::try_from(written).unwrap_or(u32::MAX));
        if args.duration.is_some_and(|d| next >= d) {
            break;
        }
        // A recording is copied as fast as it reads; live sources are paced.
        if !replay && let Some(wait) = next.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    if let Some(store) = &mut store {
        store.flush().map_err(store_error)?;
    }
    let mut places: Vec<String> = args
        .output
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    places.extend(store.as_ref().map(|s| s.path().display().to_string()));
    eprintln!(
        "recorded {written} sample{} to {}",
        if written == 1 { "" } else { "s" },
        places.join(" and ")
    );
    Ok(ExitStatus::Success)
}

fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
}
