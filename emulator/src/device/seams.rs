//! The device's seams to whatever hosts it, in the style of rust-vmm's vm-superio (its
//! `Trigger`): the memory the device reaches by DMA, and its interrupt lines. A transport
//! implements both and hands them to [`super::Device::new`]; the device never holds a reference
//! into memory it does not own (copy in, execute, copy out, as the hardware does).

use std::sync::Arc;

/// A bus address the device could not reach (not mapped, or not writable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaFault {
    /// The first address of the access.
    pub addr: u64,
    /// Its length in bytes.
    pub len: usize,
}

/// The memory the device reaches by DMA (bus addresses: IOVAs behind an IOMMU, else physical).
pub trait DmaSpace {
    /// Copies `buf.len()` bytes at bus address `addr` into `buf`; all or nothing.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault>;
    /// Copies `data` to bus address `addr`; all or nothing.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault>;
}

/// The device's interrupt lines, vm-superio style.
pub trait Interrupt {
    /// INTA# level.
    fn set_level(&self, asserted: bool);
    /// Sends MSI-X vector `vector`.
    fn signal(&self, vector: u16);
}

/// Interrupt lines wired to nothing: for a host that polls (the in-process front end).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoInterrupt;

impl Interrupt for NoInterrupt {
    fn set_level(&self, _: bool) {}
    fn signal(&self, _: u16) {}
}

impl<T: DmaSpace + ?Sized> DmaSpace for &T {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        (**self).read(addr, buf)
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        (**self).write(addr, data)
    }
}

impl<T: DmaSpace + ?Sized> DmaSpace for Arc<T> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        (**self).read(addr, buf)
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        (**self).write(addr, data)
    }
}

impl<T: Interrupt + ?Sized> Interrupt for &T {
    fn set_level(&self, asserted: bool) {
        (**self).set_level(asserted)
    }
    fn signal(&self, vector: u16) {
        (**self).signal(vector)
    }
}

impl<T: Interrupt + ?Sized> Interrupt for Arc<T> {
    fn set_level(&self, asserted: bool) {
        (**self).set_level(asserted)
    }
    fn signal(&self, vector: u16) {
        (**self).signal(vector)
    }
}
