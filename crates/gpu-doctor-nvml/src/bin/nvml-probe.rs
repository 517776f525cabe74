//! `nvml-probe`: opens [`NvmlSource`], prints the inventory, N samples and the events after
//! each as one JSON document. A developer tool (and the integration tests' child process),
//! not part of the `gpu-doctor` interface.
//!
//! ```text
//! nvml-probe [--lib PATH] [--samples N] [--interval-ms MS] [--timing]
//!            [--proc-root DIR] [--passwd FILE]
//! ```
//!
//! `--lib` defaults to `GPU_DOCTOR_NVML_LIB`, then the system's `libnvidia-ml.so.1`.
//! `--timing` adds wall times in microseconds: `open_us` (of which `init_us` is loading the
//! library and `nvmlInit`, the rest the per-device handles and static facts), each step's
//! `sample_us` and `drain_us` (the first drain registers the event set), and `close_us`
//! (`nvmlShutdown`).

use gpu_doctor_model::SCHEMA_VERSION;
use gpu_doctor_nvml::{NvmlSource, ProcFs};
use gpu_doctor_source::GpuSource;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Args {
    lib: Option<PathBuf>,
    samples: u32,
    interval: Duration,
    timing: bool,
    proc_root: Option<PathBuf>,
    passwd: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        lib: std::env::var_os("GPU_DOCTOR_NVML_LIB")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        samples: 1,
        interval: Duration::ZERO,
        timing: false,
        proc_root: None,
        passwd: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--lib" => args.lib = Some(value()?.into()),
            "--samples" => {
                args.samples = value()?.parse().map_err(|e| format!("--samples: {e}"))?;
            }
            "--interval-ms" => {
                let ms: u64 = value()?
                    .parse()
                    .map_err(|e| format!("--interval-ms: {e}"))?;
                args.interval = Duration::from_millis(ms);
            }
            "--timing" => args.timing = true,
            "--proc-root" => args.proc_root = Some(value()?.into()),
            "--passwd" => args.passwd = Some(value()?.into()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(args)
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn run(args: &Args) -> Result<Value, (String, Option<&'static str>)> {
    let started = Instant::now();
    let mut source =
        NvmlSource::open(args.lib.as_deref()).map_err(|e| (e.to_string(), e.hint()))?;
    let open_us = micros(started.elapsed());
    if args.proc_root.is_some() || args.passwd.is_some() {
        source.set_procfs(ProcFs::new(
            args.proc_root.clone().unwrap_or_else(|| "/proc".into()),
            args.passwd.clone().unwrap_or_else(|| "/etc/passwd".into()),
        ));
    }
    let inventory = source.inventory().map_err(|e| (e.to_string(), e.hint()))?;
    let mut steps = Vec::new();
    for i in 0..args.samples {
        if i > 0 {
            std::thread::sleep(args.interval);
        }
        let t = Instant::now();
        let sample = source.sample().map_err(|e| (e.to_string(), e.hint()))?;
        let sample_us = micros(t.elapsed());
        let t = Instant::now();
        let events = source
            .drain_events()
            .map_err(|e| (e.to_string(), e.hint()))?;
        let drain_us = micros(t.elapsed());
        let mut step = json!({ "sample": sample, "events": events });
        if args.timing {
            // The first drain registers the event set on every GPU.
            step["sample_us"] = json!(sample_us);
            step["drain_us"] = json!(drain_us);
        }
        steps.push(step);
    }
    let mut out = json!({
        "schema_version": SCHEMA_VERSION,
        "inventory": inventory,
        "steps": steps,
    });
    if args.timing {
        out["open_us"] = json!(open_us);
        out["init_us"] = json!(micros(source.init_duration()));
        let t = Instant::now();
        drop(source);
        out["close_us"] = json!(micros(t.elapsed()));
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!(
                "hint: nvml-probe [--lib PATH] [--samples N] [--interval-ms MS] [--timing] [--proc-root DIR] [--passwd FILE]"
            );
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(doc) => {
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err((message, hint)) => {
            eprintln!("error: {message}");
            if let Some(hint) = hint {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(2)
        }
    }
}
