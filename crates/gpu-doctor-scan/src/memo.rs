//! Remembers what recent lines were recognised as, so a log that prints the same line over
//! and over (a warning every step, the same error from every rank's loop) pays for
//! recognising it once instead of running a few hundred phrase searches and a few dozen
//! regexes on every copy.
//!
//! Recognising a line depends only on its text and on the scanner's [`Context`] before it,
//! so a remembered result is reused only when both are the same, and it leaves behind the
//! context the line left the first time.

use crate::facts::ObsKind;
use crate::failure;
use crate::recognize::{self, Context, Found};
use std::collections::HashMap;

/// Distinct lines remembered; the memo starts over when full, which keeps it bounded and
/// cheap for logs whose error lines all differ.
const CAPACITY: usize = 256;
/// Longer lines are recognised every time: they are rarely repeated verbatim, and the memo's
/// memory stays small.
const MAX_TEXT: usize = 512;

#[derive(Debug, Default)]
pub(crate) struct LineMemo {
    lines: HashMap<String, Vec<Remembered>>,
    entries: usize,
}

#[derive(Debug)]
struct Remembered {
    before: Context,
    after: Context,
    recognised: Recognised,
}

/// What one line yielded: the recognisers' result, and the failure it states when no
/// recogniser took it.
#[derive(Debug, Clone)]
pub(crate) struct Recognised {
    pub found: Found,
    pub failure: Option<ObsKind>,
}

impl LineMemo {
    pub(crate) fn recognise(&mut self, text: &str, ctx: &mut Context) -> Recognised {
        if text.len() > MAX_TEXT {
            return recognise_afresh(text, ctx);
        }
        if let Some(seen) = self
            .lines
            .get(text)
            .and_then(|seen| seen.iter().find(|r| r.before == *ctx))
        {
            ctx.clone_from(&seen.after);
            return seen.recognised.clone();
        }
        let before = ctx.clone();
        let recognised = recognise_afresh(text, ctx);
        if self.entries == CAPACITY {
            self.lines.clear();
            self.entries = 0;
        }
        self.entries += 1;
        self.lines
            .entry(text.to_owned())
            .or_default()
            .push(Remembered {
                before,
                after: ctx.clone(),
                recognised: recognised.clone(),
            });
        recognised
    }
}

fn recognise_afresh(text: &str, ctx: &mut Context) -> Recognised {
    let found = recognize::recognize(text, ctx);
    for (kind, _) in &found.observations {
        match kind {
            ObsKind::Oom(info) if !info.not_a_failure => {
                ctx.saw_oom = true;
                ctx.saw_error = true;
            }
            // Readings are not errors.
            ObsKind::MemoryReading { .. }
            | ObsKind::AllocatorStat { .. }
            | ObsKind::GpuMemory { .. }
            | ObsKind::GpuProcess { .. }
            | ObsKind::Temperature { .. }
            | ObsKind::Container { .. }
            | ObsKind::GpuPresent { .. }
            | ObsKind::Oom(_) => {}
            _ => ctx.saw_error = true,
        }
    }
    let failure = if found.observations.is_empty() {
        failure::failure(text)
    } else {
        None
    };
    Recognised { found, failure }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{EnvKind, Framework};
    use crate::recognize::Question;

    fn cpu_build(found: &Recognised) -> bool {
        found.found.observations.iter().any(|(kind, _)| {
            matches!(
                kind,
                ObsKind::Env {
                    env: EnvKind::TorchCpuBuild,
                    ..
                }
            )
        })
    }

    #[test]
    fn a_repeated_line_gets_the_first_result_and_leaves_the_same_context() {
        let mut memo = LineMemo::default();
        // A line that leaves the context as it found it (an error would mark one seen).
        let line = "|    0   N/A  N/A     12345      C   python                        1234MiB |";
        let mut ctx = Context::default();
        let first = memo.recognise(line, &mut ctx);
        let after_first = ctx.clone();
        let again = memo.recognise(line, &mut ctx);
        assert_eq!(first.found.observations, again.found.observations);
        assert_eq!(ctx, after_first);
        assert_eq!(memo.entries, 1);
        let mut fresh = Context::default();
        let afresh = recognise_afresh(line, &mut fresh);
        assert_eq!(afresh.found.observations, again.found.observations);
    }

    #[test]
    fn the_same_text_in_another_context_is_recognised_again() {
        // `False` alone says nothing; after `tf.test.is_built_with_cuda()` it is the answer.
        // (After an earlier error, so that the answer's finding leaves that mark as it was.)
        let mut memo = LineMemo::default();
        let mut ctx = Context {
            saw_error: true,
            ..Context::default()
        };
        assert!(!cpu_build(&memo.recognise("False", &mut ctx)));
        ctx.asked = Some(Question::CudaBuild(Framework::Tensorflow));
        assert!(cpu_build(&memo.recognise("False", &mut ctx)));
        assert_eq!(ctx.asked, None, "the answer consumes the question");
        assert_eq!(memo.entries, 2);
        ctx.asked = Some(Question::CudaBuild(Framework::Tensorflow));
        assert!(cpu_build(&memo.recognise("False", &mut ctx)));
        assert_eq!(memo.entries, 2, "the second context was remembered");
    }

    #[test]
    fn a_line_that_changes_the_context_is_remembered_for_both() {
        // The first error marks one seen; its repeats come after that mark.
        let mut memo = LineMemo::default();
        let line = "RuntimeError: CUDA error: an illegal memory access was encountered";
        let mut ctx = Context::default();
        let first = memo.recognise(line, &mut ctx);
        assert!(ctx.saw_error);
        let second = memo.recognise(line, &mut ctx);
        let third = memo.recognise(line, &mut ctx);
        assert_eq!(first.found.observations, second.found.observations);
        assert_eq!(second.found.observations, third.found.observations);
        assert_eq!(memo.entries, 2);
    }

    #[test]
    fn the_memo_stays_bounded() {
        let mut memo = LineMemo::default();
        let mut ctx = Context::default();
        for i in 0..CAPACITY * 3 {
            memo.recognise(&format!("RuntimeError: CUDA error {i}"), &mut ctx);
        }
        assert!(memo.entries <= CAPACITY);
        let long = "x".repeat(MAX_TEXT + 1);
        let before = memo.entries;
        memo.recognise(&long, &mut ctx);
        assert_eq!(memo.entries, before, "long lines are not remembered");
    }
}
