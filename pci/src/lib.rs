//! The hardware seam: what ocetool needs from a PCI function, and nothing more.
//!
//! Every layer above this crate (`oce-mailbox`, `oce-firmware`, the CLI) is generic over
//! [`PciFunction`]. Three implementations exist: two real-hardware backends in this crate — VFIO
//! ([`vfio`]), which reaches the adapter through the kernel's `vfio-pci` with the IOMMU confining
//! its DMA, and sysfs ([`sysfs_backend`]), for hosts without an IOMMU — and
//! `oce_emulator::Emulator`, a register-level model of an OCe14000 physical function. Because the
//! emulator sits exactly where the hardware sits, a host-side protocol bug (a wrong doorbell
//! shift, a skipped ready poll) fails the tests just as it would fail on a real adapter
//! (design.md §2).
//!
//! The rules the traits encode:
//!
//! - register access is 32 bits wide, little-endian as seen by the device, and infallible once a
//!   BAR is mapped (a device that has gone away reads as all ones, as on a real bus);
//! - configuration space access can fail (the kernel may refuse it), so it returns `Result`;
//! - DMA memory is never exposed as a Rust reference: bytes are copied in and out through
//!   [`DmaBuffer::write_at`] and [`DmaBuffer::read_at`] (style.md rule 3).
//!
//! The modules beside the traits: [`discover`] finds OneConnect functions in sysfs (`ocetool
//! list`); [`backend`] says which backend drives a function and why; [`handoff`] moves an
//! adapter's functions where that backend needs them for one command and always gives them back;
//! [`signals`] lets Ctrl-C and SIGTERM stop a command cleanly; [`driver_view`] reads what the
//! kernel's driver knows about a function it holds ([`ethtool`]: `ETHTOOL_GDRVINFO`);
//! [`guest_memory`] maps the memory a vfio-user client (a VMM) shares with the emulated adapter;
//! [`host`] reads the host around the adapter (modules, limits, huge pages, RDMA, NFS) and
//! [`doctor`] judges it; [`trust`] checks whose files ocetool acts on. All sysfs, /dev and /proc
//! paths hang off a [`Roots`] value so tests run on fake trees ([`fake_sysfs`] with the
//! `test-support` feature).
//!
//! ```
//! use oce_pci::PciAddress;
//! let addr: PciAddress = "03:00.0".parse().unwrap();
//! assert_eq!(addr.to_string(), "0000:03:00.0");
//! ```
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod address;
pub mod backend;
pub mod discover;
pub mod doctor;
pub mod driver_view;
mod error;
pub mod ethtool;
#[cfg(any(test, feature = "test-support"))]
pub mod fake_sysfs;
pub mod guest_memory;
pub mod handoff;
pub mod host;
pub mod ids;
pub mod mmap;
mod mmio;
pub mod sigbus;
pub mod signals;
pub mod sysfs;
pub mod sysfs_backend;
pub mod trust;
pub mod vfio;
mod volatile_copy;
pub mod vpd;

pub use address::PciAddress;
pub use backend::Backend;
pub use discover::{Adapter, Blocker, FunctionInfo, Inventory, OtherFunction, Scope, discover};
pub use error::{PciError, error_causes, error_line, join_causes};
pub use handoff::{HandOff, HandOffOptions, KernelSysfs, SysfsWrite};
pub use ids::{Chip, FunctionKind};
pub use sysfs::{Lockdown, Roots};
pub use sysfs_backend::{SysfsBar, SysfsConfig, SysfsDma, SysfsFunction};
pub use vfio::{VfioBar, VfioConfig, VfioDma, VfioFunction};

/// A mapped memory BAR: 32-bit register reads and writes at byte offsets.
///
/// Offsets are relative to the start of the BAR. Implementations check offsets against the mapped
/// length; an access outside it reads as all ones and writes are dropped, mirroring what a PCI bus
/// does for an unclaimed address.
pub trait RegisterIo {
    /// Reads the 32-bit register at byte offset `off`.
    fn read32(&self, off: u32) -> u32;
    /// Writes `value` to the 32-bit register at byte offset `off`.
    fn write32(&self, off: u32, value: u32);
}

/// The function's PCI configuration space, accessed as aligned 32-bit words.
pub trait ConfigSpace {
    /// Reads the dword at `off` (must be 4-byte aligned and inside config space).
    fn read32(&self, off: u16) -> Result<u32, PciError>;
    /// Writes the dword at `off`; read-only bits are left unchanged by the device.
    fn write32(&self, off: u16, value: u32) -> Result<(), PciError>;
}

/// A buffer of memory the device can reach by DMA at [`DmaBuffer::iova`].
///
/// The buffer is device-visible memory: the device may change it at any time, so the host only
/// ever copies bytes in and out and never holds a reference into it.
pub trait DmaBuffer {
    /// The I/O virtual address the device uses for byte 0 of the buffer.
    fn iova(&self) -> u64;
    /// The usable length in bytes.
    fn len(&self) -> usize;
    /// True for a zero-length buffer.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `src` into the buffer at byte offset `off`.
    fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError>;
    /// Copies bytes at offset `off` of the buffer into `dst`.
    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError>;
    /// Sets `len` bytes at `off` to zero.
    fn zero(&self, off: usize, len: usize) -> Result<(), PciError> {
        const ZEROS: [u8; 256] = [0; 256];
        let mut done = 0;
        while done < len {
            let n = (len - done).min(ZEROS.len());
            self.write_at(off + done, &ZEROS[..n])?;
            done += n;
        }
        Ok(())
    }
}

/// One PCI function that ocetool can drive: config space, memory BARs and DMA memory.
pub trait PciFunction: std::fmt::Debug {
    /// Configuration-space accessor.
    type Config: ConfigSpace + std::fmt::Debug;
    /// A mapped memory BAR.
    type Bar: RegisterIo + std::fmt::Debug;
    /// A DMA buffer allocated for this function.
    type Dma: DmaBuffer + std::fmt::Debug;

    /// The function's configuration space.
    fn config(&self) -> &Self::Config;
    /// Maps memory BAR `bar` (0..=5), failing if it is absent or shorter than `min_len` bytes.
    fn map_bar(&self, bar: u8, min_len: u64) -> Result<Self::Bar, PciError>;
    /// Allocates `len` bytes of zeroed DMA memory mapped for this function.
    fn alloc_dma(&self, len: usize) -> Result<Self::Dma, PciError>;
}

/// Offset of BAR0; BAR n is at `BAR0_OFFSET + 4 * n` (PCI Local Bus spec, type 0 header).
const BAR0_OFFSET: u16 = 0x10;
/// BAR bit 0: set for an I/O-space BAR, clear for a memory BAR (PCI Local Bus spec §6.2.5.1).
const BAR_IO_SPACE: u32 = 1 << 0;

/// Checks that `bar` is one of the six BARs of a type 0 header and a memory BAR, as its register
/// in config space says: ocetool maps memory BARs only. Shared by both backends.
pub(crate) fn check_memory_bar(config: &impl ConfigSpace, bar: u8) -> Result<(), PciError> {
    if bar > 5 || config.read32(BAR0_OFFSET + 4 * u16::from(bar))? & BAR_IO_SPACE != 0 {
        return Err(PciError::NoSuchBar { bar });
    }
    Ok(())
}

/// Checks that `off..off + len` lies inside a buffer of `size` bytes.
///
/// Shared by every [`DmaBuffer`] implementation so that all of them reject the same accesses.
pub fn check_dma_range(off: usize, len: usize, size: usize) -> Result<(), PciError> {
    match off.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(PciError::DmaOutOfBounds { off, len, size }),
    }
}
