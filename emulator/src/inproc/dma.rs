//! [`EmuDma`]: a host DMA buffer of the emulated function, living in the IOVA table.

use std::fmt;

use oce_pci::{DmaBuffer, PciError, check_dma_range};

use super::iova::IovaSpace;

/// A DMA buffer allocated by [`crate::Emulator`]. The bytes live in the IOVA table, so the
/// emulated device reaches them at [`DmaBuffer::iova`]; dropping the handle unmaps them.
pub struct EmuDma {
    space: IovaSpace,
    iova: u64,
    len: usize,
}

impl EmuDma {
    pub(super) fn new(space: IovaSpace, iova: u64, len: usize) -> Self {
        Self { space, iova, len }
    }
}

impl fmt::Debug for EmuDma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmuDma").field("iova", &format_args!("{:#x}", self.iova)).field("len", &self.len).finish()
    }
}

impl DmaBuffer for EmuDma {
    fn iova(&self) -> u64 {
        self.iova
    }

    fn len(&self) -> usize {
        self.len
    }

    fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError> {
        check_dma_range(off, src.len(), self.len)?;
        let mut table = self.space.table();
        let buf = table.buffer_mut(self.iova).ok_or(PciError::DmaOutOfBounds { off, len: src.len(), size: 0 })?;
        buf[off..off + src.len()].copy_from_slice(src);
        Ok(())
    }

    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        check_dma_range(off, dst.len(), self.len)?;
        let table = self.space.table();
        let buf = table.buffer(self.iova).ok_or(PciError::DmaOutOfBounds { off, len: dst.len(), size: 0 })?;
        dst.copy_from_slice(&buf[off..off + dst.len()]);
        Ok(())
    }
}

impl Drop for EmuDma {
    fn drop(&mut self) {
        self.space.table().unmap(self.iova);
    }
}
