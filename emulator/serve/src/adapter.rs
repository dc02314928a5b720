//! The emulated OneConnect adapter as the transport serves it: the emulator's
//! [`Device`](oce_emulator::device::Device) in the PCI Express shape with the MSI-X table left to
//! the client (QEMU emulates it and never forwards its accesses, recipes/vfio-user-qemu.md §3.3),
//! over the client's memory ([`GuestDma`]) and interrupt lines ([`IrqLines`]).
//!
//! The device is shared as `Arc<Mutex<_>>`: the serving thread locks it for each access, and a
//! second thread (an event injector: link changes, a control request from the host) locks it
//! the same way, with clones of the DMA space and the lines.

use std::sync::{Arc, Mutex};

use oce_emulator::device::{Device, DmaSpace, Interrupt, Shape, TableOwner};
use oce_emulator::firmware::Firmware;

use crate::backend::{Backend, Layout};
use crate::dma::GuestDma;
use crate::irq::IrqLines;
use crate::log::Log;

/// The served adapter's device.
pub type AdapterDevice = Device<GuestDma, IrqLines>;

/// The shape QEMU's `vfio-user-pci` needs: a PCI Express endpoint (4 KiB config space, so QEMU
/// presents an Express function), MSI-X whose table QEMU keeps.
pub const SERVED_SHAPE: Shape = Shape::Express { msix_table: TableOwner::Transport };

/// The pieces a server and an event injector share.
#[derive(Debug, Clone)]
pub struct Adapter {
    /// The device.
    pub device: Arc<Mutex<AdapterDevice>>,
    /// Its DMA space (the client's memory).
    pub dma: GuestDma,
    /// Its interrupt lines (the client's eventfds).
    pub irqs: IrqLines,
}

impl Adapter {
    /// The device of `firmware`, in [`SERVED_SHAPE`], with fresh DMA space and lines that log
    /// to `log`.
    pub fn new(firmware: Firmware, log: &Log) -> Self {
        let dma = GuestDma::new(log.clone());
        // The vectors the Express shape offers (the device's `msix()` says the same once built;
        // a test holds them equal).
        let irqs = IrqLines::new(oce_emulator::assumptions::MSIX_VECTORS, log.clone());
        let device = Device::new(firmware, dma.clone(), irqs.clone(), SERVED_SHAPE);
        Self { device: Arc::new(Mutex::new(device)), dma, irqs }
    }
}

impl<D: DmaSpace + Send, I: Interrupt + Send> Backend for Device<D, I> {
    fn layout(&self) -> Layout {
        let mut bars = [0u64; 6];
        for (bar, len) in (0u8..).zip(bars.iter_mut()) {
            *len = self.bar_len(bar).unwrap_or(0);
        }
        Layout { config_len: self.config_len() as u64, bars, msix_vectors: self.msix().map_or(0, |m| m.vectors) }
    }

    fn read_config(&mut self, off: u16, data: &mut [u8]) {
        Device::read_config(self, off, data);
    }

    fn write_config(&mut self, off: u16, data: &[u8]) {
        Device::write_config(self, off, data);
    }

    fn read_bar(&mut self, bar: u8, off: u64, data: &mut [u8]) {
        Device::read_bar(self, bar, off, data);
    }

    fn write_bar(&mut self, bar: u8, off: u64, data: &[u8]) {
        Device::write_bar(self, bar, off, data);
    }

    fn reset(&mut self) {
        Device::reset(self);
    }

    fn flush_events(&mut self, log: Option<&Log>) {
        let events = self.firmware_mut().take_events();
        let misses = self.take_queue_misses();
        if let Some(log) = log {
            events.iter().for_each(|e| log.line(&format!("{e:?}")));
            misses.iter().for_each(|m| log.line(&format!("{m:?}")));
        }
    }
}
