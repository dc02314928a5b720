//! The VFIO backend: a real PCI function held by the kernel's vfio-pci, reached through the
//! `pci-driver` crate (ecosystem.md §5.1), behind ocetool's own seam traits.
//!
//! pci-driver's `PciDevice` trait is sealed, so [`VfioFunction`] wraps a `VfioPciDevice` rather
//! than implementing anything of pci-driver's. Every value it hands out borrows the
//! [`HandOff`] that put the function on vfio-pci, so the compiler ensures the device, its BAR
//! mappings and its DMA buffers are all closed before the original driver binding is restored
//! (the kernel's unbind of vfio-pci waits until the device is closed).

mod bar;
mod dma;
pub(crate) mod iova;

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use pci_driver::backends::vfio::VfioPciDevice;
use pci_driver::device::PciDevice;
use pci_driver::regions::PciRegion;

use crate::handoff::{HandOff, Target};
use crate::{ConfigSpace, PciAddress, PciError, PciFunction, check_memory_bar};

pub use bar::VfioBar;
pub use dma::VfioDma;
use iova::IovaSpace;

/// Offset of the command register in config space (PCI Local Bus spec, type 0/1 header).
const COMMAND_OFFSET: u16 = 0x04;

/// A PCI function opened through VFIO.
#[derive(Debug)]
pub struct VfioFunction<'h> {
    address: PciAddress,
    device: Arc<VfioPciDevice>,
    config: VfioConfig,
    iova: Arc<Mutex<IovaSpace>>,
    iova_ranges: Vec<Range<u64>>,
    iommu_align: usize,
    _handoff: PhantomData<&'h HandOff>,
}

impl<'h> VfioFunction<'h> {
    /// Opens the function that `handoff` holds on vfio-pci, and enables memory space and bus
    /// mastering in its command register (both needed for BAR access and DMA).
    ///
    /// pci-driver opens `/dev/vfio/<group>` and `/dev/vfio/vfio` itself, so the /dev root of the
    /// hand-off is only used for its checks; the sysfs path comes from the hand-off's roots.
    pub fn open(handoff: &'h HandOff) -> Result<Self, PciError> {
        let address = handoff.address();
        let group = match (handoff.target(), handoff.group()) {
            (Target::VfioPci, Some(group)) => group,
            _ => return Err(PciError::NotHandedOver { address, backend: "vfio" }),
        };
        let group_node = std::path::PathBuf::from(format!("/dev/vfio/{group}"));
        let device = VfioPciDevice::open(handoff.sysfs_path()).map_err(|source| match source.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => PciError::VfioPermission { path: group_node.clone() },
            Some(libc::EBUSY) => PciError::VfioGroupBusy { path: group_node.clone() },
            _ => PciError::VfioOpen { address, source },
        })?;
        let device = Arc::new(device);
        let (iova_ranges, iommu_align, max_mappings) = {
            let iommu = device.iommu();
            (iommu.valid_iova_ranges().to_vec(), iommu.alignment(), iommu.max_num_mappings())
        };
        let config_len = device.config().len();
        let config = VfioConfig { address, device: Arc::clone(&device), len: config_len };
        let command = device.config().command();
        let enable = |bit: pci_driver::regions::structured::PciBitReadWrite<'_, u16>| {
            bit.write(true).map_err(|source| PciError::ConfigIo { address, off: COMMAND_OFFSET, write: true, source })
        };
        enable(command.memory_space_enable())?;
        enable(command.bus_master_enable())?;
        let space = IovaSpace::new(&iova_ranges, iommu_align as u64, max_mappings);
        Ok(Self {
            address,
            device,
            config,
            iova: Arc::new(Mutex::new(space)),
            iova_ranges,
            iommu_align,
            _handoff: PhantomData,
        })
    }

    /// The function's address.
    pub fn address(&self) -> PciAddress {
        self.address
    }

    /// The IOVA ranges the IOMMU accepts for this device (end exclusive).
    pub fn iova_ranges(&self) -> &[Range<u64>] {
        &self.iova_ranges
    }

    /// The IOMMU page size: DMA buffers are rounded up to it.
    pub fn iommu_alignment(&self) -> usize {
        self.iommu_align
    }

    /// Like [`PciFunction::map_bar`], but always through pread/pwrite on the VFIO device fd, even
    /// when the BAR could be mapped: the path a BAR that vfio-pci will not let be mmap'd takes.
    pub fn map_bar_unmapped(&self, bar: u8, min_len: u64) -> Result<VfioBar<'h>, PciError> {
        self.bar(bar, min_len, false)
    }

    fn bar(&self, bar: u8, min_len: u64, try_map: bool) -> Result<VfioBar<'h>, PciError> {
        check_memory_bar(&self.config, bar)?;
        let region = self.device.bar(usize::from(bar)).ok_or(PciError::NoSuchBar { bar })?;
        if region.len() < min_len {
            return Err(PciError::BarTooSmall { bar, len: region.len(), needed: min_len });
        }
        Ok(VfioBar::new(bar, region, try_map))
    }
}

impl<'h> PciFunction for VfioFunction<'h> {
    type Config = VfioConfig;
    type Bar = VfioBar<'h>;
    type Dma = VfioDma<'h>;

    fn config(&self) -> &VfioConfig {
        &self.config
    }

    fn map_bar(&self, bar: u8, min_len: u64) -> Result<VfioBar<'h>, PciError> {
        self.bar(bar, min_len, true)
    }

    fn alloc_dma(&self, len: usize) -> Result<VfioDma<'h>, PciError> {
        VfioDma::alloc(self.address, Arc::clone(&self.device), Arc::clone(&self.iova), self.iommu_align, len)
    }
}

/// Configuration space through the VFIO config region (pread/pwrite on the device fd).
#[derive(Debug)]
pub struct VfioConfig {
    address: PciAddress,
    device: Arc<VfioPciDevice>,
    len: u64,
}

impl VfioConfig {
    fn check(&self, off: u16) -> Result<(), PciError> {
        if !off.is_multiple_of(4) || u64::from(off) + 4 > self.len {
            return Err(PciError::ConfigOffset { off });
        }
        Ok(())
    }

    /// The size of the config region: 256 bytes for conventional PCI, 4096 for PCI Express.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty config region (never, for a device vfio-pci accepted).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl ConfigSpace for VfioConfig {
    fn read32(&self, off: u16) -> Result<u32, PciError> {
        self.check(off)?;
        self.device.config().read_le_u32(u64::from(off)).map_err(|source| PciError::ConfigIo {
            address: self.address,
            off,
            write: false,
            source,
        })
    }

    fn write32(&self, off: u16, value: u32) -> Result<(), PciError> {
        self.check(off)?;
        self.device.config().write_le_u32(u64::from(off), value).map_err(|source| PciError::ConfigIo {
            address: self.address,
            off,
            write: true,
            source,
        })
    }
}
