//! The Ethernet side of the device: the TX (0x60) and RQ (0x100) doorbells, which go to the
//! [`TxEngine`](crate::datapath::TxEngine) and [`RxEngine`](crate::datapath::RxEngine); the
//! port's cable ([`Device::attach_wire`]) and the entry frames arrive through
//! ([`Device::receive`]); the flush completion an RX ring's CQ is owed when the ring is destroyed
//! (spec/be2net-driver.md §4.1, §4.2; spec/datapath.md §1).

use oce_mailbox::doorbells::{RqDoorbell, TxDoorbell};
use oce_mailbox::entries::RxCompletion;
use oce_mailbox::wire::{Wire as _, Writer};
use oce_mailbox::wrb::COMPLETION_LEN;

use crate::datapath::{Counters, DropReason, Effects, Env, PortState, Receipt, TxPort, Wire};
use crate::device::{Device, DmaSpace, Interrupt};

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// Plugs the port into `wire`: from now on the frames the host sends go there (without one
    /// they leave into nothing, as from a port whose cable leads nowhere). Replaces the cable
    /// plugged in before, which is returned.
    pub fn attach_wire(&mut self, wire: Box<dyn Wire>) -> Option<Box<dyn Wire>> {
        self.datapath.wire.replace(wire)
    }

    /// Unplugs the port's cable, if any.
    pub fn detach_wire(&mut self) -> Option<Box<dyn Wire>> {
        self.datapath.wire.take()
    }

    /// What the datapath has counted since POST: per TX and RX ring and for the port.
    pub fn counters(&self) -> &Counters {
        &self.firmware.counters
    }

    /// A frame (one Ethernet frame, no FCS) arrives on the port: it is filtered, written into
    /// the host's receive buffers and completed, dropped and counted, or — when the host has no
    /// buffer posted and the port pauses its peer — not taken ([`Receipt::Paused`]): offer it
    /// again after [`Wire::receive_ready`].
    pub fn receive(&mut self, frame: &[u8]) -> Receipt {
        if self.gone() {
            return Receipt::Dropped(DropReason::LinkDown);
        }
        if super::roce_engine::is_roce(frame) {
            return self.roce_receive(frame);
        }
        let mut out = Effects::default();
        let link_up = self.firmware.logical_link_up();
        if link_up {
            self.firmware.peer.note_source(frame);
        }
        let port_number = self.firmware.port();
        let fw = &mut self.firmware;
        let mut port =
            PortState { counters: &mut fw.counters, port: port_number, pause: fw.resources.flow_control.tx, link_up };
        let mut env = Env { resources: &fw.resources, dma: &self.dma, out: &mut out };
        let receipt = self.datapath.rx.receive(frame, &mut env, &mut self.datapath.events, &mut port);
        self.apply(out);
        self.settle();
        receipt
    }

    /// The TX doorbell: `count` more WRBs are posted on a TX ring.
    pub(super) fn tx_doorbell(&mut self, db: TxDoorbell) {
        let mut out = Effects::default();
        let link_up = self.firmware.logical_link_up();
        let fw = &mut self.firmware;
        let mut port = TxPort { wire: self.datapath.wire.as_deref_mut(), counters: &mut fw.counters, link_up };
        let mut env = Env { resources: &fw.resources, dma: &self.dma, out: &mut out };
        self.datapath.tx.doorbell(db, &mut env, &mut self.datapath.events, &mut port);
        self.apply(out);
    }

    /// Sends on the TX rings the wire held back, if it is ready again.
    pub(super) fn resume_tx(&mut self) {
        if !self.datapath.tx.stalled() {
            return;
        }
        let mut out = Effects::default();
        let link_up = self.firmware.logical_link_up();
        let fw = &mut self.firmware;
        let mut port = TxPort { wire: self.datapath.wire.as_deref_mut(), counters: &mut fw.counters, link_up };
        let mut env = Env { resources: &fw.resources, dma: &self.dma, out: &mut out };
        self.datapath.tx.resume(&mut env, &mut self.datapath.events, &mut port);
        self.apply(out);
    }

    /// The RQ doorbell: the host posted receive buffers on an RX ring; a carrier holding a
    /// paused frame is told.
    pub(super) fn rq_doorbell(&mut self, db: RqDoorbell) {
        let mut out = Effects::default();
        let mut env = Env { resources: &self.firmware.resources, dma: &self.dma, out: &mut out };
        let woke = self.datapath.rx.doorbell(db, &mut env);
        self.apply(out);
        if woke {
            self.wake_receiver();
        }
    }

    /// Tells the carrier to offer its held frames again.
    fn wake_receiver(&mut self) {
        if let Some(wire) = self.datapath.wire.as_mut() {
            wire.receive_ready();
        }
    }

    /// Writes the flush completion (valid, no fragment) owed to CQ `cq` of a destroyed RX ring;
    /// a paused frame may now have nowhere to go, so its carrier is told.
    pub(super) fn write_rx_flush(&mut self, cq: u16) {
        let mut bytes = [0u8; COMPLETION_LEN];
        if RxCompletion::flush().encode(&mut Writer::new(&mut bytes)).is_ok() {
            self.post_completion(cq, &bytes);
        }
        if self.datapath.rx.take_paused() {
            self.wake_receiver();
        }
    }
}
