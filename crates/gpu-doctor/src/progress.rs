//! The progress bar on stderr for large inputs (`explain` on a big log, `snapshot` on a big
//! pickle), drawn by indicatif: only when stderr is a terminal and the input is large, so
//! pipes, CI logs and small files see nothing; cleared when done so the report starts on a
//! clean line.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Inputs at least this large get a bar.
pub const MIN_BYTES: u64 = 64 << 20;

/// A bar over the bytes of one input.
pub struct FileProgress(ProgressBar);

impl FileProgress {
    /// A bar for `total` bytes of `label`, or `None` when none should be drawn.
    pub fn for_file(label: &str, total: u64) -> Option<FileProgress> {
        if total < MIN_BYTES || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::new(total);
        // The template is a constant: it parses.
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:30}] {percent:>3}% {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style.progress_chars("#>-"));
        }
        bar.set_message(label.to_owned());
        Some(FileProgress(bar))
    }

    /// `done` bytes read so far.
    pub fn set(&self, done: u64) {
        self.0.set_position(done);
    }
}

impl Drop for FileProgress {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
