//! A memory BAR of a [`SysfsFunction`](super::SysfsFunction): `resourceN` mapped shared.
//!
//! There is no pread/pwrite fallback: the kernel gives `resourceN` of a memory BAR only an mmap
//! method (read and write exist for I/O-port BARs alone, `pci_create_attr` in
//! drivers/pci/pci-sysfs.c), so a BAR that cannot be mapped is an error that says why.

use std::fs::OpenOptions;
use std::marker::PhantomData;
use std::ptr::NonNull;

use memmap2::{MmapOptions, MmapRaw};

use crate::backend::SysfsBlocker;
use crate::handoff::HandOff;
use crate::mmio::MmioWindow;
use crate::sysfs::{self, Lockdown, Roots};
use crate::{PciAddress, PciError, RegisterIo};

/// What a read outside the BAR returns: an unclaimed PCI read.
const ALL_ONES: u32 = u32::MAX;

/// A memory BAR mapped through sysfs.
#[derive(Debug)]
pub struct SysfsBar<'h> {
    index: u8,
    /// The registers; declared before `map`, so it is dropped first.
    window: MmioWindow,
    map: MmapRaw,
    _handoff: PhantomData<&'h HandOff>,
}

impl SysfsBar<'_> {
    /// Maps `<device>/resource<index>`, which must be at least `min_len` bytes.
    pub(super) fn map(roots: &Roots, address: PciAddress, index: u8, min_len: u64) -> Result<Self, PciError> {
        let path = roots.device_dir(address).join(format!("resource{index}"));
        if !path.exists() {
            return Err(PciError::NoSuchBar { bar: index });
        }
        let map_err = |source: std::io::Error| match (source.raw_os_error(), sysfs::lockdown(roots)) {
            (Some(libc::EPERM), mode @ (Lockdown::Integrity | Lockdown::Confidentiality)) => {
                PciError::SysfsBackend { address, blocker: SysfsBlocker::LockedDown(mode) }
            }
            _ => PciError::BarMap { address, bar: index, path: path.clone(), source },
        };
        let file = OpenOptions::new().read(true).write(true).open(&path).map_err(map_err)?;
        let len = file.metadata().map_err(map_err)?.len();
        if len == 0 {
            return Err(PciError::NoSuchBar { bar: index });
        }
        if len < min_len {
            return Err(PciError::BarTooSmall { bar: index, len, needed: min_len });
        }
        let size = usize::try_from(len).map_err(|_| PciError::BarTooSmall { bar: index, len, needed: min_len })?;
        let map = MmapOptions::new().len(size).map_raw(&file).map_err(map_err)?;
        let base = NonNull::new(map.as_mut_ptr()).ok_or(PciError::NoSuchBar { bar: index })?;
        // SAFETY: `map` is a live, shared, readable and writable (`map_raw`) mapping of the whole
        // BAR, page-aligned by mmap; `window` is stored beside it and dropped first.
        let window = unsafe { MmioWindow::new(base, len) };
        Ok(Self { index, window, map, _handoff: PhantomData })
    }

    /// The BAR index.
    pub fn index(&self) -> u8 {
        self.index
    }

    /// The BAR length in bytes.
    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    /// True for an empty BAR (never: an empty `resourceN` is refused).
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }
}

impl RegisterIo for SysfsBar<'_> {
    fn read32(&self, off: u32) -> u32 {
        self.window.read32(off).unwrap_or(ALL_ONES)
    }

    fn write32(&self, off: u32, value: u32) {
        // Outside the BAR the write is dropped, as a bus drops a write to an unclaimed address.
        self.window.write32(off, value);
    }
}
