//! The I/O virtual address space of one VFIO container: which IOVA ranges are free, handed out
//! first-fit from the lowest valid address so that devices with narrow DMA masks are served.

use std::collections::BTreeMap;
use std::ops::Range;

/// The valid IOVA ranges of a container and the mappings ocetool holds in them.
#[derive(Debug, Clone)]
pub(crate) struct IovaSpace {
    /// Valid ranges, sorted, non-overlapping (end exclusive).
    ranges: Vec<Range<u64>>,
    /// IOVA and length alignment (the IOMMU page size).
    align: u64,
    /// The most mappings the container allows at once.
    max_mappings: u32,
    /// Live mappings: start → end (exclusive).
    used: BTreeMap<u64, u64>,
}

impl IovaSpace {
    /// A space over `ranges` with `align`-byte pages and at most `max_mappings` live mappings.
    pub(crate) fn new(ranges: &[Range<u64>], align: u64, max_mappings: u32) -> Self {
        let mut ranges = ranges.to_vec();
        ranges.sort_by_key(|r| r.start);
        Self { ranges, align: align.max(1), max_mappings, used: BTreeMap::new() }
    }

    fn align_up(&self, v: u64) -> Option<u64> {
        v.checked_next_multiple_of(self.align)
    }

    /// Reserves `len` bytes (a multiple of the alignment) at the lowest free aligned IOVA.
    pub(crate) fn reserve(&mut self, len: u64) -> Result<u64, String> {
        if self.used.len() >= self.max_mappings as usize {
            return Err(format!("the IOMMU allows at most {} DMA mappings", self.max_mappings));
        }
        for range in &self.ranges {
            let Some(mut cand) = self.align_up(range.start) else { continue };
            for (&start, &end) in &self.used {
                if end <= cand {
                    continue;
                }
                if cand.checked_add(len).is_none_or(|e| start < e) {
                    match self.align_up(end) {
                        Some(next) => cand = next,
                        None => break,
                    }
                } else {
                    break;
                }
            }
            if cand.checked_add(len).is_some_and(|e| e <= range.end) {
                self.used.insert(cand, cand + len);
                return Ok(cand);
            }
        }
        Err(format!("no free IOVA range of {len:#x} bytes in the device's valid ranges {:x?}", self.ranges))
    }

    /// Returns the mapping at `iova` to the free space.
    pub(crate) fn release(&mut self, iova: u64) {
        self.used.remove(&iova);
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init, reason = "a list of IOVA ranges that happens to hold one")]
mod tests {
    use super::*;

    #[test]
    fn first_fit_from_the_bottom_with_reuse() {
        // The ranges the recipe's guest reported, first page dropped by pci-driver.
        let mut space = IovaSpace::new(&[0xfef0_0000..0x7f_ffff_ffff, 0x1000..0xfedf_ffff], 0x1000, 65535);
        assert_eq!(space.reserve(0x1000), Ok(0x1000));
        assert_eq!(space.reserve(0x2000), Ok(0x2000));
        assert_eq!(space.reserve(0x1000), Ok(0x4000));
        space.release(0x2000);
        assert_eq!(space.reserve(0x1000), Ok(0x2000));
        assert_eq!(space.reserve(0x2000), Ok(0x5000));
        assert_eq!(space.reserve(0x1000), Ok(0x3000));
    }

    #[test]
    fn skips_to_the_next_range_when_one_is_full() {
        let mut space = IovaSpace::new(&[0x1000..0x3000, 0x10_0000..0x20_0000], 0x1000, 16);
        assert_eq!(space.reserve(0x2000), Ok(0x1000));
        assert_eq!(space.reserve(0x1000), Ok(0x10_0000));
        assert_eq!(
            space.reserve(0x10_0000),
            Err("no free IOVA range of 0x100000 bytes in the device's valid ranges [1000..3000, 100000..200000]".into())
        );
    }

    #[test]
    fn aligns_an_unaligned_range_start() {
        let mut space = IovaSpace::new(&[0x1800..0x10000], 0x1000, 16);
        assert_eq!(space.reserve(0x1000), Ok(0x2000));
    }

    #[test]
    fn honours_the_mapping_limit() {
        let mut space = IovaSpace::new(&[0x1000..0x10_0000], 0x1000, 2);
        space.reserve(0x1000).unwrap();
        space.reserve(0x1000).unwrap();
        assert_eq!(space.reserve(0x1000), Err("the IOMMU allows at most 2 DMA mappings".into()));
    }

    #[test]
    fn never_overflows_at_the_top_of_the_space() {
        let mut space = IovaSpace::new(&[u64::MAX - 0x1fff..u64::MAX], 0x1000, 4);
        assert!(space.reserve(0x2000).is_err());
        let mut space = IovaSpace::new(&[0x1000..u64::MAX], 0x1000, 4);
        assert!(space.reserve(u64::MAX - 0x800).is_err());
    }
}
