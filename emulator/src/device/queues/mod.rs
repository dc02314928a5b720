//! The queue engine: the doorbells at 0x060, 0x100, 0x120 and 0x140 of the doorbell BAR, and
//! what the device writes into the host's rings (spec/be2net-driver.md §3.3–§3.5, §4.1; the
//! rules in [`crate::assumptions`], "queues").
//!
//! - [`mcc`]: the MCC ring engine, run inside the MCC doorbell write;
//! - [`ethernet`]: the TX sink and the RX buffer count;
//! - here: EQ and CQ doorbells (re-arm, clear, popped), completions and events, firing the
//!   interrupt (MSI-X vector of the EQ, or INTx), the link-state announcements, and
//!   [`Device::poll`] for what waits on time.
//!
//! The rings themselves, and every index, live in the firmware's
//! [`Resources`](crate::firmware::resources::Resources), which the commands create and a reset
//! clears; the engine keeps no state of its own but the link state last announced and the
//! queue misses ([`Device::queue_misses`]).

mod ethernet;
mod mcc;

use std::time::Instant;

use oce_mailbox::doorbells::{CqDoorbell, EqCqDoorbell, EqDoorbell, MccDoorbell, RqDoorbell, TxDoorbell};
use oce_mailbox::entries::{AsyncTrailer, EqEntry};
use oce_mailbox::regs::IntCtrl;
use oce_mailbox::wire::{Wire, Writer};
use oce_mailbox::wrb::COMPLETION_LEN;

