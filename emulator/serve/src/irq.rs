//! The interrupt lines of the served device, as the client wired them with SET_IRQS: an eventfd
//! for INTx with level semantics, one per MSI-X vector.
//!
//! INTx is offered MASKABLE | AUTOMASKED, like the kernel's vfio-pci: signalling the eventfd
//! masks the line, and the client's UNMASK (after the guest's EOI) re-signals it while the device
//! still asserts the level. MSI-X masking lives in the client (QEMU emulates the table); a vector
//! the device sends while it has no eventfd is kept pending, as the PBA would, and sent when one
//! arrives. Whether the device may interrupt at all (bus master, INTx disable) is the device's
//! decision: it calls [`Interrupt`] only when its command register allows it.
//!
//! Signalling never blocks the server: each descriptor SET_IRQS brings is checked to be an
//! eventfd (its `/proc/self/fd` link reads `anon_inode:[eventfd]`; a pipe, a socket or a file is
//! refused with EINVAL) and set `O_NONBLOCK`, so an eventfd whose counter the client has filled
//! fails the write (logged, within the log's rate limit) instead of waiting for the client to
//! read it. The flag is on the open file, which the client shares: QEMU creates its eventfds
//! non-blocking already (`event_notifier_init`, `EFD_NONBLOCK`), so for QEMU nothing changes.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::log::Log;
use crate::protocol::messages::{
    IRQ_SET_ACTION_MASK, IRQ_SET_ACTION_TRIGGER, IRQ_SET_ACTION_UNMASK, IRQ_SET_DATA_BOOL, IRQ_SET_DATA_EVENTFD,
    IRQ_SET_DATA_NONE,
};
use crate::protocol::{IrqInfo, SetIrqs};
use oce_emulator::device::Interrupt;

/// `VFIO_PCI_INTX_IRQ_INDEX` .. `VFIO_PCI_REQ_IRQ_INDEX` (`<linux/vfio.h>`).
pub const INTX: u32 = 0;
/// MSI (not offered: count 0).
pub const MSI: u32 = 1;
/// MSI-X.
pub const MSIX: u32 = 2;
/// Error reporting (an eventfd is kept, never signalled: with count 0 QEMU warns that it
/// cannot enable error recovery; recipes/vfio-user-qemu.md §2).
pub const ERR: u32 = 3;
/// Device request (as ERR).
pub const REQ: u32 = 4;
/// `VFIO_PCI_NUM_IRQS`.
pub const NUM_IRQS: u32 = 5;

/// `VFIO_IRQ_INFO_EVENTFD`, `_MASKABLE`, `_AUTOMASKED`, `_NORESIZE` (`<linux/vfio.h>`).
const INFO_EVENTFD: u32 = 1;
const INFO_MASKABLE: u32 = 2;
const INFO_AUTOMASKED: u32 = 4;
const INFO_NORESIZE: u32 = 8;

#[derive(Debug, Default)]
struct State {
    intx: Option<File>,
    level: bool,
    masked: bool,
    msix: Vec<Option<File>>,
    pending: Vec<bool>,
    err: Option<File>,
    req: Option<File>,
    intx_sent: u64,
    msix_sent: u64,
}

/// The interrupt lines: cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct IrqLines {
    state: Arc<Mutex<State>>,
    log: Log,
}

/// Why a SET_IRQS was refused (EINVAL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqRefused(pub String);

fn kick(fd: &File) -> bool {
    // An eventfd counts the 8-byte value written (eventfd(2)); the descriptor is non-blocking
    // (`checked_eventfd`), so a full counter fails here rather than waiting.
    (&*fd).write_all(&1u64.to_ne_bytes()).is_ok()
}

/// What `readlink(/proc/self/fd/N)` says for an eventfd (`fs/eventfd.c`: the anonymous inode's
/// name is `[eventfd]`).
const EVENTFD_LINK: &str = "anon_inode:[eventfd]";

/// Checks that `fd` is an eventfd and makes it non-blocking (module docs). Without `/proc` the
/// kind cannot be told and is taken on trust; the descriptor is made non-blocking all the same.
fn checked_eventfd(fd: OwnedFd) -> Result<File, String> {
    match std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
        Ok(link) if link.as_os_str() != EVENTFD_LINK => {
            return Err(format!("the descriptor is not an eventfd ({})", link.display()));
        }
        _ => {}
    }
    let flags = rustix::fs::fcntl_getfl(&fd).map_err(|e| format!("fcntl(F_GETFL): {e}"))?;
    rustix::fs::fcntl_setfl(&fd, flags | rustix::fs::OFlags::NONBLOCK).map_err(|e| format!("fcntl(F_SETFL): {e}"))?;
    Ok(File::from(fd))
}

