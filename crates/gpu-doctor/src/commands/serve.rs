//! `gpu-doctor serve`: a Prometheus/OpenMetrics endpoint (`/metrics`) and a health check
//! (`/healthz`) over the chosen GPU source. The work lives in `gpu-doctor-exporter`; this
//! module turns the command line into its configuration and reports startup errors.

use crate::exit::{ExitStatus, Hinted};
use clap::Args;
use gpu_doctor_exporter::{DEFAULT_LISTEN, Exporter, ExporterConfig};
use gpu_doctor_model::SystemClock;
use gpu_doctor_model::units::parse_duration;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::Context;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Loopback by default; `0.0.0.0:9836` serves every interface
    /// (what a Prometheus on another machine, or a Kubernetes pod, needs).
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Time between samples of the GPUs, e.g. 1s, 5s. Scrapes never read the driver; they
    /// get the latest sample.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Processes per GPU with their own memory series; the rest are summed into pid="other".
    #[arg(long, value_name = "K", default_value_t = 10)]
    pub top_processes: usize,
    /// Connections served at once (each keeps a worker while it is open).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub http_workers: usize,
}

pub fn run(ctx: &Context, args: ServeArgs) -> anyhow::Result<ExitStatus> {
    let ServeArgs {
        listen,
        interval,
        top_processes,
        http_workers,
    } = args;
    if interval < Duration::from_millis(100) {
        return Err(Hinted::new(
            format!("--interval {interval:?} is too short"),
            "sample every 100ms or more; Prometheus scrapes every 15s or so, and a faster sampler only costs CPU",
        ));
    }
    if http_workers == 0 || http_workers > 256 {
        return Err(Hinted::new(
            format!("--http-workers {http_workers} is out of range"),
            "use 1 to 256 (4 serves a Prometheus pair with room to spare)",
        ));
    }
    let source = ctx.open_source()?;
    let mut config = ExporterConfig::new(listen, interval);
    config.top_processes = top_processes;
    config.http.workers = http_workers;
    let exporter = Exporter::start(source, &config, Arc::new(SystemClock)).map_err(|e| {
        let hint = e
            .hint()
            .unwrap_or_else(|| "run `gpu-doctor check` to see what is wrong".into());
        Hinted::new(e.to_string(), hint)
    })?;
    eprintln!(
        "gpu-doctor serve: http://{}/metrics (sampling every {:?}); /healthz for liveness",
        exporter.local_addr(),
        interval
    );
    exporter.wait();
    Ok(ExitStatus::Success)
}
