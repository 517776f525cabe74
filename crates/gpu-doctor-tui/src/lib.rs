//! The full-screen monitor behind `gpu-doctor watch`.
//!
//! Shaped like bottom: one loop samples the source once per interval into an owned
//! [`App`] state, and frames are drawn from that state only, so a fast refresh costs one
//! sample and one diffed redraw, never repeated driver calls. Keys are read between
//! samples. The crate reads a [`GpuSource`]; it never touches NVML itself.

mod app;
mod ui;

pub use app::{App, Key, SortKey, WINDOW_MS};
pub use ui::draw;

use gpu_doctor_source::{GpuSource, SourceError};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use std::time::{Duration, Instant};

/// Runs the monitor until the user quits. The terminal is restored on every exit path,
/// a panic included (ratatui's `init` installs the hook).
pub fn run(
    mut source: Box<dyn GpuSource>,
    interval: Duration,
    source_label: String,
) -> Result<(), SourceError> {
    let inventory = source.inventory()?;
    let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
    let mut app = App::new(inventory, source_label, interval_ms);
    // The first sample is taken before the screen switches, so a failing source reports
    // its error on a normal terminal.
    let first = source.sample()?;
    let events = source.drain_events()?;
    app.push(first, events);
    let mut terminal = ratatui::init();
    let result = event_loop(&mut terminal, &mut app, source.as_mut(), interval);
    ratatui::restore();
    result
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    source: &mut dyn GpuSource,
    interval: Duration,
) -> Result<(), SourceError> {
    let io = |e: std::io::Error| SourceError::Driver(format!("terminal: {e}"));
    let mut next = Instant::now() + interval;
    let mut dirty = true;
    loop {
        if dirty {
            terminal.draw(|frame| draw(frame, app)).map_err(io)?;
            dirty = false;
        }
        let wait = next.saturating_duration_since(Instant::now());
        if event::poll(wait).map_err(io)? {
            if let Event::Key(key) = event::read().map_err(io)?
                && key.kind == KeyEventKind::Press
            {
                let key = match key.code {
                    KeyCode::Char('q') | KeyCode::Esc => Key::Quit,
                    KeyCode::Up | KeyCode::Char('k') => Key::Up,
                    KeyCode::Down | KeyCode::Char('j') => Key::Down,
                    KeyCode::Char('s') => Key::Sort,
                    KeyCode::Char('?' | 'h') => Key::Help,
                    KeyCode::Char('p') => Key::Pause,
                    _ => Key::Other,
                };
                if !app.key(key) {
                    return Ok(());
                }
                dirty = true;
            }
            continue;
        }
        next += interval;
        if Instant::now() > next {
            // Fell behind (a slow driver call): skip ticks instead of bursting.
            next = Instant::now() + interval;
        }
        if app.ended.is_some() {
            continue;
        }
        match source.sample() {
            Ok(sample) => {
                let events = source.drain_events()?;
                app.push(sample, events);
                dirty = true;
            }
            Err(SourceError::Exhausted) => {
                app.ended = Some("end of recording (q to quit)".into());
                dirty = true;
            }
            Err(e) => {
                app.ended = Some(format!("source failed: {e}"));
                dirty = true;
            }
        }
    }
}
