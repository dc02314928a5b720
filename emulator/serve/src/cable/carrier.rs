//! The thread that carries a served adapter's frames over its [`DgramCable`]: it waits until a
//! datagram arrives or the device queued a frame (the cable's waker), then, holding the
//! device's lock only for that, delivers what arrived and lets the device resume TX requests the
//! watermark held, and sends what is queued. It never holds another device's lock: the peer is
//! another process, reached only through its socket.

use std::io;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use oce_emulator::device::{Device, DmaSpace, Interrupt};
use rustix::event::{PollFd, PollFlags, Timespec, poll};

use super::DgramCable;

/// The longest the thread waits between two looks at `stop` while nothing moves.
pub const IDLE: Duration = Duration::from_millis(50);

/// How soon the thread looks again while frames wait for the peer or for the device (the peer's
/// queue was full, the device paused a frame): the retry pace of a held-back link.
pub const RETRY: Duration = Duration::from_millis(1);

/// Carries frames until `stop()`. For a thread of its own beside the serving one.
pub fn run_carrier<D: DmaSpace, I: Interrupt>(
    cable: &DgramCable,
    device: &Mutex<Device<D, I>>,
    stop: &dyn Fn() -> bool,
) -> io::Result<()> {
    while !stop() {
        {
            let mut dev = device.lock().unwrap_or_else(PoisonError::into_inner);
            cable.deliver(&mut dev)?;
            dev.poll();
        }
        cable.flush()?;
        let waiting = cable.queued() > 0 || cable.holds_a_frame();
        let wait = Timespec::try_from(if waiting { RETRY } else { IDLE }).ok();
        let mut fds = [PollFd::new(cable.socket(), PollFlags::IN), PollFd::new(cable.waker(), PollFlags::IN)];
        match poll(&mut fds, wait.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        cable.drain_waker();
    }
    // What the device queued before the stop goes out if the peer takes it now.
    cable.flush().map(|_| ())
}
