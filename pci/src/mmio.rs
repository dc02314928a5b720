//! 32-bit register access to a BAR mapped into this process: bounds- and alignment-checked,
//! volatile, little-endian, and never through a Rust reference (style.md rule 3). One home for
//! the register loads and stores of [`crate::vfio::VfioBar`] and [`crate::sysfs_backend::SysfsBar`].

use std::ptr::NonNull;

use volatile::VolatilePtr;

/// A mapped window of device registers: `len` bytes from `base`.
#[derive(Debug)]
pub(crate) struct MmioWindow {
    base: NonNull<u8>,
    len: u64,
}

impl MmioWindow {
    /// A window over `len` bytes at `base`.
    ///
    /// # Safety
    ///
    /// `base .. base + len` must be one live mapping of device memory, page-aligned and readable
    /// for as long as the window exists (the caller keeps the mapping alive longer), and writable
    /// if the caller ever lets [`MmioWindow::write32`] be called.
    pub(crate) unsafe fn new(base: NonNull<u8>, len: u64) -> Self {
        Self { base, len }
    }

    /// The window's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The register at `off`, if it is a whole, 4-aligned register inside the window.
    fn register(&self, off: u32) -> Option<NonNull<u32>> {
        if !off.is_multiple_of(4) || u64::from(off) + 4 > self.len {
            return None;
        }
        let off = usize::try_from(off).ok()?;
        // SAFETY: off + 4 <= len (checked above), so the result stays inside the mapping `new`'s
        // contract describes.
        Some(unsafe { self.base.add(off) }.cast::<u32>())
    }

    /// Reads the register at `off`; `None` outside the window or unaligned.
    pub(crate) fn read32(&self, off: u32) -> Option<u32> {
        let reg = self.register(off)?;
        // SAFETY: `register` checked the 4 bytes lie inside the live, readable mapping, and the
        // base is page-aligned, so the register is 4-aligned. Volatile: MMIO reads have effects.
        let value = unsafe { VolatilePtr::new_read_only(reg) }.read();
        Some(u32::from_le(value))
    }

    /// Writes the register at `off`; false (nothing written) outside the window or unaligned.
    pub(crate) fn write32(&self, off: u32, value: u32) -> bool {
        let Some(reg) = self.register(off) else { return false };
        // SAFETY: as in `read32`; the caller calls this only on a writable mapping (`new`'s
        // contract).
        unsafe { VolatilePtr::new(reg) }.write(value.to_le());
        true
    }
}

// SAFETY: the window is a raw pointer into a device mapping reached only through volatile
// register accesses; nothing in it is tied to the thread that created it.
unsafe impl Send for MmioWindow {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_bounds_and_alignment() {
        let mut memory = [0u32; 4];
        let base = NonNull::new(memory.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: 16 bytes of a live, 4-aligned allocation that outlives the window (plain memory
        // stands in for a BAR: the window only needs a mapping it may read and write).
        let window = unsafe { MmioWindow::new(base, 16) };
        assert!(window.write32(12, 0xdead_beef));
        assert_eq!(window.read32(12), Some(0xdead_beef));
        assert!(!window.write32(16, 1));
        assert_eq!(window.read32(14), None);
        assert_eq!(window.read32(u32::MAX - 1), None);
        assert_eq!(window.len(), 16);
        // SAFETY: the window is not used again; the read is of the plain memory behind it.
        let last = unsafe { base.cast::<u32>().add(3).read() };
        assert_eq!(last, 0xdead_beef_u32.to_le());
    }
}
