//! The MSI-X table and Pending Bit Array as the device keeps them when it owns them
//! ([`super::TableOwner::Device`]; PCI Local Bus 3.0 §6.8.2.6–§6.8.2.9).
//!
//! Each 16-byte entry is four dwords: Message Address (dword aligned, so bits 1:0 read 0),
//! Message Upper Address, Message Data, Vector Control (bit 0 = masked). Every vector comes out
//! of reset masked. A vector raised while masked (by its own bit or the capability's Function
//! Mask) sets its pending bit; the message goes out, and the bit clears, once nothing masks it.
//! What a message is (its address and data) is the transport's business: the device names the
//! vector ([`super::Interrupt::signal`]).

/// Vector Control bit 0: the vector is masked.
const VECTOR_MASKED: u32 = 1;
/// Dwords per table entry.
const ENTRY_DWORDS: usize = 4;
/// Software-writable bits of each dword of an entry.
const WRITABLE: [u32; ENTRY_DWORDS] = [!0b11, u32::MAX, u32::MAX, VECTOR_MASKED];

/// The table and PBA of one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MsixTable {
    entries: Vec<u32>,
    pending: Vec<u64>,
}

impl MsixTable {
    /// The reset state of a table of `vectors` entries: every vector masked, nothing pending.
    pub(super) fn new(vectors: u16) -> Self {
        let entries =
            (0..usize::from(vectors) * ENTRY_DWORDS).map(|i| if i % 4 == 3 { VECTOR_MASKED } else { 0 }).collect();
        Self { entries, pending: vec![0; usize::from(vectors).div_ceil(64)] }
    }

    fn vectors(&self) -> u16 {
        (self.entries.len() / ENTRY_DWORDS) as u16
    }

    /// The table dword at byte offset `off` (dword aligned); all ones past the table.
    pub(super) fn read(&self, off: u32) -> u32 {
        self.entries.get(off as usize / 4).copied().unwrap_or(u32::MAX)
    }

    /// Writes the bytes `lanes` selects of `value` to the table dword at `off`, writable bits
    /// only.
    pub(super) fn write(&mut self, off: u32, value: u32, lanes: u32) {
        let i = off as usize / 4;
        if let Some(dword) = self.entries.get_mut(i) {
            let mask = WRITABLE[i % ENTRY_DWORDS] & lanes;
            *dword = (*dword & !mask) | (value & mask);
        }
    }

    /// The PBA dword at byte offset `off`: bit n of dword k is vector 32·k + n.
    pub(super) fn read_pba(&self, off: u32) -> u32 {
        let Some(&qword) = self.pending.get(off as usize / 8) else { return 0 };
        if off.is_multiple_of(8) { qword as u32 } else { (qword >> 32) as u32 }
    }

    /// True when `vector`'s own mask bit is set.
    pub(super) fn is_masked(&self, vector: u16) -> bool {
        self.entries.get(usize::from(vector) * ENTRY_DWORDS + 3).is_some_and(|&c| c & VECTOR_MASKED != 0)
    }

    /// Marks `vector` pending.
    pub(super) fn set_pending(&mut self, vector: u16) {
        if let Some(qword) = self.pending.get_mut(usize::from(vector) / 64) {
            *qword |= 1 << (vector % 64);
        }
    }

    /// The pending vectors whose own mask is clear, in order; their pending bits are cleared
    /// (the caller sends them).
    pub(super) fn take_unmasked_pending(&mut self) -> Vec<u16> {
        let ready: Vec<u16> = (0..self.vectors())
            .filter(|&v| self.pending[usize::from(v) / 64] & (1 << (v % 64)) != 0 && !self.is_masked(v))
            .collect();
        for &v in &ready {
            self.pending[usize::from(v) / 64] &= !(1 << (v % 64));
        }
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_state_masks_every_vector() {
        let t = MsixTable::new(32);
        assert!((0..32).all(|v| t.is_masked(v)));
        assert_eq!((t.read(0), t.read(12), t.read(0x1FC), t.read(0x200)), (0, 1, 1, u32::MAX));
        assert_eq!((t.read_pba(0), t.read_pba(4), t.read_pba(8)), (0, 0, 0));
    }

    #[test]
    fn entries_keep_only_their_writable_bits() {
        let mut t = MsixTable::new(32);
        for off in [0x10, 0x14, 0x18, 0x1C] {
            t.write(off, u32::MAX, u32::MAX);
        }
        assert_eq!([t.read(0x10), t.read(0x14), t.read(0x18), t.read(0x1C)], [!0b11, u32::MAX, u32::MAX, 1]);
        t.write(0x1C, 0, 0x0000_FF00);
        assert!(t.is_masked(1), "a write of another byte leaves the mask bit alone");
        t.write(0x1C, 0, 0xFF);
        assert!(!t.is_masked(1));
    }

    #[test]
    fn pending_bits_show_in_the_pba_until_taken_unmasked() {
        let mut t = MsixTable::new(32);
        t.set_pending(3);
        t.set_pending(31);
        assert_eq!(t.read_pba(0), (1 << 3) | (1 << 31));
        assert!(t.take_unmasked_pending().is_empty(), "both still masked");
        t.write(3 * 16 + 12, 0, u32::MAX);
        assert_eq!(t.take_unmasked_pending(), [3]);
        assert_eq!(t.read_pba(0), 1 << 31);
    }
}
