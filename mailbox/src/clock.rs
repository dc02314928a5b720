//! Time for deadline polls. Production code uses [`SystemClock`]; tests use [`ManualClock`], whose
//! `sleep` advances virtual time, so a test of a 60-second timeout takes microseconds
//! (style.md rule 8: tests drive time, they don't sleep).

use std::fmt::Debug;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A source of time that polls can sleep on.
pub trait Clock: Debug + Send + Sync {
    /// The current instant.
    fn now(&self) -> Instant;
    /// Waits for `d`.
    fn sleep(&self, d: Duration);
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// A clock that only moves when something sleeps on it.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Instant>,
}

impl ManualClock {
    /// A clock starting now.
    pub fn new() -> Self {
        Self { now: Mutex::new(Instant::now()) }
    }
    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now += d;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}

/// Polls attempts this many times back to back before the first sleep: an emulated or fast device
/// answers within a few reads, and a sleep would cost more than the whole command.
const SPIN_ATTEMPTS: u32 = 64;
/// First sleep after the spin phase; doubles up to [`MAX_SLEEP`].
const FIRST_SLEEP: Duration = Duration::from_micros(10);
/// Longest sleep between attempts (be2net sleeps 1 ms between mailbox polls, spec §3.9).
const MAX_SLEEP: Duration = Duration::from_millis(1);

/// Calls `attempt` until it yields a value, fails, or `timeout` passes on `clock`.
///
/// Returns `Ok(Some(v))` on success, `Ok(None)` on timeout, `Err` as soon as `attempt` fails.
/// `attempt` runs at least once, and once more after the deadline, so a slow scheduler never
/// turns a ready device into a timeout.
pub fn poll_until<T, E>(
    clock: &dyn Clock,
    timeout: Duration,
    max_sleep: Duration,
    mut attempt: impl FnMut() -> Result<Option<T>, E>,
) -> Result<Option<T>, E> {
    let start = clock.now();
    let mut sleep = FIRST_SLEEP;
    let mut tries = 0u32;
    loop {
        if let Some(v) = attempt()? {
            return Ok(Some(v));
        }
        if clock.now().duration_since(start) >= timeout {
            return attempt();
        }
        tries = tries.saturating_add(1);
        if tries < SPIN_ATTEMPTS {
            std::hint::spin_loop();
        } else {
            clock.sleep(sleep);
            sleep = (sleep * 2).min(max_sleep.max(FIRST_SLEEP));
        }
    }
}

/// [`poll_until`] with the mailbox's 1 ms cap between attempts.
pub fn poll<T, E>(
    clock: &dyn Clock,
    timeout: Duration,
    attempt: impl FnMut() -> Result<Option<T>, E>,
) -> Result<Option<T>, E> {
    poll_until(clock, timeout, MAX_SLEEP, attempt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_times_out_without_real_sleep() {
        let clock = ManualClock::new();
        let start = Instant::now();
        let mut calls = 0;
        let out: Result<Option<()>, ()> = poll(&clock, Duration::from_secs(60), || {
            calls += 1;
            Ok(None)
        });
        assert_eq!(out, Ok(None));
        assert!(calls > SPIN_ATTEMPTS);
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(clock.now().duration_since(start) >= Duration::from_secs(60));
    }

    #[test]
    fn poll_returns_value_and_errors_immediately() {
        let clock = ManualClock::new();
        let mut n = 0;
        let v: Result<Option<u32>, ()> = poll(&clock, Duration::from_secs(1), || {
            n += 1;
            Ok((n == 3).then_some(n))
        });
        assert_eq!(v, Ok(Some(3)));
        let e: Result<Option<u32>, &str> = poll(&clock, Duration::from_secs(1), || Err("gone"));
        assert_eq!(e, Err("gone"));
    }
}
