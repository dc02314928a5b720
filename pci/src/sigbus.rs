//! A bus error's last words: one line on stderr before SIGBUS ends the process.
//!
//! The kernel raises SIGBUS on an access through a mapping to a page past the end of its file,
//! which happens when another process truncates a file ocetool has mapped: the emulator's
//! `flash.bin` ([`crate::mmap::SharedFileMap`]), a firmware image being read
//! ([`crate::mmap::ReadOnlyMap`]), a BAR of a device that went away. Memory a VM shares with the
//! vfio-user server cannot do this (`crate::guest_memory::region`). Nothing can be recovered
//! from inside the faulting access, so the process still ends by the signal (exit status 135 in
//! a shell: 128 + SIGBUS), but it says why first, instead of dying without a word.
//!
//! The handler only formats into a buffer on its stack and calls `write(2)`, `sigaction(2)` and
//! `raise(3)`, all async-signal-safe (`signal-safety(7)`).

use std::sync::atomic::{AtomicBool, Ordering};

/// The line's text around the faulting address.
const BEFORE: &[u8] = b"ocetool: fatal: bus error (SIGBUS) at ";
const AFTER: &[u8] = b": a file mapped into memory was cut short by another process while in use (the emulator's \
flash.bin or a firmware image being read); stopped where it was, nothing after it was done\n";

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Writes `n` as `0x` and hexadecimal digits into `out`; returns the length.
fn hex(n: usize, out: &mut [u8; 18]) -> usize {
    out[0] = b'0';
    out[1] = b'x';
    let digits = (usize::BITS - n.leading_zeros()).div_ceil(4).max(1) as usize;
    for i in 0..digits {
        let nibble = (n >> (4 * (digits - 1 - i))) & 0xF;
        out[2 + i] = b"0123456789abcdef"[nibble];
    }
    2 + digits
}

extern "C" fn report(_signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; si_addr is defined
    // for SIGBUS (sigaction(2)).
    let addr = if info.is_null() { 0 } else { (unsafe { (*info).si_addr() }) as usize };
    let mut line = [0u8; 320];
    let mut digits = [0u8; 18];
    let n = hex(addr, &mut digits);
    let mut len = 0;
    for part in [BEFORE, &digits[..n], AFTER] {
        let take = part.len().min(line.len() - len);
        line[len..len + take].copy_from_slice(&part[..take]);
        len += take;
    }
    // SAFETY: `line[..len]` is initialised memory of this frame; write(2) on fd 2 is
    // async-signal-safe, and a failed write has nothing left to do.
    let _ = unsafe { libc::write(2, line.as_ptr().cast(), len) };
    // Back to the default action, then the signal again: it is blocked while this handler runs
    // and is delivered, and ends the process, as the handler returns (for a fault the access
    // would also fault again).
    // SAFETY: a zeroed sigaction is SIG_DFL with an empty mask; sigaction and raise are
    // async-signal-safe.
    unsafe {
        let default: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
        libc::raise(libc::SIGBUS);
    }
}

/// Installs the report. Best effort: if it cannot be installed the signal still ends the process
/// as it always does, without the line. Calling it again is harmless.
pub fn install() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: sigaction is a plain C struct for which all-zero bytes are a valid value; the
    // fields that matter are set below.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction =
        report as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as libc::sighandler_t;
    action.sa_flags = libc::SA_SIGINFO;
    // SAFETY: `action.sa_mask` is a valid sigset_t of this frame.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: `action` is initialised; the handler is async-signal-safe (module docs).
    let _ = unsafe { libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    #[test]
    fn addresses_are_written_in_hex() {
        let mut out = [0u8; 18];
        let n = hex(0x7f12_3456_7000, &mut out);
        assert_eq!(&out[..n], b"0x7f1234567000");
        let n = hex(0, &mut out);
        assert_eq!(&out[..n], b"0x0");
        let n = hex(usize::MAX, &mut out);
        assert_eq!(&out[..n], b"0xffffffffffffffff");
    }

    /// Set in the child that faults.
    const CHILD: &str = "OCE_PCI_SIGBUS_CHILD";

    #[test]
    fn a_file_cut_short_under_its_mapping_is_reported_before_the_process_ends() {
        if std::env::var_os(CHILD).is_some() {
            // The child: a mapping of a file that another party then truncates.
            install();
            let file = tempfile::tempfile().unwrap();
            file.set_len(8192).unwrap();
            let map = crate::guest_memory::GuestMapping::map(&file, 0, 8192, false).unwrap();
            file.set_len(0).unwrap();
            let mut byte = [0u8; 1];
            let _ = map.read_at(4096, &mut byte);
            unreachable!("the read past the end of the file must fault");
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "sigbus::tests::a_file_cut_short_under_its_mapping_is_reported_before_the_process_ends"])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), Some(libc::SIGBUS), "{stderr}");
        let line = stderr.lines().find(|l| l.starts_with("ocetool: fatal: bus error (SIGBUS) at 0x"));
        let line = line.unwrap_or_else(|| panic!("no report in: {stderr}"));
        assert!(line.ends_with("nothing after it was done"), "{line}");
    }
}
