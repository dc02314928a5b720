//! The IOVA table: host DMA buffers as the emulated device sees them, by bus address, and
//! [`IovaSpace`], the table as the device's [`DmaSpace`].
//!
//! Every buffer the host gets from [`crate::Emulator`]'s `alloc_dma` is registered here, and the
//! device reaches host memory only through [`IovaSpace`]'s reads and writes (copies, never a
//! reference). An address that is not inside one mapped buffer is a DMA fault, exactly as an
//! IOMMU would report it: a host that encodes a doorbell address wrongly, or frees a buffer the
//! device still uses, fails here.
//!
//! Addresses are handed out by a bump allocator and never reused, so a freed buffer's range stays
//! unmapped for the life of the model. Placement is deliberately awkward
//! ([`crate::assumptions::IOVA_BASE`], [`crate::assumptions::IOVA_SKEW`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::assumptions::{IOVA_BASE, IOVA_GUARD, IOVA_PAGE, IOVA_SKEW, MAX_DMA_ALLOC};
use crate::device::{DmaFault, DmaSpace};

/// Why an allocation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllocRefused {
    /// Zero bytes.
    Empty,
    /// More than [`MAX_DMA_ALLOC`].
    TooLarge,
    /// The address space is used up (would need ~2^64 bytes of allocations).
    Exhausted,
}

/// The mapped DMA buffers.
#[derive(Debug)]
pub(crate) struct IovaTable {
    regions: BTreeMap<u64, Vec<u8>>,
    next: u64,
}

impl Default for IovaTable {
    fn default() -> Self {
        Self { regions: BTreeMap::new(), next: IOVA_BASE }
    }
}

impl IovaTable {
    /// Maps `len` zeroed bytes and returns their bus address.
    pub(crate) fn map(&mut self, len: usize) -> Result<u64, AllocRefused> {
        if len == 0 {
            return Err(AllocRefused::Empty);
        }
        if len > MAX_DMA_ALLOC {
            return Err(AllocRefused::TooLarge);
        }
        let iova = self.next.checked_add(IOVA_SKEW).ok_or(AllocRefused::Exhausted)?;
        let end = iova.checked_add(len as u64).ok_or(AllocRefused::Exhausted)?;
        // Leave an unmapped guard gap after every buffer, then start the next one on a fresh page.
        self.next = end
            .checked_add(IOVA_GUARD)
            .and_then(|e| e.checked_next_multiple_of(IOVA_PAGE))
            .ok_or(AllocRefused::Exhausted)?;
        self.regions.insert(iova, vec![0; len]);
        Ok(iova)
    }

    /// Unmaps the buffer that starts at `iova` (no-op if none does).
    pub(crate) fn unmap(&mut self, iova: u64) {
        self.regions.remove(&iova);
    }

    /// The start of the buffer holding `iova..iova + len`, and the offset of `iova` inside it.
    fn locate(&self, iova: u64, len: usize) -> Option<(u64, usize)> {
        let (&start, buf) = self.regions.range(..=iova).next_back()?;
        let off = usize::try_from(iova - start).ok()?;
        (off.checked_add(len)? <= buf.len()).then_some((start, off))
    }

    /// Device read: copies `dst.len()` bytes at `iova` out of host memory.
    fn read(&self, iova: u64, dst: &mut [u8]) -> bool {
        match self.locate(iova, dst.len()) {
            Some((start, off)) => {
                let buf = &self.regions[&start];
                dst.copy_from_slice(&buf[off..off + dst.len()]);
                true
            }
            None => false,
        }
    }

    /// Device write: copies `src` into host memory at `iova`.
    fn write(&mut self, iova: u64, src: &[u8]) -> bool {
        match self.locate(iova, src.len()) {
            Some((start, off)) => {
                if let Some(buf) = self.regions.get_mut(&start) {
                    buf[off..off + src.len()].copy_from_slice(src);
                }
                true
            }
            None => false,
        }
    }

    /// Host access to its own buffer (the `DmaBuffer` side): `off` is relative to the buffer.
    pub(crate) fn buffer(&self, iova: u64) -> Option<&[u8]> {
        self.regions.get(&iova).map(Vec::as_slice)
    }

    /// Mutable host access to its own buffer.
    pub(crate) fn buffer_mut(&mut self, iova: u64) -> Option<&mut [u8]> {
        self.regions.get_mut(&iova).map(Vec::as_mut_slice)
    }
}

/// The IOVA table shared between the host's buffers ([`super::EmuDma`]) and the device, which
/// reaches it as its [`DmaSpace`]. Clones share one table.
#[derive(Debug, Clone, Default)]
pub(crate) struct IovaSpace(Arc<Mutex<IovaTable>>);

impl IovaSpace {
    /// The table; a panic in another thread while it held the lock does not make it unusable
    /// (its state is plain data, and every method leaves it consistent).
    pub(crate) fn table(&self) -> MutexGuard<'_, IovaTable> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl DmaSpace for IovaSpace {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        if self.table().read(addr, buf) { Ok(()) } else { Err(DmaFault { addr, len: buf.len() }) }
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        if self.table().write(addr, data) { Ok(()) } else { Err(DmaFault { addr, len: data.len() }) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_is_skewed_above_16_gib_and_never_reused() {
        let mut t = IovaTable::default();
        let a = t.map(288).unwrap();
        assert_eq!(a % IOVA_PAGE, IOVA_SKEW);
        assert!(a >> 34 != 0, "the doorbell HI half must be non-zero");
        let b = t.map(4096).unwrap();
        assert!(b >= a + 288 + IOVA_GUARD);
        t.unmap(a);
        let c = t.map(288).unwrap();
        assert_ne!(c, a);
        assert!(!t.read(a, &mut [0; 1]));
    }

    #[test]
    fn accesses_must_stay_inside_one_buffer() {
        let mut t = IovaTable::default();
        let a = t.map(16).unwrap();
        assert!(t.write(a + 8, &[1; 8]));
        assert!(!t.write(a + 9, &[1; 8]));
        assert!(!t.read(a - 1, &mut [0; 2]));
        let mut out = [0u8; 8];
        assert!(t.read(a + 8, &mut out));
        assert_eq!(out, [1; 8]);
        assert!(!t.read(u64::MAX - 2, &mut out));
    }

    #[test]
    fn the_space_reports_faults_with_the_access() {
        let space = IovaSpace::default();
        let a = space.table().map(16).unwrap();
        assert_eq!(space.write(a, &[7; 16]), Ok(()));
        let mut out = [0u8; 17];
        assert_eq!(space.read(a, &mut out), Err(DmaFault { addr: a, len: 17 }));
        assert_eq!(space.read(a, &mut out[..16]), Ok(()));
        assert_eq!(out[..16], [7; 16]);
    }

    #[test]
    fn refuses_empty_and_huge_allocations() {
        let mut t = IovaTable::default();
        assert_eq!(t.map(0), Err(AllocRefused::Empty));
        assert_eq!(t.map(MAX_DMA_ALLOC + 1), Err(AllocRefused::TooLarge));
    }
}
