//! The device seams, as the transport sees them: what the served device needs from the bus (a DMA
//! space, interrupt lines) and what the transport needs from the device (config space, BARs,
//! reset).
//!
//! [`DmaSpace`], [`Interrupt`] and [`DmaFault`] have exactly the shape of the emulator's device
//! seams (design.md §9, in the style of rust-vmm's vm-superio): the transport implements them
//! ([`crate::GuestDma`], [`crate::IrqLines`]) and hands them to the device it serves.

/// A device access to bus memory that no mapping covers, or that the memory refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaFault {
    /// The first address of the access.
    pub addr: u64,
    /// Its length in bytes.
    pub len: usize,
}

/// Bus memory as the device reaches it: read and write at a bus address, with a fault on an
/// address no mapping covers.
pub trait DmaSpace {
    /// Copies `buf.len()` bytes at `addr` into `buf`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault>;
    /// Copies `data` to `addr`.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault>;
}

/// The device's interrupt lines: INTx as a level, MSI-X by vector.
pub trait Interrupt {
    /// Drives the INTx line (level-triggered).
    fn set_level(&self, asserted: bool);
    /// Sends MSI-X message `vector`.
    fn signal(&self, vector: u16);
}

/// Sizes of what the transport exposes for a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Config space length: 256 (conventional PCI) or 4096 (PCI Express: QEMU then exposes the
    /// function as an Express endpoint).
    pub config_len: u64,
    /// Length of each BAR, 0 for an absent one.
    pub bars: [u64; 6],
    /// MSI-X vectors (the table itself is QEMU's: the transport owns it).
    pub msix_vectors: u16,
}

/// A PCI device the transport can serve: byte-granular config space and BAR access, and reset.
///
/// Accesses arrive at any width the guest uses (1, 2, 4 or 8 bytes) and are inside the
/// [`Layout`] (the transport checks). Nothing here may block for long: QEMU fails a request that
/// gets no answer within 5 s (recipes/vfio-user-qemu.md pitfall 9).
pub trait Backend: Send {
    /// What to expose.
    fn layout(&self) -> Layout;
    /// Reads `data.len()` bytes of config space at `off`.
    fn read_config(&mut self, off: u16, data: &mut [u8]);
    /// Writes config space at `off`.
    fn write_config(&mut self, off: u16, data: &[u8]);
    /// Reads BAR `bar` at `off`.
    fn read_bar(&mut self, bar: u8, off: u64, data: &mut [u8]);
    /// Writes BAR `bar` at `off`.
    fn write_bar(&mut self, bar: u8, off: u64, data: &[u8]);
    /// Function-level reset (the client's DEVICE_RESET).
    fn reset(&mut self);
}
