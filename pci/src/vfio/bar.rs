//! A memory BAR of a VFIO function: mmap'd when vfio-pci allows it, else read and written with
//! pread/pwrite on the device fd; either way bounds-checked, an access outside reading all ones.

use std::marker::PhantomData;
use std::ptr::NonNull;

use pci_driver::regions::{MappedOwningPciRegion, OwningPciRegion, PciRegion};

use crate::RegisterIo;
use crate::handoff::HandOff;
use crate::mmio::MmioWindow;

/// What a read outside the BAR (or a failed one) returns: an unclaimed PCI read.
const ALL_ONES: u32 = u32::MAX;

#[derive(Debug)]
enum Access {
    /// The BAR mapped into this process; the window covers `map`, which it must not outlive
    /// (fields drop in order: the window first).
    Mapped {
        /// The registers.
        window: MmioWindow,
        /// Keeps the mapping alive; never read.
        _map: MappedOwningPciRegion,
    },
    /// Not mappable (or the map failed): pread/pwrite through the VFIO device fd.
    Fd(OwningPciRegion),
}

/// A memory BAR of a [`VfioFunction`](super::VfioFunction).
#[derive(Debug)]
pub struct VfioBar<'h> {
    index: u8,
    len: u64,
    readable: bool,
    writable: bool,
    access: Access,
    _handoff: PhantomData<&'h HandOff>,
}

impl VfioBar<'_> {
    /// Maps `region` if `try_map` and vfio-pci allows it, else keeps it for pread/pwrite.
    pub(super) fn new(index: u8, region: OwningPciRegion, try_map: bool) -> Self {
        let perms = region.permissions();
        let (readable, writable) = (perms.can_read(), perms.can_write());
        let mapped = if try_map && region.is_mappable() { region.map(.., perms).ok() } else { None };
        let window = mapped.as_ref().and_then(|map| {
            // SAFETY: `map` is the live mapping of the whole region (the range `..` is clamped to
            // its length), page-aligned by mmap; the window is stored beside it in `Access::Mapped`
            // and dropped first. Reads and writes are further gated on the region's permissions.
            NonNull::new(map.as_mut_ptr()).map(|base| unsafe { MmioWindow::new(base, map.len() as u64) })
        });
        let (len, access) = match (mapped, window) {
            (Some(map), Some(window)) => (window.len(), Access::Mapped { window, _map: map }),
            _ => (region.len(), Access::Fd(region)),
        };
        Self { index, len, readable, writable, access, _handoff: PhantomData }
    }

    /// The BAR index.
    pub fn index(&self) -> u8 {
        self.index
    }

    /// The BAR length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty BAR (never: vfio-pci reports absent BARs as absent).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when registers are accessed through an mmap of the BAR, false for pread/pwrite.
    pub fn is_mapped(&self) -> bool {
        matches!(self.access, Access::Mapped { .. })
    }

    fn in_bounds(&self, off: u32) -> bool {
        off.is_multiple_of(4) && u64::from(off) + 4 <= self.len
    }
}

impl RegisterIo for VfioBar<'_> {
    fn read32(&self, off: u32) -> u32 {
        if !self.in_bounds(off) || !self.readable {
            return ALL_ONES;
        }
        match &self.access {
            Access::Mapped { window, .. } => window.read32(off).unwrap_or(ALL_ONES),
            Access::Fd(region) => region.read_le_u32(u64::from(off)).unwrap_or(ALL_ONES),
        }
    }

    fn write32(&self, off: u32, value: u32) {
        if !self.in_bounds(off) || !self.writable {
            return;
        }
        match &self.access {
            Access::Mapped { window, .. } => {
                window.write32(off, value);
            }
            // The trait is infallible: a failed pwrite is dropped, as a bus drops a write to an
            // unclaimed address.
            Access::Fd(region) => {
                let _ = region.write_le_u32(u64::from(off), value);
            }
        }
    }
}
