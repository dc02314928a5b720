//! Ctrl-C and SIGTERM: a handler that only records the signal, so the CLI can finish the command
//! in flight, give every device back to its driver, and exit 130 or 143 (design.md §5).
//!
//! The handler stores the signal number in an atomic and returns; nothing else is
//! async-signal-safe. The restore work runs on the normal path: the CLI calls [`check`] between
//! steps (or [`pending`]), returns the [`PciError::Interrupted`] it gets, and the
//! [`HandOff`](crate::handoff::HandOff) guards restore the bindings as they drop. For a path that
//! must leave through `std::process::exit`, [`restore_all`](crate::handoff::restore_all) restores
//! every live hand-off first.

use std::fmt;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use serde::Serialize;

use crate::PciError;

/// The signal last received, 0 for none.
static PENDING: AtomicI32 = AtomicI32::new(0);

/// The line the handler writes to stderr when the first stop request arrives, null for none
/// (see [`set_notice`]). Points to a leaked, never-freed `Notice`.
static NOTICE: AtomicPtr<Notice> = AtomicPtr::new(std::ptr::null_mut());

/// A line for the handler to write: leaked, so it outlives any signal that could read it.
struct Notice {
    line: &'static [u8],
}

/// A stop request ocetool handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Signal {
    /// The signal number.
    pub fn number(self) -> libc::c_int {
        match self {
            Self::Interrupt => libc::SIGINT,
            Self::Terminate => libc::SIGTERM,
        }
    }

    /// The shell's exit status for a command killed by this signal: 128 + the signal number
    /// (130 for SIGINT, 143 for SIGTERM).
    pub fn exit_code(self) -> i32 {
        128 + self.number()
    }

    fn from_number(n: libc::c_int) -> Option<Self> {
        match n {
            libc::SIGINT => Some(Self::Interrupt),
            libc::SIGTERM => Some(Self::Terminate),
            _ => None,
        }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
        })
    }
}

extern "C" fn record_signal(signal: libc::c_int) {
    // Only lock-free atomics and write(2): async-signal-safe.
    let before = PENDING.swap(signal, Ordering::SeqCst);
    let notice = NOTICE.load(Ordering::SeqCst);
    if before == 0 && !notice.is_null() {
        // SAFETY: a non-null NOTICE comes from `Box::leak` in `set_notice` and is never freed,
        // so it and its 'static line are valid here. write(2) is async-signal-safe; a short or
        // failed write only loses the notice, which the handler cannot report anyway.
        let line = unsafe { (*notice).line };
        // SAFETY: `line` is a valid slice of `line.len()` bytes (above).
        let _ = unsafe { libc::write(libc::STDERR_FILENO, line.as_ptr().cast(), line.len()) };
    }
}

/// Sets the line (a newline is added) the signal handler writes on stderr, at once, when the
/// first SIGINT or SIGTERM arrives — for work that takes a while to reach its next stop point
/// (a flash finishing the write in flight), so the user knows the stop was heard and when it
/// will happen. `None` removes it. A stop already pending gets no line. Each call leaks the
/// line (a few bytes, a few times per process): the handler may read it at any moment.
pub fn set_notice(line: Option<&str>) {
    let notice = line.map_or(std::ptr::null_mut(), |l| {
        let bytes: &'static [u8] = Box::leak(format!("{l}\n").into_bytes().into_boxed_slice());
        Box::leak(Box::new(Notice { line: bytes })) as *mut Notice
    });
    NOTICE.store(notice, Ordering::SeqCst);
}

/// Installs the SIGINT and SIGTERM handlers, and the SIGBUS report ([`crate::sigbus`]). Calling
/// it again is harmless.
///
/// `SA_RESTART` keeps a system call that the signal interrupts (a sysfs write, a VFIO pread)
/// from failing with `EINTR`, so the command in flight completes.
pub fn install() -> Result<(), PciError> {
    crate::sigbus::install();
    for signal in [Signal::Interrupt, Signal::Terminate] {
        // SAFETY: sigaction is a plain C struct for which all-zero bytes are a valid value (empty
        // mask, no flags, null handler); every field that matters is set below.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = record_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: `action.sa_mask` is a valid sigset_t owned by this frame.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: `action` is fully initialised above; its handler only performs an atomic store,
        // which is async-signal-safe; a null old-action pointer is allowed by sigaction(2).
        let rc = unsafe { libc::sigaction(signal.number(), &action, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(PciError::SignalHandler { signal, source: std::io::Error::last_os_error() });
        }
    }
    Ok(())
}

/// The stop request received so far, if any.
pub fn pending() -> Option<Signal> {
    Signal::from_number(PENDING.load(Ordering::SeqCst))
}

/// `Err(Interrupted)` once a stop request has arrived: call it between steps of a command.
pub fn check() -> Result<(), PciError> {
    match pending() {
        Some(signal) => Err(PciError::Interrupted { signal }),
        None => Ok(()),
    }
}

/// Forgets a recorded stop request (for a long-running caller that has handled it).
pub fn clear() {
    PENDING.store(0, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_sigterm_is_recorded_not_fatal() {
        let _s = crate::handoff::tests::serial();
        install().unwrap();
        install().unwrap();
        clear();
        assert_eq!(pending(), None);
        assert!(check().is_ok());
        // SAFETY: raise(3) with a signal whose handler was installed above.
        assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0);
        assert_eq!(pending(), Some(Signal::Terminate));
        let err = check().unwrap_err();
        assert_eq!(err.to_string(), "stopped by SIGTERM");
        assert_eq!(Signal::Terminate.exit_code(), 143);
        assert_eq!(Signal::Interrupt.exit_code(), 130);
        clear();
        assert_eq!(pending(), None);
    }
}
