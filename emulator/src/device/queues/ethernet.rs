//! The Ethernet doorbells: TX (0x60) and RQ (0x100) go to the [`TxEngine`](crate::datapath::TxEngine)
//! and [`RxEngine`](crate::datapath::RxEngine); the flush completion an RX ring's CQ is owed when
//! the ring is destroyed (spec/be2net-driver.md §4.1, §4.2).

use oce_mailbox::doorbells::{RqDoorbell, TxDoorbell};
use oce_mailbox::entries::RxCompletion;
use oce_mailbox::wire::{Wire, Writer};
use oce_mailbox::wrb::COMPLETION_LEN;

use crate::datapath::{Effects, Env};
use crate::device::{Device, DmaSpace, Interrupt};

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// The TX doorbell: `count` more WRBs are posted on a TX ring.
    pub(super) fn tx_doorbell(&mut self, db: TxDoorbell) {
        let mut out = Effects::default();
        let mut env = Env { resources: &self.firmware.resources, dma: &self.dma, out: &mut out };
        self.datapath.tx.doorbell(db, &mut env, &mut self.datapath.events);
        self.apply(out);
    }

    /// The RQ doorbell: the host posted receive buffers on an RX ring.
    pub(super) fn rq_doorbell(&mut self, db: RqDoorbell) {
        let mut out = Effects::default();
        let mut env = Env { resources: &self.firmware.resources, dma: &self.dma, out: &mut out };
        self.datapath.rx.doorbell(db, &mut env);
        self.apply(out);
    }

    /// Writes the flush completion (valid, no fragment) owed to CQ `cq` of a destroyed RX ring.
    pub(super) fn write_rx_flush(&mut self, cq: u16) {
        let mut bytes = [0u8; COMPLETION_LEN];
        if RxCompletion::flush().encode(&mut Writer::new(&mut bytes)).is_ok() {
            self.post_completion(cq, &bytes);
        }
    }
}
