//! The queue doorbells at 0x060, 0x100, 0x120 and 0x140 of the doorbell BAR's page 0 and the
//! RoCE doorbells on its other pages, and what the device
//! does around the ring engines of [`crate::datapath`] (spec/be2net-driver.md §3.3–§3.5, §4.1;
//! the rules in [`crate::assumptions`], "queues"): it hands each doorbell to its engine in an
//! environment made of the firmware's queue contexts and the host memory, then does what the
//! engine left it ([`Effects`]): log, record queue misses, fire EQs (MSI-X vector of the EQ, or
//! INTx). It also announces the link and runs [`Device::poll`] for what waits on time.
//!
//! - [`mcc`]: the MCC ring engine's commands, run inside the MCC doorbell write;
//! - [`ethernet`]: the TX and RX doorbells;
//! - [`roce`]: the RoCE SQ, RQ and CQ doorbells on the PD pages 1..=15 (page = offset >> 12).

mod ethernet;
mod mcc;
mod roce;
mod roce_engine;
mod roce_frwr;

use std::time::Instant;

use oce_mailbox::doorbells::{DOORBELL_PAGE_LEN, EqCqDoorbell, MccDoorbell, RqDoorbell, TxDoorbell};
use oce_mailbox::entries::AsyncTrailer;
use oce_mailbox::regs::IntCtrl;
use oce_mailbox::wire::{Wire, Writer};
use oce_mailbox::wrb::COMPLETION_LEN;

