//! `gpu-doctor serve`: a Prometheus/OpenMetrics endpoint over the latest GPU sample.
//!
//! The crate owns three pieces and the seams between them:
//!
//! - [`sampler`]: one thread owns the [`GpuSource`] and samples it on its own timer;
//! - [`state`]: turns samples and events into an immutable [`Snapshot`] (findings from the
//!   health rules, leak suspects, Xid counters) published behind an `Arc`;
//! - [`metrics`] and [`http`]: a bounded HTTP server whose `/metrics` only encodes the
//!   current snapshot, and whose `/healthz` says whether it is fresh.
//!
//! The driver is never called from a scrape, so scrapes cannot pile up on it and cost the
//! same whatever the driver is doing. The metric names are documented in `docs/serve.md`.

pub mod http;
pub mod metrics;
pub mod sampler;
pub mod state;

pub use http::{HttpConfig, HttpServer, Request, Response};
pub use metrics::{Format, RenderOptions, render};
pub use sampler::{Published, Sampler};
pub use state::{Health, LeakSuspect, Snapshot, State, StateConfig, XidLabel};

use gpu_doctor_model::Clock;
use gpu_doctor_source::{GpuSource, SourceError};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Where `serve` listens unless told otherwise: loopback only, so a metrics endpoint is
/// never exposed by accident. Port 9836: 9835, the port first suggested, is
/// `nvidia_gpu_exporter`'s, which often runs on the same GPU nodes (dcgm-exporter is 9400).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9836";

/// Everything `serve` can be told.
#[derive(Debug, Clone)]
pub struct ExporterConfig {
    pub listen: SocketAddr,
    /// Time between samples.
    pub interval: Duration,
    /// Processes per GPU with their own `gpu_doctor_process_memory_used_bytes` series.
    pub top_processes: usize,
    /// `/healthz` turns 503 when the latest sample is older than this.
    pub stale_after: Duration,
    pub http: HttpConfig,
    pub state: StateConfig,
}

impl ExporterConfig {
    /// The defaults for a listen address and an interval; stale after three missed samples
    /// (and never sooner than 15 s, so a fast interval does not flap).
    pub fn new(listen: SocketAddr, interval: Duration) -> Self {
        ExporterConfig {
            listen,
            interval,
            top_processes: 10,
            stale_after: (interval * 3).max(Duration::from_secs(15)),
            http: HttpConfig::default(),
            state: StateConfig::default(),
        }
    }
}

/// Why the exporter could not start. Each variant has a hint a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum ExporterError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot read the GPU inventory: {0}")]
    Source(#[from] SourceError),
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
}

impl ExporterError {
    pub fn hint(&self) -> Option<String> {
        match self {
            ExporterError::Bind { addr, source } => Some(match source.kind() {
                std::io::ErrorKind::AddrInUse => format!(
                    "another process listens on {addr} (`ss -ltnp 'sport = :{}'` names it); pick another port with --listen",
                    addr.port()
                ),
                std::io::ErrorKind::AddrNotAvailable => format!(
                    "{} is not an address of this machine; use 127.0.0.1 (local), 0.0.0.0 (every interface) or one from `ip -br addr`",
                    addr.ip()
                ),
                std::io::ErrorKind::PermissionDenied => {
                    "ports below 1024 need root; use a port above 1024".to_owned()
                }
                _ => "check the address given to --listen".to_owned(),
            }),
            ExporterError::Source(e) => e.hint().map(str::to_owned),
            ExporterError::Thread(_) => {
                Some("the system is out of threads or memory; check `ulimit -u`".to_owned())
            }
        }
    }
}

/// Routes `/metrics`, `/healthz` and `/` to the current snapshot.
struct Routes {
    published: Arc<Published>,
    clock: Arc<dyn Clock>,
    top_processes: usize,
    stale_after: Duration,
}

impl http::Handler for Routes {
    fn handle(&self, request: &Request) -> Response {
        match request.path.as_str() {
            "/metrics" => {
                let format = Format::from_accept(request.accept.as_deref());
                let options = RenderOptions {
                    now_ms: self.clock.now_ms(),
                    top_processes: self.top_processes,
                };
                Response {
                    status: 200,
                    content_type: format.content_type(),
                    body: render(self.published.load(), options, format).into_bytes(),
                }
            }
            "/healthz" => {
                let health = self
                    .published
                    .load()
                    .health(self.clock.now_ms(), self.stale_after);
                let status = if health.is_ok() { 200 } else { 503 };
                Response::text(status, format!("{}\n", health.describe()))
            }
            "/" => Response::text(
                200,
                "gpu-doctor exporter\n/metrics  Prometheus/OpenMetrics metrics\n/healthz  200 when the latest sample is fresh\n",
            ),
            _ => Response::text(404, "not found: try /metrics or /healthz\n"),
        }
    }
}

/// A running exporter: the sampler thread and the HTTP server.
#[derive(Debug)]
pub struct Exporter {
    published: Arc<Published>,
    sampler: Sampler,
    server: HttpServer,
}

impl Exporter {
    /// Reads the inventory (failing fast when the source is unusable), binds the address,
    /// then starts sampling and serving.
    pub fn start(
        mut source: Box<dyn GpuSource>,
        config: &ExporterConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Exporter, ExporterError> {
        let inventory = source.inventory()?;
        let state = State::new(inventory, config.state.clone());
        let published = Arc::new(Published::new(state.snapshot()));
        let routes = Routes {
            published: Arc::clone(&published),
            clock: Arc::clone(&clock),
            top_processes: config.top_processes,
            stale_after: config.stale_after,
        };
        let server = HttpServer::bind(
            config.listen,
            &config.http,
            &(Arc::new(routes) as Arc<dyn http::Handler>),
        )
        .map_err(|source| ExporterError::Bind {
            addr: config.listen,
            source,
        })?;
        let sampler = Sampler::spawn(
            source,
            state,
            Arc::clone(&published),
            config.interval,
            clock,
        )
        .map_err(ExporterError::Thread)?;
        Ok(Exporter {
            published,
            sampler,
            server,
        })
    }

    /// The address actually bound (the port is chosen by the system when asked for 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// The snapshot a scrape would see now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.published.load()
    }

    /// Serves until the process ends.
    pub fn wait(self) {
        self.server.join();
        self.sampler.stop();
    }

    /// Stops serving and sampling.
    pub fn shutdown(self) {
        self.server.shutdown();
        self.sampler.stop();
    }
}
