//! The MCC ring engine (spec/be2net-driver.md §3.4, spec/protocol.md §3.8): on the MCC
//! doorbell, the posted WRBs run in ring order, each exactly like a bootstrap-mailbox WRB
//! (`Device::run_wrb`: embedded responses into the ring slot, non-embedded over the SGE buffer),
//! and each gets one completion on the MCC's CQ with its status, both tags copied unchanged (the
//! host turns them back into kernel pointers) and VALID | COMPLETED. The indices are the
//! [`MccEngine`](crate::datapath::MccEngine)'s; the command runs here, where the firmware is.
//!
//! ocrdma's own MQ is a second MCC queue of the same kind (spec/be2net-driver.md §5.3): its tag
//! is the ring index, which comes back the same way; its embedded commands declare up to 240
//! bytes, which the firmware accepts; and every WRB it consumes is completed, an unknown command
//! with ILLEGAL_REQUEST, so ocrdma's interrupt-only wait never times out.
//!
//! Everything runs inside the doorbell write: be2net busy-polls its completion queue for up to
//! 12 s, under a spinlock, so the answer must not wait for the host to yield. A completion a
//! `slow` or `slow-flash` fault holds back stops the ring until [`Device::poll`] writes it.

use std::time::Duration;

use oce_mailbox::doorbells::MccDoorbell;
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{COMPLETION_LEN, Completion, WRB_LEN};

use crate::datapath::HeldCompletion;
use crate::device::{Device, DmaSpace, Interrupt};
use crate::events::QueueKind;

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// The MCC doorbell: `count` more WRBs are posted on MCC `id`; run them.
    pub(super) fn mcc_doorbell(&mut self, db: MccDoorbell) {
        if !self.datapath.mcc.doorbell(db, &self.firmware.resources.queues) {
            self.queue_miss(QueueKind::Mcc, db.id());
            return;
        }
        self.run_mcc(db.id());
    }

    /// Runs the WRBs posted on MCC `id`, in order, until none is left, one's completion is held
    /// back, or the MCC is gone (a command destroyed it, or reset the function).
    fn run_mcc(&mut self, id: u16) {
        loop {
            if self.gone() {
                return;
            }
            let Some(next) = self.datapath.mcc.next(&self.firmware.resources.queues, id) else { return };
            self.run_mcc_wrb(id, next.cq, next.slot);
        }
    }

    /// Runs the WRB in ring slot `slot` of MCC `id` and completes it on `cq`.
    fn run_mcc_wrb(&mut self, id: u16, cq: u16, slot: u64) {
        let mut raw = [0u8; WRB_LEN];
        if let Err(fault) = self.dma.read(slot, &mut raw) {
            // A WRB the device cannot fetch has no tags to complete it with.
            self.log_fault(fault);
            return;
        }
        let mut r = Reader::at(&raw, 8);
        let tags = [r.u32("tag0").unwrap_or(0), r.u32("tag1").unwrap_or(0)];
        let (status, executed) = self.run_wrb(slot, &raw);
        if self.gone() {
            // The adapter lost power running the command: no completion.
            return;
        }
        // What the command owes other queues comes before its own completion.
        if let Some(e) = executed {
            self.pay(e.owed);
        }
        let (valid, delay, command) = executed.map_or((true, Duration::ZERO, None), |e| (e.valid, e.delay, e.command));
        let flags = Completion::COMPLETED | if valid { Completion::VALID } else { 0 };
        let mut bytes = [0u8; COMPLETION_LEN];
        if (Completion { status, tags, flags }).encode(&mut Writer::new(&mut bytes)).is_err() {
            return;
        }
        if !delay.is_zero() {
            let since = self.clock.now();
            let held = HeldCompletion { bytes, due: since + delay, since, command };
            if self.datapath.mcc.hold(&self.firmware.resources.queues, id, held) {
                return;
            }
        }
        self.post_completion(cq, &bytes);
    }

    /// Writes every held completion whose time has come and runs the WRBs queued behind it.
    pub(super) fn write_due_completions(&mut self) {
        let now = self.clock.now();
        for (id, cq, held) in self.datapath.mcc.take_due(&self.firmware.resources.queues, now) {
            self.post_completion(cq, &held.bytes);
            self.log_delayed(held.command, held.since);
            self.run_mcc(id);
        }
    }
}
