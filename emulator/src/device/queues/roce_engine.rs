//! The device around its built-in RoCE engine ([`RoceEngine`]): the engine follows the QP table
//! after every command, hears of RoCE v1 frames the port receives (ethertype 0x8915, bare or
//! behind an 802.1Q tag: spec/datapath.md §3.1, §4.4) instead of the Ethernet RX rings, runs its
//! timers from [`Device::poll`], and its frames leave through the port's wire.

use std::time::Instant;

use super::super::{Device, DmaSpace, Interrupt};
use super::roce::Access;
use crate::datapath::roce::RoceQueues;
use crate::datapath::roce::engine::{Port, RoceEngine};
use crate::datapath::{DropReason, Effects, Receipt};

/// The RoCE ethertype and the 802.1Q TPID (IBTA Annex A16; IEEE 802.1Q).
const ETHERTYPE_ROCE: u16 = 0x8915;
const ETHERTYPE_VLAN: u16 = 0x8100;

/// True for a RoCE v1 frame: ethertype 0x8915 at byte 12, or 0x8100 there and 0x8915 at 16.
pub(super) fn is_roce(frame: &[u8]) -> bool {
    let at = |i: usize| frame.get(i..i + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    match at(12) {
        Some(ETHERTYPE_ROCE) => true,
        Some(ETHERTYPE_VLAN) => at(16) == Some(ETHERTYPE_ROCE),
        _ => false,
    }
}

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// Runs `f` on the engine with the device's queues lent and the port's MAC and time, then
    /// puts the frames it sent on the wire and does what it left.
    pub(super) fn with_roce<R>(
        &mut self,
        f: impl FnOnce(&mut RoceEngine, &mut dyn RoceQueues, &mut Port<'_>) -> R,
    ) -> R {
        let fw = &self.firmware;
        let port_index = usize::from(fw.port());
        let smac = fw.card().state.identity.macs.get(port_index).map_or([0; 6], |m| m.0);
        let mut frames = Vec::new();
        let mut out = Effects::default();
        let mut port = Port { smac, now: self.clock.now(), frames: &mut frames };
        let mut access = Access {
            resources: &mut self.firmware.resources,
            counters: &mut self.firmware.roce_counters,
            dma: &self.dma,
            events: &mut self.datapath.events,
            out: &mut out,
        };
        let r = f(&mut self.datapath.roce_engine, &mut access, &mut port);
        for frame in &frames {
            self.firmware.roce_counters.transmitted(frame);
        }
        if let Some(wire) = self.datapath.wire.as_mut() {
            for frame in &frames {
                wire.send(frame);
            }
        }
        self.apply(out);
        r
    }

    /// After a command: the engine follows the QP table (built at RTR, requester set at RTS,
    /// silent at ERR, dropped when deleted or back at RESET/INIT).
    pub(super) fn roce_sync(&mut self) {
        if self.datapath.roce.is_some() {
            return;
        }
        let ids = self.firmware.resources.rdma.qps.ids();
        // Every command passes here (be2net's too): with no QP on either side there is nothing
        // to follow.
        if ids.is_empty() && self.datapath.roce_engine.is_idle() {
            return;
        }
        self.with_roce(|engine, queues, port| engine.sync(&ids, queues, port));
    }

    /// A RoCE v1 frame arrives: to the engine's QP its BTH names; otherwise dropped.
    pub(super) fn roce_receive(&mut self, frame: &[u8]) -> Receipt {
        let taken = self.with_roce(|engine, queues, port| engine.receive(frame, queues, port));
        self.firmware.roce_counters.received(frame, taken);
        self.settle();
        if taken { Receipt::Delivered } else { Receipt::Dropped(DropReason::NoRing) }
    }

    /// The engine's due timers; when the next one is.
    pub(super) fn roce_poll(&mut self) -> Option<Instant> {
        // Every register access polls: an engine that runs no QP has no timer to look at.
        if self.datapath.roce_engine.is_idle() {
            return None;
        }
        self.with_roce(|engine, queues, port| engine.poll(queues, port))
    }
}