impl IrqLines {
    /// Lines for a device with `vectors` MSI-X vectors, none wired yet.
    pub fn new(vectors: u16, log: Log) -> Self {
        let n = usize::from(vectors);
        let state = State { msix: (0..n).map(|_| None).collect(), pending: vec![false; n], ..State::default() };
        Self { state: Arc::new(Mutex::new(state)), log }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What GET_IRQ_INFO answers for `index`.
    pub fn info(&self, index: u32) -> Option<IrqInfo> {
        let vectors = self.lock().msix.len() as u32;
        let (flags, count) = match index {
            INTX => (INFO_EVENTFD | INFO_MASKABLE | INFO_AUTOMASKED, 1),
            MSI => (0, 0),
            MSIX => (INFO_EVENTFD | INFO_NORESIZE, vectors),
            ERR | REQ => (INFO_EVENTFD, 1),
            _ => return None,
        };
        Some(IrqInfo { flags, index, count })
    }

    /// Interrupts sent so far: (INTx, MSI-X).
    pub fn sent(&self) -> (u64, u64) {
        let s = self.lock();
        (s.intx_sent, s.msix_sent)
    }

    /// Forgets every eventfd (the client went away); pending state is kept for the next client.
    pub fn disconnect(&self) {
        let mut s = self.lock();
        s.intx = None;
        s.err = None;
        s.req = None;
        s.msix.iter_mut().for_each(|v| *v = None);
        s.masked = false;
    }

    /// Applies a SET_IRQS message with the descriptors that came with it.
    pub fn set(&self, msg: &SetIrqs<'_>, fds: Vec<OwnedFd>) -> Result<(), IrqRefused> {
        let refuse = |why: &str| Err(IrqRefused(format!("SET_IRQS index {} flags {:#x}: {why}", msg.index, msg.flags)));
        let mut s = self.lock();
        let slots = match msg.index {
            INTX => 1,
            MSIX => s.msix.len(),
            ERR | REQ => 1,
            _ => return refuse("no such interrupt type on this device"),
        };
        let disable_all = msg.data() == IRQ_SET_DATA_NONE && msg.count == 0;
        let range = msg.start as usize..msg.start as usize + msg.count as usize;
        if !disable_all && range.end > slots {
            return refuse("outside the interrupt type's range");
        }
        if msg.data() != IRQ_SET_DATA_EVENTFD && !fds.is_empty() {
            return refuse("descriptors without DATA_EVENTFD");
        }
        if fds.len() > range.len() {
            return refuse("more descriptors than interrupts");
        }
        let fds = match fds.into_iter().map(checked_eventfd).collect::<Result<Vec<_>, _>>() {
            Ok(files) => files,
            Err(why) => return refuse(&why),
        };
        let first = range.start;
        let chosen = |i: usize| msg.data() != IRQ_SET_DATA_BOOL || msg.bools.get(i - first).is_some_and(|&b| b != 0);
        match (msg.index, msg.action()) {
            (INTX, IRQ_SET_ACTION_MASK) if msg.data() != IRQ_SET_DATA_EVENTFD => {
                if chosen(0) {
                    s.masked = true;
                }
            }
            (INTX, IRQ_SET_ACTION_UNMASK) if msg.data() != IRQ_SET_DATA_EVENTFD => {
                if chosen(0) {
                    s.masked = false;
                    Self::update_intx(&mut s);
                }
            }
            (_, IRQ_SET_ACTION_TRIGGER) if msg.data() == IRQ_SET_DATA_EVENTFD => {
                let mut fds = fds.into_iter();
                for i in range {
                    // Fewer descriptors than interrupts: the rest are de-assigned ("-1").
                    let fd = fds.next();
                    match msg.index {
                        INTX => s.intx = fd,
                        ERR => s.err = fd,
                        REQ => s.req = fd,
                        _ => {
                            if let (Some(f), true) = (&fd, s.pending[i]) {
                                s.pending[i] = false;
                                s.msix_sent += 1;
                                kick(f);
                            }
                            s.msix[i] = fd;
                        }
                    }
                }
                if msg.index == INTX {
                    Self::update_intx(&mut s);
                }
            }
            (_, IRQ_SET_ACTION_TRIGGER) if disable_all => match msg.index {
                INTX => s.intx = None,
                MSIX => s.msix.iter_mut().for_each(|v| *v = None),
                ERR => s.err = None,
                _ => s.req = None,
            },
            (INTX | MSIX, IRQ_SET_ACTION_TRIGGER) => {
                // The client triggers the interrupt itself (loopback test of its wiring).
                for i in range.filter(|&i| chosen(i)) {
                    let fd = if msg.index == INTX { s.intx.as_ref() } else { s.msix[i].as_ref() };
                    if let Some(fd) = fd {
                        kick(fd);
                    }
                }
            }
            _ => return refuse("unsupported action for this interrupt type"),
        }
        Ok(())
    }

    /// Signals INTx if the level is high, the line unmasked and wired; then masks it
    /// (AUTOMASKED).
    fn update_intx(s: &mut State) {
        if let (true, false, Some(fd)) = (s.level, s.masked, &s.intx) {
            kick(fd);
            s.intx_sent += 1;
            s.masked = true;
        }
    }
}

impl Interrupt for IrqLines {
    fn set_level(&self, asserted: bool) {
        let mut s = self.lock();
        s.level = asserted;
        Self::update_intx(&mut s);
    }

    fn signal(&self, vector: u16) {
        let mut s = self.lock();
        let i = usize::from(vector);
        match s.msix.get(i) {
            Some(Some(fd)) => {
                if kick(fd) {
                    s.msix_sent += 1;
                } else {
                    self.log.limited(&format!("MSI-X vector {vector}: the eventfd refused the write"));
                }
            }
            Some(None) => s.pending[i] = true,
            None => self.log.line(&format!("MSI-X vector {vector} does not exist (the device has {})", s.msix.len())),
        }
    }
}
