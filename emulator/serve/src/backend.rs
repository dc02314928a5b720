//! What the transport needs from a device it serves: its sizes ([`Layout`]) and byte-granular
//! config and BAR access with reset ([`Backend`]). What the device needs from the transport is
//! the other way round, the emulator's own seams (`oce_emulator::device::{DmaSpace, Interrupt}`),
//! which [`crate::GuestDma`] and [`crate::IrqLines`] implement.

use crate::log::Log;

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
    /// Takes what the device recorded since the last call (commands it executed, faults,
    /// resets) and writes it to `log`, one line each; with no log it is dropped unformatted.
    /// Nothing is recorded by default.
    fn flush_events(&mut self, log: Option<&Log>) {
        let _ = log;
    }
}
