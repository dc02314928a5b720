//! Where the server says what happened: one line per event (a refused message, a DMA fault, a
//! client that went away), to stderr by default, or to a collector in tests.

use std::fmt;
use std::sync::{Arc, Mutex};

/// A line sink, cheap to clone and usable from any thread.
#[derive(Clone)]
pub struct Log {
    sink: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Log {
    /// Lines go to stderr, prefixed with `prefix`.
    pub fn stderr(prefix: &'static str) -> Self {
        Self { sink: Arc::new(move |line| eprintln!("{prefix}{line}")) }
    }

    /// Lines go to `f`.
    pub fn to(f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self { sink: Arc::new(f) }
    }

    /// Lines are kept in memory; the second value reads them (for tests).
    pub fn collect() -> (Self, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&lines);
        let log = Self::to(move |l| keep.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(l.to_owned()));
        (log, lines)
    }

    /// Says one line.
    pub fn line(&self, line: &str) {
        (self.sink)(line);
    }
}

impl fmt::Debug for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Log")
    }
}
