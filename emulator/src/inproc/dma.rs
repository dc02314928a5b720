//! [`EmuDma`]: a host DMA buffer of the emulated function, living in the model's IOVA table.

use std::fmt;
use std::sync::{Arc, Mutex};

use oce_pci::{DmaBuffer, PciError, check_dma_range};

use crate::device::model::Model;
use crate::lock;

/// A DMA buffer allocated by [`crate::Emulator`]. The bytes live in the model's IOVA table, so
/// the emulated firmware reaches them at [`DmaBuffer::iova`]; dropping the handle unmaps them.
pub struct EmuDma {
    model: Arc<Mutex<Model>>,
    iova: u64,
    len: usize,
}

impl EmuDma {
    pub(crate) fn new(model: Arc<Mutex<Model>>, iova: u64, len: usize) -> Self {
        Self { model, iova, len }
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
        let mut model = lock(&self.model);
        let buf = model.iova.buffer_mut(self.iova).ok_or(PciError::DmaOutOfBounds { off, len: src.len(), size: 0 })?;
        buf[off..off + src.len()].copy_from_slice(src);
        Ok(())
    }

    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        check_dma_range(off, dst.len(), self.len)?;
        let model = lock(&self.model);
        let buf = model.iova.buffer(self.iova).ok_or(PciError::DmaOutOfBounds { off, len: dst.len(), size: 0 })?;
        dst.copy_from_slice(&buf[off..off + dst.len()]);
        Ok(())
    }
}

impl Drop for EmuDma {
    fn drop(&mut self) {
        lock(&self.model).iova.unmap(self.iova);
    }
}
