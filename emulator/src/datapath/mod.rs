//! The datapath: the engines that walk the host's rings, and the port they send and receive
//! frames through (spec/datapath.md §1; spec/be2net-driver.md §3.3–§3.5, §4.1).
//!
//! One engine per kind of ring, each a struct that owns its indices (what is posted, consumed,
//! produced and armed, per queue) and works in an explicit environment ([`Env`]) instead of the
//! whole device:
//!
//! - [`EventEngine`] (`events`): EQs and CQs — doorbells (popped, re-arm, clear), completions,
//!   event entries, and which EQs fire;
//! - [`MccEngine`] (`mcc`): which WRB of which MCC runs next, and the completion a `slow` fault
//!   holds back; the device runs the command itself (it owns the firmware);
//! - [`TxEngine`] (`tx`): TX requests — WRBs gathered, offloads applied, frames handed to the
//!   [`Wire`], completions;
//! - [`RxEngine`] (`rx`): RX rings — posted fragments, frames that arrive, filters, v1
//!   completions;
//! - [`roce`]: the built-in RC engine (`roce::engine`) and the seam another RoCE transport
//!   plugs into, told of posted QP work.
//!
//! The environment holds the firmware's [`Resources`] (the queue contexts the commands made,
//! the interfaces and their filters) read-only, the host memory, and an [`Effects`] list in
//! which an engine leaves what only the device can do: log an event, record a queue that does
//! not exist, fire an EQ's interrupt. Nothing here blocks, sleeps or reaches another device:
//! frames leave through a [`Wire`] that only queues.

mod events;
pub mod frame;
mod mcc;
mod per_queue;
pub mod roce;
pub mod rss;
mod rx;
mod stats;
mod tx;
mod wire;

pub(crate) use events::EventEngine;
pub(crate) use mcc::{HeldCompletion, MccEngine};
pub(crate) use per_queue::PerQueue;
pub(crate) use rx::{PortState, RxEngine};
pub use stats::{Counters, PortCounters, RxRingCounters, TxRingCounters};
pub(crate) use tx::{TxEngine, TxPort};
pub use wire::{CablePort, DropReason, Receipt, Wire, cable};

use crate::device::DmaSpace;
use crate::events::{Event, QueueKind, QueueMiss};
use crate::firmware::resources::Resources;

/// What an engine left for the device to do: events for the firmware's log, queues named that do
/// not exist, and EQs whose interrupt fires, in order.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    pub(crate) events: Vec<Event>,
    pub(crate) misses: Vec<QueueMiss>,
    pub(crate) fired: Vec<u16>,
}

/// What an engine works in: the queue contexts and filters (read-only), host memory, and where
/// to leave what only the device can do.
pub(crate) struct Env<'a> {
    pub(crate) resources: &'a Resources,
    pub(crate) dma: &'a dyn DmaSpace,
    pub(crate) out: &'a mut Effects,
}

impl Env<'_> {
    /// Reads host memory; a fault is logged and reads as `false`.
    pub(crate) fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        match self.dma.read(addr, buf) {
            Ok(()) => true,
            Err(fault) => {
                self.out.events.push(Event::DmaFault { iova: fault.addr, len: fault.len });
                false
            }
        }
    }

    /// Writes host memory; a fault is logged and reads as `false`.
    pub(crate) fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.dma.write(addr, data) {
            Ok(()) => true,
            Err(fault) => {
                self.out.events.push(Event::DmaFault { iova: fault.addr, len: fault.len });
                false
            }
        }
    }

    /// Records that queue `id` of `kind` was named and does not exist.
    pub(crate) fn miss(&mut self, kind: QueueKind, id: u16) {
        self.out.misses.push(QueueMiss { kind, id });
    }
}

/// The engines of one function, and the wire its port is cabled to.
#[derive(Debug, Default)]
pub(crate) struct Datapath {
    pub(crate) events: EventEngine,
    pub(crate) mcc: MccEngine,
    pub(crate) tx: TxEngine,
    pub(crate) rx: RxEngine,
    /// The cable the port is plugged into, if any.
    pub(crate) wire: Option<Box<dyn Wire>>,
    /// The RoCE transport told of posted QP work, if one is plugged in.
    pub(crate) roce: Option<Box<dyn roce::RoceTransport>>,
    /// The built-in RC transport, which runs when no other transport is plugged in.
    pub(crate) roce_engine: roce::engine::RoceEngine,
}

impl Datapath {
    /// Every engine back to nothing posted, nothing armed (a reset: the queues are gone too).
    /// The cable stays plugged in.
    pub(crate) fn reset(&mut self) {
        let (wire, roce) = (self.wire.take(), self.roce.take());
        *self = Self { wire, roce, ..Self::default() };
    }
}