use super::{Device, DmaSpace, Interrupt};
use crate::assumptions::TX_DOORBELL_OFFSET;
use crate::events::{Event, QueueKind};
use crate::firmware::handlers::port::link_state_event;

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// A whole-dword write to doorbell `off` other than the bootstrap mailbox's.
    pub(super) fn queue_doorbell(&mut self, off: u32, value: u32) {
        match off {
            TX_DOORBELL_OFFSET => self.tx_doorbell(TxDoorbell(value)),
            RqDoorbell::OFFSET => self.rq_doorbell(RqDoorbell(value)),
            EqCqDoorbell::OFFSET => match EqCqDoorbell::decode(value) {
                EqCqDoorbell::Eq(db) => self.eq_doorbell(db),
                EqCqDoorbell::Cq(db) => self.cq_doorbell(db),
            },
            MccDoorbell::OFFSET => self.mcc_doorbell(MccDoorbell(value)),
            _ => return,
        }
        self.settle();
    }

    /// An EQ doorbell: the host popped entries, maybe clears the interrupt, and re-arms or
    /// disarms; a re-arm with entries still outstanding fires at once.
    fn eq_doorbell(&mut self, db: EqDoorbell) {
        let id = db.id();
        let Some(eq) = self.firmware.resources.eqs.get_mut(&id) else {
            self.queue_miss(QueueKind::Eq, id);
            return;
        };
        eq.outstanding = eq.outstanding.saturating_sub(db.popped().into());
        if db.clear() {
            eq.asserted = false;
        }
        let fire = db.rearm() && eq.outstanding > 0;
        eq.armed = db.rearm() && !fire;
        if fire {
            self.fire(id);
        }
    }

    /// A CQ doorbell: the host popped entries, and re-arms or disarms the CQ; a re-arm of an
    /// eventable CQ with entries still outstanding posts its event at once instead of arming (as
    /// an EQ fires at once): a completion written while the host's handler had the CQ disarmed,
    /// after it last looked, is not left unannounced.
    fn cq_doorbell(&mut self, db: CqDoorbell) {
        let id = db.id();
        let Some(cq) = self.firmware.resources.cqs.get_mut(&id) else {
            self.queue_miss(QueueKind::Cq, id);
            return;
        };
        cq.outstanding = cq.outstanding.saturating_sub(db.popped().into());
        let event = cq.eq.filter(|_| db.rearm() && cq.outstanding > 0);
        cq.armed = db.rearm() && event.is_none();
        if let Some(eq) = event {
            self.post_event(eq, id);
        }
    }

    /// Writes `entry` at the producer index of CQ `cq_id`; an armed, eventable CQ is disarmed and
    /// tells its EQ. A CQ that does not exist (destroyed under a queue still using it) takes
    /// nothing.
    pub(super) fn post_completion(&mut self, cq_id: u16, entry: &[u8; COMPLETION_LEN]) {
        let Some(cq) = self.firmware.resources.cqs.get_mut(&cq_id) else {
            self.queue_miss(QueueKind::Cq, cq_id);
            return;
        };
        let at = cq.ring.entry(cq.producer);
        cq.producer = cq.ring.advance(cq.producer, 1);
        cq.outstanding = cq.outstanding.saturating_add(1).min(cq.ring.entries);
        let event = cq.eq.filter(|_| cq.armed);
        if event.is_some() {
            cq.armed = false;
        }
        self.write_dma(at, entry);
        if let Some(eq) = event {
            self.post_event(eq, cq_id);
        }
    }

    /// Posts `(cq_id << 16) | 1` to EQ `eq_id`; an armed EQ is disarmed and fires.
    fn post_event(&mut self, eq_id: u16, cq_id: u16) {
        let Some(eq) = self.firmware.resources.eqs.get_mut(&eq_id) else { return };
        let at = eq.ring.entry(eq.producer);
        eq.producer = eq.ring.advance(eq.producer, 1);
        eq.outstanding = eq.outstanding.saturating_add(1);
        let fire = std::mem::replace(&mut eq.armed, false);
        let mut entry = [0u8; 4];
        if EqEntry::for_cq(cq_id).encode(&mut Writer::new(&mut entry)).is_ok() {
            self.write_dma(at, &entry);
        }
        if fire {
            self.fire(eq_id);
        }
    }

    /// Raises EQ `eq_id`'s interrupt: its MSI-X vector while MSI-X is enabled, else its INTx
    /// source; nothing while host interrupts are off.
    fn fire(&mut self, eq_id: u16) {
        if !self.host_interrupts_enabled() {
            self.firmware.log(Event::InterruptSuppressed { eq: eq_id });
            return;
        }
        let msix = self.msix_enabled();
        let Some(eq) = self.firmware.resources.eqs.get_mut(&eq_id) else { return };
        if msix {
            let vector = eq.msix_idx;
            self.raise_msix(vector);
        } else {
            eq.asserted = true;
        }
    }

    /// True while the host has interrupts on: SET_INTERRUPT_ENABLE, or INT_CTRL's HOSTINTR bit
    /// (config 0xFC), which be2net sets itself when the command fails (spec/protocol.md §5.4).
    fn host_interrupts_enabled(&self) -> bool {
        self.firmware.resources.host_interrupts || self.config.read(IntCtrl::OFFSET) & IntCtrl::HOSTINTR != 0
    }

    /// Brings the outputs in line with the state after anything that may have changed it (a
    /// doorbell, a command, a fault, a reset): the INTx source follows the EQs, and a change of
    /// the logical link is announced.
    pub(super) fn settle(&mut self) {
        self.write_rx_flushes();
        let level = self.firmware.resources.intx_asserted();
        if level != self.eq_intx {
            self.eq_intx = level;
            self.set_intx(level);
        }
        self.announce_link();
    }

    /// Posts the link-state event to every MCC subscribed to it, when the logical link is not
    /// what was last announced.
    fn announce_link(&mut self) {
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
        let targets: Vec<u16> = (self.firmware.resources.mccs.values())
            .filter(|m| m.wants(AsyncTrailer::CODE_LINK_STATE))
            .filter_map(|m| m.async_cq)
            .collect();
        for cq in targets {
            self.post_completion(cq, &entry);
        }
    }

    /// Does what was waiting for its time: writes the MCC completions held back by a `slow` or
    /// `slow-flash` fault whose delay has passed (and runs the WRBs queued behind them), and
    /// announces a link change made outside a register access. Returns when the next held
    /// completion is due, if any.
    ///
    /// A transport calls it from a timer while it serves (the host may be busy-polling host
    /// memory, touching no register); every register access calls it too.
    pub fn poll(&mut self) -> Option<Instant> {
        if self.gone() {
            return None;
        }
        self.write_due_completions();
        self.settle();
        self.firmware.resources.mccs.values().filter_map(|m| m.held.as_ref().map(|h| h.due)).min()
    }
}
