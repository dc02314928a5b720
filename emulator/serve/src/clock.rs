//! The device's time while it is served: what waits on the clock (an MCC completion a `slow` or
//! `slow-flash` fault holds back) is written by [`oce_emulator::device::Device::poll`], which
//! every register access calls; but a guest driver waiting for a completion busy-polls host
//! memory and touches no register (be2net spins up to 12 s, spec/be2net-driver.md §3.4), so a
//! thread of its own calls it too, when the next held completion is due or every [`TICK`].

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use oce_emulator::device::{Device, DmaSpace, Interrupt};

/// The longest the thread sleeps between two looks at the device (and at `stop`).
pub const TICK: Duration = Duration::from_millis(50);

/// Calls `device.poll()` whenever something is due, until `stop()`. For a thread of its own
/// beside the serving one; it holds the device's lock only for the call.
pub fn run_clock<D: DmaSpace, I: Interrupt>(device: &Mutex<Device<D, I>>, stop: &dyn Fn() -> bool) {
    while !stop() {
        let next = device.lock().unwrap_or_else(PoisonError::into_inner).poll();
        let now = Instant::now();
        let wait = next.map_or(TICK, |due| due.saturating_duration_since(now).min(TICK));
        std::thread::sleep(wait.max(Duration::from_millis(1)));
    }
}
