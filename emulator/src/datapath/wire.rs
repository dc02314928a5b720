//! The port's seam to the cable: the [`Wire`] a device sends through, what
//! [`Device::receive`](crate::device::Device::receive) says of a frame that arrives
//! ([`Receipt`]), and [`cable`], an in-process cable between two devices.
//!
//! The rules that keep two devices on one cable from deadlocking or losing frames
//! (spec/datapath.md §1.4):
//!
//! - a device sends by **queueing**: [`Wire::send`] never calls the peer and never blocks, so a
//!   device never holds its peer's lock (the peer may be locked by the thread that delivers to
//!   it); whoever carries frames across (a test's pump, a server's sender thread) locks one
//!   device at a time;
//! - the queue toward the peer has a high watermark: above it [`Wire::ready`] is false and the
//!   TX engine leaves the next request's WRBs posted until [`Device::poll`](crate::device::Device::poll)
//!   finds the wire ready again — backpressure, as a PFC or 802.3x pause holds a sender;
//! - a frame that finds no receive buffer while the receiving port has pause generation on
//!   (flow control's TX pause, be2net's default) is not taken ([`Receipt::Paused`]): it stays
//!   with the carrier, which offers it again once [`Wire::receive_ready`] says buffers were
//!   posted. Without pause generation it is dropped and counted, as on a link without flow
//!   control.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::device::{Device, DmaSpace, Interrupt};

/// The device's side of a cable: where its port sends frames.
pub trait Wire: Send + fmt::Debug {
    /// Queues `frame` (one Ethernet frame, no FCS) toward the peer. It never blocks and never
    /// reaches the peer itself.
    fn send(&mut self, frame: &[u8]);

    /// True while the queue toward the peer is below its high watermark: the TX engine starts
    /// the next request only then.
    fn ready(&self) -> bool;

    /// The port paused a frame for lack of receive buffers and the host has now posted some:
    /// the carrier should offer its frames again. Called with the device borrowed (locked, in
    /// a server): it may only wake someone.
    fn receive_ready(&mut self) {}
}

/// Why a frame that arrived was dropped (each is counted: [`crate::datapath::Counters`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The logical link is down, or the adapter is gone.
    LinkDown,
    /// Shorter than an Ethernet header (`rx_dropped_runt`).
    Runt,
    /// Longer than the ring's `max_frame_size`, or than a completion can describe
    /// (`rx_frame_too_long`).
    TooLong,
    /// No interface's MAC or VLAN filter accepts it (`rx_address_filtered`).
    Filtered,
    /// An interface accepts it, but has no RX ring (the driver is down).
    NoRing,
    /// The ring had too few receive buffers and the port does not pause its peer
    /// (`rx_drops_no_fragments`).
    NoBuffer,
    /// It needs more receive fragments than a completion can name (`rx_drops_too_many_frags`).
    TooManyFragments,
    /// A receive buffer could not be written: the frame was completed with length 0, which the
    /// driver discards.
    DmaFault,
}

/// What became of a frame offered to [`Device::receive`](crate::device::Device::receive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receipt {
    /// Written into the host's receive buffers and completed.
    Delivered,
    /// Dropped, and counted.
    Dropped(DropReason),
    /// Not taken: the port pauses its peer until the host posts receive buffers. Offer it again
    /// after [`Wire::receive_ready`] (or any later time: nothing is lost by offering early).
    Paused,
}

/// One direction of a cable: the frames queued and the watermark.
#[derive(Debug)]
struct Lane {
    frames: VecDeque<Vec<u8>>,
    high_watermark: usize,
}

fn lock(lane: &Mutex<Lane>) -> MutexGuard<'_, Lane> {
    // A lane holds plain data: a panic elsewhere leaves it consistent.
    lane.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The two ends of a new in-process cable: two lanes of queued frames, each of which holds back
/// its sender once `high_watermark` frames wait in it (at least 1).
pub fn cable(high_watermark: usize) -> (CablePort, CablePort) {
    let lane = || Arc::new(Mutex::new(Lane { frames: VecDeque::new(), high_watermark: high_watermark.max(1) }));
    let (a_to_b, b_to_a) = (lane(), lane());
    (
        CablePort { outbound: Arc::clone(&a_to_b), inbound: Arc::clone(&b_to_a) },
        CablePort { outbound: b_to_a, inbound: a_to_b },
    )
}

/// One end of a [`cable`]: it gives its device a [`Wire`] to send on, and delivers what the
/// other end sent.
#[derive(Debug, Clone)]
pub struct CablePort {
    outbound: Arc<Mutex<Lane>>,
    inbound: Arc<Mutex<Lane>>,
}

impl CablePort {
    /// The wire to plug into this end's device
    /// ([`Device::attach_wire`](crate::device::Device::attach_wire)).
    pub fn wire(&self) -> Box<dyn Wire> {
        Box::new(CableWire { lane: Arc::clone(&self.outbound) })
    }

    /// Offers the frames that arrived at this end to `device`, oldest first, until one is paused
    /// or none is left; returns how many it took (delivered or dropped). One carrier per end:
    /// a paused frame goes back to the head of its lane.
    pub fn deliver<D: DmaSpace, I: Interrupt>(&self, device: &mut Device<D, I>) -> usize {
        let mut taken = 0;
        loop {
            let Some(frame) = lock(&self.inbound).frames.pop_front() else { return taken };
            if device.receive(&frame) == Receipt::Paused {
                lock(&self.inbound).frames.push_front(frame);
                return taken;
            }
            taken += 1;
        }
    }

    /// Frames waiting to arrive at this end.
    pub fn pending(&self) -> usize {
        lock(&self.inbound).frames.len()
    }

    /// Takes the frames waiting to arrive at this end, as a tap would see them.
    pub fn take(&self) -> Vec<Vec<u8>> {
        lock(&self.inbound).frames.drain(..).collect()
    }

    /// Puts `frame` on the wire toward this end, as another station would (a frame the test
    /// builds itself).
    pub fn inject(&self, frame: &[u8]) {
        lock(&self.inbound).frames.push_back(frame.to_vec());
    }
}

/// The sending side of one lane.
#[derive(Debug)]
struct CableWire {
    lane: Arc<Mutex<Lane>>,
}

impl Wire for CableWire {
    fn send(&mut self, frame: &[u8]) {
        lock(&self.lane).frames.push_back(frame.to_vec());
    }

    fn ready(&self) -> bool {
        let lane = lock(&self.lane);
        lane.frames.len() < lane.high_watermark
    }
}
