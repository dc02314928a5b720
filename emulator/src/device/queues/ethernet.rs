//! The Ethernet rings: a TX sink that completes and drops what the host sends, the RX doorbell,
//! which only counts receive buffers (no frame ever arrives), and the flush completion an RX
//! ring's CQ gets when the ring is destroyed (spec/be2net-driver.md §4.1, §4.2).
//!
//! A TX request is a header WRB (`num_wrb`, at least 1, counts the header, the fragments and
//! be2net's padding WRB) followed by its fragment WRBs. A request with the header's `complete`
//! bit gets one TX completion naming its last WRB, status 0: be2net frees every WRB from its
//! ring tail up to that index.

use oce_mailbox::doorbells::{RqDoorbell, TxDoorbell};
use oce_mailbox::entries::{RxCompletion, TX_COMPLETION_LEN, TX_WRB_LEN, TxCompletion, TxHeaderWrb};
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::COMPLETION_LEN;

use crate::device::{Device, DmaSpace, Interrupt};
use crate::events::QueueKind;

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// The TX doorbell: `count` more WRBs are posted on TX ring `id`; send (drop) every request
    /// whose WRBs are all posted.
    pub(super) fn tx_doorbell(&mut self, db: TxDoorbell) {
        let id = db.id();
        let Some(txq) = self.firmware.resources.txqs.get_mut(&id) else {
            self.queue_miss(QueueKind::Tx, id);
            return;
        };
        txq.posted = txq.posted.saturating_add(db.count().into()).min(txq.ring.entries);
        while self.send_request(id) {}
    }

    /// Sends the request at the consumer index of TX ring `id`, if all its WRBs are posted;
    /// returns whether one was sent.
    fn send_request(&mut self, id: u16) -> bool {
        let Some(txq) = self.firmware.resources.txqs.get(&id) else { return false };
        if txq.posted == 0 {
            return false;
        }
        let at = txq.ring.entry(txq.consumer);
        let mut raw = [0u8; TX_WRB_LEN];
        if let Err(fault) = self.dma.read(at, &mut raw) {
            self.log_fault(fault);
            // The ring cannot be read: what was posted is dropped.
            if let Some(txq) = self.firmware.resources.txqs.get_mut(&id) {
                txq.posted = 0;
            }
            return false;
        }
        let Ok(header) = TxHeaderWrb::decode(&mut Reader::new(&raw)) else { return false };
        let Some(txq) = self.firmware.resources.txqs.get_mut(&id) else { return false };
        let wrbs = u32::from(header.num_wrb().max(1));
        if wrbs > txq.posted {
            return false;
        }
        let last = txq.ring.advance(txq.consumer, wrbs - 1);
        txq.consumer = txq.ring.advance(txq.consumer, wrbs);
        txq.posted -= wrbs;
        let cq = txq.cq;
        if header.complete() {
            let completion = TxCompletion { wrb_index: last as u16, status: 0, ring_id: id, valid: true };
            let mut bytes = [0u8; TX_COMPLETION_LEN];
            if completion.encode(&mut Writer::new(&mut bytes)).is_ok() {
                self.post_completion(cq, &bytes);
            }
        }
        true
    }

    /// Writes the flush completion owed to the CQ of each RX ring destroyed since the last look.
    pub(super) fn write_rx_flushes(&mut self) {
        for cq in std::mem::take(&mut self.firmware.resources.rx_flushes) {
            let mut bytes = [0u8; COMPLETION_LEN];
            if RxCompletion::flush().encode(&mut Writer::new(&mut bytes)).is_ok() {
                self.post_completion(cq, &bytes);
            }
        }
    }

    /// The RQ doorbell: the host posted `count` receive buffers on RX ring `id`.
    pub(super) fn rq_doorbell(&mut self, db: RqDoorbell) {
        let id = db.id();
        match self.firmware.resources.rxqs.get_mut(&id) {
            Some(rxq) => rxq.buffers = rxq.buffers.saturating_add(db.count().into()),
            None => self.queue_miss(QueueKind::Rx, id),
        }
    }
}
