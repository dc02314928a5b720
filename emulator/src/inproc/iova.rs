//! The IOVA table: host DMA buffers as the emulated device sees them, by bus address.
//!
//! Every buffer the host gets from [`crate::Emulator`]'s `alloc_dma` is registered here, and the
//! emulated firmware reaches host memory only through [`IovaTable::read`] and
//! [`IovaTable::write`]. An address that is not inside one mapped buffer is a DMA fault, exactly
//! as an IOMMU would report it: a host that encodes a doorbell address wrongly, or frees a buffer
//! the device still uses, fails here.
//!
//! Addresses are handed out by a bump allocator and never reused, so a freed buffer's range stays
//! unmapped for the life of the model. Placement is deliberately awkward
//! ([`crate::assumptions::IOVA_BASE`], [`crate::assumptions::IOVA_SKEW`]).

use std::collections::BTreeMap;

use crate::assumptions::{IOVA_BASE, IOVA_GUARD, IOVA_PAGE, IOVA_SKEW, MAX_DMA_ALLOC};

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

/// A DMA buffer lent to the device by [`IovaTable::take`].
#[derive(Debug)]
pub(crate) struct LentBuffer {
    start: u64,
    /// Offset of the requested address inside `bytes`.
    pub(crate) off: usize,
    /// The whole buffer.
    pub(crate) bytes: Vec<u8>,
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

    /// True when `iova..iova + len` lies inside one mapped buffer.
    pub(crate) fn contains(&self, iova: u64, len: usize) -> bool {
        self.locate(iova, len).is_some()
    }

    /// The start of a mapped buffer that begins strictly inside `iova + 1 ..= iova + 15`: the
    /// signature of a host whose mailbox was not 16-byte aligned.
    pub(crate) fn buffer_starting_just_above(&self, iova: u64) -> Option<u64> {
        let lo = iova.checked_add(1)?;
        let hi = iova.saturating_add(15);
        self.regions.range(lo..=hi).next().map(|(&start, _)| start)
    }

    /// Device read: copies `dst.len()` bytes at `iova` out of host memory.
    pub(crate) fn read(&self, iova: u64, dst: &mut [u8]) -> bool {
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
    pub(crate) fn write(&mut self, iova: u64, src: &[u8]) -> bool {
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

    /// Lends the device the buffer holding `iova..iova + len` without copying it: the buffer
    /// leaves the table (so nothing else can reach it) until [`IovaTable::restore`] puts it
    /// back. Returns it with the offset of `iova` inside it.
    pub(crate) fn take(&mut self, iova: u64, len: usize) -> Option<LentBuffer> {
        let (start, off) = self.locate(iova, len)?;
        let bytes = self.regions.remove(&start)?;
        Some(LentBuffer { start, off, bytes })
    }

    /// Puts a lent buffer back at its address.
    pub(crate) fn restore(&mut self, lent: LentBuffer) {
        self.regions.insert(lent.start, lent.bytes);
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
        assert!(!t.contains(a, 1));
    }

    #[test]
    fn accesses_must_stay_inside_one_buffer() {
        let mut t = IovaTable::default();
        let a = t.map(16).unwrap();
        assert!(t.write(a + 8, &[1; 8]));
        assert!(!t.write(a + 9, &[1; 8]));
        assert!(!t.contains(a - 1, 2));
        let mut out = [0u8; 8];
        assert!(t.read(a + 8, &mut out));
        assert_eq!(out, [1; 8]);
        assert!(!t.read(u64::MAX - 2, &mut out));
        assert_eq!(t.buffer_starting_just_above(a & !0xF), Some(a));
        assert_eq!(t.buffer_starting_just_above(a), None);
    }

    #[test]
    fn a_lent_buffer_is_unreachable_until_restored() {
        let mut t = IovaTable::default();
        let a = t.map(64).unwrap();
        assert!(t.take(a + 60, 8).is_none(), "the range must fit");
        let mut lent = t.take(a + 16, 8).unwrap();
        assert_eq!((lent.off, lent.bytes.len()), (16, 64));
        assert!(!t.contains(a, 1));
        lent.bytes[16] = 7;
        t.restore(lent);
        assert_eq!(t.buffer(a).unwrap()[16], 7);
    }

    #[test]
    fn refuses_empty_and_huge_allocations() {
        let mut t = IovaTable::default();
        assert_eq!(t.map(0), Err(AllocRefused::Empty));
        assert_eq!(t.map(MAX_DMA_ALLOC + 1), Err(AllocRefused::TooLarge));
    }
}
