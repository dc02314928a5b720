//! The thread that carries a served adapter's frames over its [`DgramCable`]: it waits until a
//! datagram arrives, the device queued a frame (the cable's waker) or, while frames wait for a
//! full peer, the peer read one ([`DgramCable::room_watcher`]); then, holding the device's lock
//! only for that, delivers what arrived and lets the device resume TX requests the watermark
//! held, and sends what is queued. It never holds another device's lock: the peer is
//! another process, reached only through its socket.
//!
//! It also watches the peer ([`Carrier`]): every [`PROBE`], and at once when a send finds the
//! peer's address dead, it looks whether a live socket is bound there
//! ([`DgramCable::peer_present`], which sends nothing). A peer that is absent, dies or comes back
//! is the port's link going down or up ([`Device::set_peer_present`]): be2net's link-state event
//! reaches the guest on the same path as the `link-down` fault's, and the link is up only with
//! the peer there and no such fault. Since the peer's carrier does the same, the link goes down
//! and up on both ends. The frames queued toward a peer that went are dropped and counted
//! ([`CableCounters::link_down_dropped`](super::CableCounters)), as a MAC drops what it was to
//! send when its link goes down; from then on the device's TX engine drops and counts its frames
//! (`link_down_drops`) until the link is back (`oce_emulator::assumptions::datapath`, "link
//! down on the cable").

use std::io;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use oce_emulator::device::{Device, DmaSpace, Interrupt};
use rustix::event::{PollFd, PollFlags, Timespec, poll};

use super::DgramCable;

/// The longest the thread waits between two looks at `stop` while nothing moves.
pub const IDLE: Duration = Duration::from_millis(50);

/// How soon the thread looks again while frames wait for the peer or for the device (the peer's
/// queue was full, the device paused a frame): the retry pace of a held-back link.
pub const RETRY: Duration = Duration::from_millis(1);

/// How often the carrier looks for the peer: a peer that goes or comes is link down or up within
/// this (plus [`IDLE`]). Policy: a few times a second, so a driver's carrier follows a peer
/// that is restarted within a fraction of a second; one socket(2) and connect(2) per look.
pub const PROBE: Duration = Duration::from_millis(200);

/// Where a carrier reaches its device, for a moment at a time.
pub trait DeviceSlot<D: DmaSpace, I: Interrupt> {
    /// Runs `f` on the device, holding nothing else.
    fn with<R>(&self, f: impl FnOnce(&mut Device<D, I>) -> R) -> R;
}

impl<D: DmaSpace, I: Interrupt> DeviceSlot<D, I> for Mutex<Device<D, I>> {
    fn with<R>(&self, f: impl FnOnce(&mut Device<D, I>) -> R) -> R {
        f(&mut self.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// One end's carrier: what it last found of the peer.
#[derive(Debug)]
pub struct Carrier {
    /// The peer as last told to the device; `None` before the first look.
    present: Option<bool>,
    next_probe: Instant,
    /// [`super::CableCounters::peer_absent`] at the last look: a send that failed since makes
    /// the next turn look at once.
    absent_sends: u64,
}

impl Default for Carrier {
    fn default() -> Self {
        Self::new()
    }
}

impl Carrier {
    /// A carrier that looks for the peer on its first turn.
    pub fn new() -> Self {
        Self { present: None, next_probe: Instant::now(), absent_sends: 0 }
    }

    /// One turn: tells the device when the peer came or went, delivers what arrived, lets the
    /// device poll, and sends what is queued. Returns true while frames wait (for the peer's
    /// queue, or for receive buffers), so the caller looks again soon. Never blocks.
    pub fn turn<D: DmaSpace, I: Interrupt>(
        &mut self,
        cable: &DgramCable,
        device: &impl DeviceSlot<D, I>,
    ) -> io::Result<bool> {
        let absent_sends = cable.counters().peer_absent;
        let now = Instant::now();
        if now >= self.next_probe || absent_sends != self.absent_sends {
            self.absent_sends = absent_sends;
            self.next_probe = now + PROBE;
            let present = cable.peer_present();
            if self.present != Some(present) {
                self.present = Some(present);
                // The device first, so it queues no more; then what it queued goes.
                device.with(|dev| dev.set_peer_present(present));
                if !present {
                    cable.drop_queued();
                }
            }
        }
        device.with(|dev| {
            let delivered = cable.deliver(dev);
            dev.poll();
            delivered
        })?;
        cable.flush()?;
        Ok(cable.queued() > 0 || cable.holds_a_frame())
    }
}

/// Carries frames until `stop()`. For a thread of its own beside the serving one.
pub fn run_carrier<D: DmaSpace, I: Interrupt>(
    cable: &DgramCable,
    device: &Mutex<Device<D, I>>,
    stop: &dyn Fn() -> bool,
) -> io::Result<()> {
    let mut carrier = Carrier::new();
    // The last wait said the peer's queue had room (its watcher was writable).
    let mut room_signalled = false;
    while !stop() {
        let sent_before = cable.counters().sent;
        let waiting = carrier.turn(cable, device)?;
        let progressed = cable.counters().sent != sent_before;
        // Frames wait for the peer's queue: wait for the peer to read too, unless the last such
        // signal sent nothing (then the limit was not the peer's queue but this socket's send
        // buffer, which the watcher does not see: retry at the retry pace).
        let spurious = room_signalled && !progressed;
        let watcher = (cable.queued() > 0 && !spurious).then(|| cable.room_watcher()).flatten();
        let wait = Timespec::try_from(if waiting { RETRY } else { IDLE }).ok();
        let mut fds = vec![PollFd::new(cable.socket(), PollFlags::IN), PollFd::new(cable.waker(), PollFlags::IN)];
        if let Some(w) = &watcher {
            fds.push(PollFd::new(w, PollFlags::OUT));
        }
        match poll(&mut fds, wait.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        room_signalled = fds.get(2).is_some_and(|w| w.revents().contains(PollFlags::OUT));
        cable.drain_waker();
    }
    // What the device queued before the stop goes out if the peer takes it now.
    cable.flush().map(|_| ())
}
