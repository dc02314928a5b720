//! The sysfs backend: a PCI function with no IOMMU group, reached the way ixy.rs and DPDK's uio
//! path reach one — BARs mapped through `resourceN`, config space read and written through the
//! `config` file, and DMA memory whose bus addresses are its physical addresses, from
//! `/proc/self/pagemap` (the `dma` module explains why a huge page).
//!
//! Nothing confines the adapter's DMA here (see [`crate::backend`] for when this backend is used,
//! and why VFIO is preferred). So it runs only as root, is refused under kernel lockdown and when
//! the kernel hides physical addresses, enables bus mastering only while ocetool holds the
//! function, and puts the command register back as it found it when the function is dropped —
//! on success, on error, during a panic's unwinding, and after Ctrl-C or SIGTERM (the signal
//! handler only records the signal; the command returns and the drop runs).
//!
//! The function must be bound to no driver: [`HandOff`] with
//! [`Target::Detached`] takes it from its driver (with
//! `--unbind`) and holds it unbound; [`SysfsFunction::open`] borrows that guard, so the compiler
//! ensures everything here is gone before the driver gets the function back.

mod bar;
mod dma;
mod pagemap;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;

pub use bar::SysfsBar;
pub use dma::SysfsDma;
use dma::{DmaArena, HugePage};

use crate::backend::sysfs_blockers;
use crate::handoff::{HandOff, Target};
use crate::{ConfigSpace, PciAddress, PciError, PciFunction, check_memory_bar};

/// Offset of the command register in config space (PCI Local Bus spec, type 0 header).
const COMMAND_OFFSET: u16 = 0x04;
/// Command register bit 1: Memory Space Enable (PCI Local Bus spec §6.2.2).
const COMMAND_MEMORY: u16 = 1 << 1;
/// Command register bit 2: Bus Master Enable (PCI Local Bus spec §6.2.2).
const COMMAND_BUS_MASTER: u16 = 1 << 2;

/// A PCI function driven through sysfs.
#[derive(Debug)]
pub struct SysfsFunction<'h> {
    address: PciAddress,
    handoff: &'h HandOff,
    config: SysfsConfig,
    dma: DmaArena,
    /// The command register as ocetool found it, written back on drop.
    original_command: u16,
}

impl<'h> SysfsFunction<'h> {
    /// Opens the function that `handoff` holds unbound: checks that the host lets this backend
    /// run ([`crate::backend::sysfs_blockers`]), maps its DMA huge page (which also proves the
    /// kernel shows physical addresses), opens config space and enables memory space and bus
    /// mastering — in that order, so a refusal leaves the device untouched.
    pub fn open(handoff: &'h HandOff) -> Result<Self, PciError> {
        let address = handoff.address();
        if handoff.target() != Target::Detached {
            return Err(PciError::NotHandedOver { address, backend: "sysfs" });
        }
        let roots = handoff.roots();
        if let Some(blocker) = sysfs_blockers(roots).into_iter().next() {
            return Err(PciError::SysfsBackend { address, blocker });
        }
        let dma = DmaArena::new(HugePage::map(address, roots)?);
        let config = SysfsConfig::open(address, &roots.device_dir(address).join("config"))?;
        let original_command = config.read16(COMMAND_OFFSET)?;
        config.write16(COMMAND_OFFSET, original_command | COMMAND_MEMORY | COMMAND_BUS_MASTER)?;
        Ok(Self { address, handoff, config, dma, original_command })
    }

    /// The function's address.
    pub fn address(&self) -> PciAddress {
        self.address
    }
}

impl<'h> PciFunction for SysfsFunction<'h> {
    type Config = SysfsConfig;
    type Bar = SysfsBar<'h>;
    type Dma = SysfsDma<'h>;

    fn config(&self) -> &SysfsConfig {
        &self.config
    }

    fn map_bar(&self, bar: u8, min_len: u64) -> Result<SysfsBar<'h>, PciError> {
        check_memory_bar(&self.config, bar)?;
        SysfsBar::map(self.handoff.roots(), self.address, bar, min_len)
    }

    fn alloc_dma(&self, len: usize) -> Result<SysfsDma<'h>, PciError> {
        self.dma.alloc(len)
    }
}

impl Drop for SysfsFunction<'_> {
    fn drop(&mut self) {
        // Bus mastering off (unless it was on before ocetool came) before the huge page can be
        // unmapped: the adapter must not reach memory that goes back to the kernel.
        if let Err(err) = self.config.write16(COMMAND_OFFSET, self.original_command) {
            // A destructor cannot return the error; the user must know the device kept bus
            // mastering on.
            eprintln!(
                "ocetool: warning: cannot restore the command register of {} to {:#06x}: {err}; the driver's probe \
                 resets it",
                self.address, self.original_command
            );
        }
    }
}

/// Configuration space through `<device>/config` (pread/pwrite; root reads all 4 KiB of a PCI
/// Express function, writes need CAP_SYS_ADMIN).
#[derive(Debug)]
pub struct SysfsConfig {
    address: PciAddress,
    file: File,
    len: u64,
}

impl SysfsConfig {
    fn open(address: PciAddress, path: &std::path::Path) -> Result<Self, PciError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| PciError::Io { path: path.to_path_buf(), source })?;
        let len = file.metadata().map_err(|source| PciError::Io { path: path.to_path_buf(), source })?.len();
        Ok(Self { address, file, len })
    }

    fn check(&self, off: u16, width: u16) -> Result<(), PciError> {
        if !off.is_multiple_of(width) || u64::from(off) + u64::from(width) > self.len {
            return Err(PciError::ConfigOffset { off });
        }
        Ok(())
    }

    /// Reads the `N` bytes at `off`, which must be `N`-aligned and inside config space.
    fn read_bytes<const N: usize>(&self, off: u16) -> Result<[u8; N], PciError> {
        self.check(off, N as u16)?;
        let mut raw = [0u8; N];
        self.file.read_exact_at(&mut raw, u64::from(off)).map_err(|source| PciError::ConfigIo {
            address: self.address,
            off,
            write: false,
            source,
        })?;
        Ok(raw)
    }

    /// Writes `bytes` at `off` in one `pwrite`, which the kernel turns into one config write of
    /// that width (`pci_write_config`, drivers/pci/pci-sysfs.c).
    fn write_bytes(&self, off: u16, bytes: &[u8]) -> Result<(), PciError> {
        self.check(off, bytes.len() as u16)?;
        self.file.write_all_at(bytes, u64::from(off)).map_err(|source| PciError::ConfigIo {
            address: self.address,
            off,
            write: true,
            source,
        })
    }

    /// Reads the 16-bit register at `off`.
    fn read16(&self, off: u16) -> Result<u16, PciError> {
        self.read_bytes(off).map(u16::from_le_bytes)
    }

    /// Writes the 16-bit register at `off` alone: the command register is written without its
    /// neighbour, the status register, whose error bits are write-1-to-clear.
    fn write16(&self, off: u16, value: u16) -> Result<(), PciError> {
        self.write_bytes(off, &value.to_le_bytes())
    }

    /// The size of config space: 256 bytes for conventional PCI, 4096 for PCI Express.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty config file (never, for a real function).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl ConfigSpace for SysfsConfig {
    fn read32(&self, off: u16) -> Result<u32, PciError> {
        self.read_bytes(off).map(u32::from_le_bytes)
    }

    fn write32(&self, off: u16, value: u32) -> Result<(), PciError> {
        self.write_bytes(off, &value.to_le_bytes())
    }
}

#[cfg(test)]
mod tests;
