//! Where the server says what happened: one line per event (a refused message, a DMA fault, a
//! client that went away), to stderr by default, or to a collector in tests.
//!
//! Lines a client can cause at will (one per message it sends) go through [`Log::limited`]: at
//! most [`BURST`] of them per [`WINDOW`], shared by every clone of the log; the rest are counted
//! and reported as one line when the next window opens, or at [`Log::flush_suppressed`] (the
//! end of a session). So a client that floods the server with bad messages costs a few lines a
//! second, and the count of what it sent is still told.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The rate limit's window (policy: long enough to merge a flood, short enough that a line
/// about a new problem comes out promptly).
pub const WINDOW: Duration = Duration::from_secs(1);
/// Lines [`Log::limited`] lets through per window (policy: a burst of different problems stays
/// readable whole).
pub const BURST: u32 = 10;

#[derive(Debug)]
struct Limiter {
    window_start: Option<Instant>,
    passed: u32,
    suppressed: u64,
}

/// A line sink, cheap to clone and usable from any thread.
#[derive(Clone)]
pub struct Log {
    sink: Arc<dyn Fn(&str) + Send + Sync>,
    limiter: Arc<Mutex<Limiter>>,
}

impl Log {
    /// Lines go to stderr, prefixed with `prefix`.
    pub fn stderr(prefix: &'static str) -> Self {
        Self::to(move |line| eprintln!("{prefix}{line}"))
    }

    /// Lines go to `f`.
    pub fn to(f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        let limiter = Limiter { window_start: None, passed: 0, suppressed: 0 };
        Self { sink: Arc::new(f), limiter: Arc::new(Mutex::new(limiter)) }
    }

    /// Lines are kept in memory; the second value reads them (for tests).
    pub fn collect() -> (Self, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&lines);
        let log = Self::to(move |l| keep.lock().unwrap_or_else(PoisonError::into_inner).push(l.to_owned()));
        (log, lines)
    }

    /// Says one line.
    pub fn line(&self, line: &str) {
        (self.sink)(line);
    }

    /// Says one line a client can cause at will, within the rate limit (module docs).
    pub fn limited(&self, line: &str) {
        self.limited_at(line, Instant::now());
    }

    fn limited_at(&self, line: &str, now: Instant) {
        let mut l = self.limiter.lock().unwrap_or_else(PoisonError::into_inner);
        let expired = l.window_start.is_none_or(|start| now.saturating_duration_since(start) >= WINDOW);
        if expired {
            let suppressed = std::mem::take(&mut l.suppressed);
            *l = Limiter { window_start: Some(now), passed: 0, suppressed: 0 };
            if suppressed > 0 {
                self.line(&suppressed_line(suppressed));
            }
        }
        if l.passed < BURST {
            l.passed += 1;
            drop(l);
            self.line(line);
        } else {
            l.suppressed += 1;
        }
    }

    /// Reports the lines the rate limit has held back and not yet counted aloud.
    pub fn flush_suppressed(&self) {
        let suppressed = std::mem::take(&mut self.limiter.lock().unwrap_or_else(PoisonError::into_inner).suppressed);
        if suppressed > 0 {
            self.line(&suppressed_line(suppressed));
        }
    }
}

fn suppressed_line(n: u64) -> String {
    format!("{n} more such lines suppressed (at most {BURST} every {WINDOW:?})")
}

impl fmt::Debug for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Log")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_passes_a_burst_per_window_and_counts_the_rest() {
        let (log, lines) = Log::collect();
        let t0 = Instant::now();
        for i in 0..25 {
            log.limited_at(&format!("refused {i}"), t0);
        }
        assert_eq!(lines.lock().unwrap().len(), BURST as usize);
        // The next window opens with the count of the last one's suppressed lines.
        log.limited_at("refused 25", t0 + WINDOW);
        let got = lines.lock().unwrap().clone();
        assert_eq!(got[BURST as usize], "15 more such lines suppressed (at most 10 every 1s)");
        assert_eq!(got.last().unwrap(), "refused 25");
        for i in 0..12 {
            log.limited_at(&format!("again {i}"), t0 + WINDOW);
        }
        log.flush_suppressed();
        assert_eq!(lines.lock().unwrap().last().unwrap(), "3 more such lines suppressed (at most 10 every 1s)");
        log.flush_suppressed();
        assert_eq!(lines.lock().unwrap().len(), BURST as usize + 2 + 9 + 1, "nothing more to report");
        // Plain lines are never limited.
        log.line("closed");
        assert_eq!(lines.lock().unwrap().last().unwrap(), "closed");
    }
}
