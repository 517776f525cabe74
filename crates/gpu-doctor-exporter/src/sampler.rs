//! The sampler thread: the only code that touches the GPU source.
//!
//! It reads one sample per interval on its own timer (a late sample is followed by the next
//! at once, never by a burst), turns it into a [`Snapshot`] through [`State`] and swaps it
//! into [`Published`]. A scrape takes an `Arc` to the current snapshot and encodes it, so it
//! never calls the driver, never waits for a sample in progress, and scrapes cannot pile up
//! on a hung driver: a hang shows as a growing `gpu_doctor_sample_age_seconds` and a `503`
//! from `/healthz` instead.

use crate::state::{Snapshot, State};
use gpu_doctor_model::Clock;
use gpu_doctor_source::{GpuSource, SourceError};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The latest snapshot, shared between the sampler (one writer) and the HTTP workers.
#[derive(Debug, Default)]
pub struct Published {
    current: RwLock<Arc<Snapshot>>,
}

impl Published {
    pub fn new(snapshot: Snapshot) -> Self {
        Published {
            current: RwLock::new(Arc::new(snapshot)),
        }
    }

    /// The current snapshot; the lock is held only to clone the `Arc`.
    pub fn load(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn store(&self, snapshot: Snapshot) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
    }
}

/// A running sampler thread.
#[derive(Debug)]
pub struct Sampler {
    stop: Sender<()>,
    handle: JoinHandle<()>,
}

impl Sampler {
    /// Starts sampling `source` every `interval`, publishing into `published`.
    pub fn spawn(
        source: Box<dyn GpuSource>,
        state: State,
        published: Arc<Published>,
        interval: Duration,
        clock: Arc<dyn Clock>,
    ) -> std::io::Result<Sampler> {
        let (stop, stopped) = channel();
        let handle = std::thread::Builder::new()
            .name("gpu-sampler".into())
            .spawn(move || run(source, state, &published, interval, &*clock, &stopped))?;
        Ok(Sampler { stop, handle })
    }

    /// Stops after the sample in progress, if any.
    pub fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.handle.join();
    }
}

fn run(
    mut source: Box<dyn GpuSource>,
    mut state: State,
    published: &Published,
    interval: Duration,
    clock: &dyn Clock,
    stopped: &Receiver<()>,
) {
    let mut next = Instant::now();
    loop {
        let started = Instant::now();
        match source.sample() {
            Ok(sample) => {
                let took = started.elapsed();
                // Events come with the sample they were drained after; a failure to drain
                // them loses events, not the sample.
                let events = source.drain_events().unwrap_or_default();
                state.ingest(sample, &events, clock.now_ms(), took);
            }
            Err(SourceError::Exhausted) => state.source_finished(clock.now_ms()),
            Err(e) => state.record_error(e.to_string()),
        }
        published.store(state.snapshot());
        // Fixed rate from the first sample: no drift, and a sample that overran its slot is
        // followed by the next one at once rather than by a catch-up burst.
        next += interval;
        let now = Instant::now();
        if next < now {
            next = now;
        }
        match stopped.recv_timeout(next - now) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
