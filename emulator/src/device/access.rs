//! Accesses of any width, split into the dwords they touch: registers are modelled as dwords,
//! and a byte, word, dword or wider access reaches them by one rule (cloud-hypervisor's
//! `write_config_register` byte/word/dword paths, folded into one). A read of a dword with side
//! effects (the POST semaphore, the doorbell) happens once per access that touches it, however
//! many of its bytes the access covers.

/// The part of an access that falls in one dword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lane {
    /// Offset of the dword (a multiple of 4).
    pub(crate) dword: u64,
    /// First byte of the dword the access covers (0..=3).
    first: usize,
    /// How many bytes of the dword it covers (1..=4).
    len: usize,
    /// Where those bytes sit in the caller's buffer.
    at: usize,
}

impl Lane {
    /// Bit mask of the covered bytes: 0xFF per byte, 0xFFFF_FFFF for a whole dword.
    pub(crate) fn mask(self) -> u32 {
        let bits = (self.len * 8) as u32;
        let ones = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
        ones << (self.first * 8)
    }

    /// Copies the covered bytes of `value` (little-endian) into their place in `data`.
    pub(crate) fn put(self, value: u32, data: &mut [u8]) {
        data[self.at..self.at + self.len].copy_from_slice(&value.to_le_bytes()[self.first..self.first + self.len]);
    }

    /// The covered bytes of `data` in their place in a dword (the other bytes 0).
    pub(crate) fn take(self, data: &[u8]) -> u32 {
        let mut bytes = [0u8; 4];
        bytes[self.first..self.first + self.len].copy_from_slice(&data[self.at..self.at + self.len]);
        u32::from_le_bytes(bytes)
    }
}

/// The dwords an access of `len` bytes at `off` touches, in address order. An access that would
/// run past the end of the address space stops there.
pub(crate) fn lanes(off: u64, len: usize) -> impl Iterator<Item = Lane> {
    let end = off.saturating_add(len as u64);
    let mut at = 0usize;
    let mut pos = off;
    std::iter::from_fn(move || {
        if pos >= end {
            return None;
        }
        let dword = pos & !3;
        let first = (pos - dword) as usize;
        let next = dword.saturating_add(4);
        let n = (next.min(end) - pos) as usize;
        let lane = Lane { dword, first, len: n, at };
        at += n;
        pos = next;
        Some(lane)
    })
}

/// True when an access of `len` bytes at `off` is one a bus delivers to a memory BAR of
/// `bar_len` bytes: 1, 2, 4 or 8 bytes, naturally aligned, inside the BAR.
pub(crate) fn bar_access_ok(bar_len: u64, off: u64, len: usize) -> bool {
    matches!(len, 1 | 2 | 4 | 8)
        && off.is_multiple_of(len as u64)
        && off.checked_add(len as u64).is_some_and(|e| e <= bar_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(off: u64, len: usize) -> Vec<(u64, u32)> {
        lanes(off, len).map(|l| (l.dword, l.mask())).collect()
    }

    #[test]
    fn aligned_accesses_touch_one_dword() {
        assert_eq!(all(0x40, 4), [(0x40, 0xFFFF_FFFF)]);
        assert_eq!(all(0x42, 2), [(0x40, 0xFFFF_0000)]);
        assert_eq!(all(0x43, 1), [(0x40, 0xFF00_0000)]);
    }

    #[test]
    fn unaligned_and_wide_accesses_split_per_dword() {
        assert_eq!(all(0x43, 2), [(0x40, 0xFF00_0000), (0x44, 0x0000_00FF)]);
        assert_eq!(all(0x10, 8), [(0x10, u32::MAX), (0x14, u32::MAX)]);
        assert_eq!(all(0x3, 6), [(0x0, 0xFF00_0000), (0x4, u32::MAX), (0x8, 0xFF)]);
        assert!(all(0x10, 0).is_empty());
        assert_eq!(all(u64::MAX - 1, 4), [(u64::MAX - 3, 0x00FF_0000)], "stops at the end of the address space");
    }

    #[test]
    fn bytes_go_to_and_come_from_their_lanes() {
        let mut data = [0u8; 3];
        for lane in lanes(0x43, 3) {
            lane.put(if lane.dword == 0x40 { 0xAA00_0000 } else { 0x0000_CCBB }, &mut data);
        }
        assert_eq!(data, [0xAA, 0xBB, 0xCC]);
        let taken: Vec<u32> = lanes(0x43, 3).map(|l| l.take(&data)).collect();
        assert_eq!(taken, [0xAA00_0000, 0x0000_CCBB]);
    }

    #[test]
    fn bar_accesses_are_naturally_aligned_and_inside() {
        assert!(bar_access_ok(0x1000, 0xFFC, 4));
        assert!(bar_access_ok(0x1000, 0xFF8, 8));
        assert!(!bar_access_ok(0x1000, 0x1000, 4));
        assert!(!bar_access_ok(0x1000, 0x5A, 4));
        assert!(!bar_access_ok(0x1000, 0x0, 3));
        assert!(!bar_access_ok(0x1000, u64::MAX - 3, 4));
    }
}