use super::{Device, DmaSpace, Interrupt};
use crate::assumptions::TX_DOORBELL_OFFSET;
use crate::datapath::{Effects, Env};
use crate::events::Event;
use crate::firmware::Owed;
use crate::firmware::handlers::port::link_state_event;

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// A whole-dword write to doorbell `off` other than the bootstrap mailbox's.
    pub(super) fn queue_doorbell(&mut self, off: u32, value: u32) {
        let page = off / DOORBELL_PAGE_LEN;
        if page != 0 {
            self.pd_page_doorbell(page as u16, off % DOORBELL_PAGE_LEN, value);
            self.settle();
            return;
        }
        match off {
            TX_DOORBELL_OFFSET => self.tx_doorbell(TxDoorbell(value)),
            RqDoorbell::OFFSET => self.rq_doorbell(RqDoorbell(value)),
            EqCqDoorbell::OFFSET => {
                let mut out = Effects::default();
                let mut env = Env { resources: &self.firmware.resources, dma: &self.dma, out: &mut out };
                match EqCqDoorbell::decode(value) {
                    EqCqDoorbell::Eq(db) => self.datapath.events.eq_doorbell(db, &mut env),
                    EqCqDoorbell::Cq(db) => self.datapath.events.cq_doorbell(db, &mut env),
                }
                self.apply(out);
            }
            MccDoorbell::OFFSET => self.mcc_doorbell(MccDoorbell(value)),
            _ => return,
        }
        self.settle();
    }

    /// Does what an engine left for the device: logs its events, records the queues it found
    /// missing, and fires the EQs it fired, in order.
    pub(super) fn apply(&mut self, out: Effects) {
        for event in out.events {
            self.firmware.log(event);
        }
        for miss in out.misses {
            self.queue_miss(miss.kind, miss.id);
        }
        for eq in out.fired {
            self.fire(eq);
        }
    }

    /// Writes `entry` at the producer index of CQ `cq_id` (see
    /// [`EventEngine::post_completion`](crate::datapath::EventEngine::post_completion)).
    pub(super) fn post_completion(&mut self, cq_id: u16, entry: &[u8; COMPLETION_LEN]) {
        let mut out = Effects::default();
        let mut env = Env { resources: &self.firmware.resources, dma: &self.dma, out: &mut out };
        self.datapath.events.post_completion(cq_id, entry, &mut env);
        self.apply(out);
    }

    /// Raises EQ `eq_id`'s interrupt: its MSI-X vector while MSI-X is enabled, else its INTx
    /// source; nothing while host interrupts are off.
    fn fire(&mut self, eq_id: u16) {
        if !self.host_interrupts_enabled() {
            self.firmware.log(Event::InterruptSuppressed { eq: eq_id });
            return;
        }
        let queues = &self.firmware.resources.queues;
        let Some(vector) = queues.event_queue(eq_id).map(|eq| eq.msix_idx) else { return };
        if self.msix_enabled() {
            self.raise_msix(vector);
        } else {
            self.datapath.events.assert_intx(queues, eq_id);
        }
    }

    /// True while the host has interrupts on: SET_INTERRUPT_ENABLE, or INT_CTRL's HOSTINTR bit
    /// (config 0xFC), which be2net sets itself when the command fails (spec/protocol.md §5.4).
    fn host_interrupts_enabled(&self) -> bool {
        self.firmware.resources.host_interrupts || self.config.read(IntCtrl::OFFSET) & IntCtrl::HOSTINTR != 0
    }

    /// Does what a command left the datapath to do, before its own completion is written: the
    /// flush completion of a destroyed RX ring, a link announcement, a memory region's PBEs.
    pub(super) fn pay(&mut self, owed: Owed) {
        if let Some(cq) = owed.rx_flush {
            self.write_rx_flush(cq);
        }
        if owed.link_event {
            self.announce_link();
        }
        if let Some(key) = owed.mr_pbes {
            self.read_mr_pbes(key);
        }
        self.roce_sync();
    }

    /// After a change from outside the rings (a fault, a reset): the link is announced if it
    /// changed, and the outputs follow the state ([`Device::settle`]).
    pub(super) fn refresh(&mut self) {
        self.announce_link();
        self.settle();
    }

    /// Brings the outputs in line with the state after anything that may have changed it (a
    /// doorbell, a command, a reset): the INTx source follows the EQs.
    pub(super) fn settle(&mut self) {
        let level = self.datapath.events.intx_asserted(&self.firmware.resources.queues);
        if level != self.eq_intx {
            self.eq_intx = level;
            self.set_intx(level);
        }
    }

    /// Posts the link-state event to every MCC subscribed to it, when the logical link is not
    /// what was last announced.
    pub(super) fn announce_link(&mut self) {
        let up = self.firmware.logical_link_up();
        if up == self.announced_link || self.gone() {
            return;
        }
        self.announced_link = up;
        self.firmware.log(Event::LinkChanged { up });
        let mut entry = [0u8; COMPLETION_LEN];
        if link_state_event(&self.firmware, up).encode(&mut Writer::new(&mut entry)).is_err() {
            return;
        }
        let targets: Vec<u16> = (self.firmware.resources.queues.mccs())
            .filter(|(_, m)| m.wants(AsyncTrailer::CODE_LINK_STATE))
            .filter_map(|(_, m)| m.async_cq)
            .collect();
        for cq in targets {
            self.post_completion(cq, &entry);
        }
    }

    /// Does what was waiting for its time or for the wire: writes the MCC completions held back
    /// by a `slow` or `slow-flash` fault whose delay has passed (and runs the WRBs queued behind
    /// them), sends on the TX rings the wire held back once it is ready, and announces a link
    /// change made outside a register access. Returns when the next held completion is due, if
    /// any.
    ///
    /// A transport calls it from a timer while it serves (the host may be busy-polling host
    /// memory, touching no register), and when its wire has room again; every register access
    /// calls it too.
    pub fn poll(&mut self) -> Option<Instant> {
        if self.gone() {
            return None;
        }
        self.follow_card();
        self.write_due_completions();
        self.resume_tx();
        let roce_due = self.roce_poll();
        self.refresh();
        let mcc_due = self.datapath.mcc.next_due(&self.firmware.resources.queues);
        match (mcc_due, roce_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
