//! Byte copies into and out of memory that another party may change at any moment (a DMA buffer
//! the device writes, guest memory a virtual machine shares): volatile accesses, 32 bits wide
//! where the address is aligned, bytes elsewhere, and never a Rust reference into the memory
//! (style.md rule 3). One home for the copy loops of [`crate::vfio::VfioDma`] and
//! [`crate::guest_memory::GuestMapping`].

use std::ptr::NonNull;
use std::sync::atomic::{Ordering, fence};

use volatile::VolatilePtr;

/// Copies `src` to the `src.len()` bytes at `base + off`, then fences so the other party sees
/// the bytes before anything the caller does next (a doorbell write, an interrupt).
///
/// # Safety
///
/// `base .. base + off + src.len()` must lie inside one live, writable mapping for the whole call.
pub(crate) unsafe fn copy_in(base: NonNull<u8>, off: usize, src: &[u8]) {
    let mut i = 0;
    while i < src.len() {
        // SAFETY: off + i < off + src.len(), inside the mapping (the caller's contract).
        let at = unsafe { base.add(off + i) };
        match src.get(i..i + 4) {
            Some(&[a, b, c, d]) if (at.as_ptr() as usize).is_multiple_of(4) => {
                // SAFETY: 4-aligned, and off + i + 4 <= off + src.len(): inside the mapping.
                unsafe { VolatilePtr::new(at.cast::<u32>()) }.write(u32::from_ne_bytes([a, b, c, d]));
                i += 4;
            }
            _ => {
                // SAFETY: one byte inside the mapping.
                unsafe { VolatilePtr::new(at) }.write(src[i]);
                i += 1;
            }
        }
    }
    fence(Ordering::SeqCst);
}

/// Copies the `dst.len()` bytes at `base + off` into `dst`, after a fence so nothing read here
/// is satisfied before the caller's earlier checks (a completion's valid bit).
///
/// # Safety
///
/// `base .. base + off + dst.len()` must lie inside one live, readable mapping for the whole call.
pub(crate) unsafe fn copy_out(base: NonNull<u8>, off: usize, dst: &mut [u8]) {
    fence(Ordering::SeqCst);
    let mut i = 0;
    while i < dst.len() {
        // SAFETY: off + i < off + dst.len(), inside the mapping (the caller's contract).
        let at = unsafe { base.add(off + i) };
        if (at.as_ptr() as usize).is_multiple_of(4) && dst.len() - i >= 4 {
            // SAFETY: 4-aligned, and off + i + 4 <= off + dst.len(): inside the mapping.
            let word = unsafe { VolatilePtr::new_read_only(at.cast::<u32>()) }.read();
            dst[i..i + 4].copy_from_slice(&word.to_ne_bytes());
            i += 4;
        } else {
            // SAFETY: one byte inside the mapping.
            dst[i] = unsafe { VolatilePtr::new_read_only(at) }.read();
            i += 1;
        }
    }
}
