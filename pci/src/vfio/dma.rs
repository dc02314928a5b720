//! DMA memory for a VFIO function: an anonymous mapping, locked in RAM, mapped into the IOMMU at a
//! free IOVA inside the device's valid ranges, copied in and out word by word with volatile
//! accesses, and removed from the IOMMU before it is freed.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use memmap2::{MmapMut, MmapRaw};
use pci_driver::backends::vfio::VfioPciDevice;
use pci_driver::device::PciDevice;
use pci_driver::regions::Permissions;

use super::iova::IovaSpace;
use crate::handoff::HandOff;
use crate::volatile_copy::{copy_in, copy_out};
use crate::{DmaBuffer, PciAddress, PciError, check_dma_range};

/// The soft RLIMIT_MEMLOCK, as text for an error message.
fn memlock_limit() -> String {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid, writable rlimit owned by this frame, as getrlimit(2) requires.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } != 0 {
        return "unknown".to_owned();
    }
    if limit.rlim_cur == libc::RLIM_INFINITY { "unlimited".to_owned() } else { format!("{} bytes", limit.rlim_cur) }
}

/// True for an error that means "over the locked-memory limit": mlock(2) says EAGAIN, ENOMEM or
/// EPERM; the VFIO map ioctl says ENOMEM, which pci-driver passes on only inside its message.
fn is_memlock_error(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM | libc::EPERM))
        || e.to_string().contains(&format!("(os error {})", libc::ENOMEM))
}

/// A DMA buffer of a [`VfioFunction`](super::VfioFunction).
///
/// **Not `Sync`.** [`DmaBuffer::write_at`] and [`DmaBuffer::read_at`] take `&self` and copy with
/// plain volatile word and byte accesses, which are not atomic: two threads writing (or one
/// writing, one reading) the same buffer at once would be a data race on the mapping. So the
/// buffer may move to another thread (`Send`) but is never shared between threads; every
/// access is from the one thread that holds it, as the mailbox driver does. (Atomics would buy
/// nothing: the device writes this memory too, and no atomic orders it against the host.)
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<oce_pci::VfioDma<'static>>();
/// ```
///
/// ```
/// fn moved_to_a_thread<T: Send>() {}
/// moved_to_a_thread::<oce_pci::VfioDma<'static>>();
/// ```
#[derive(Debug)]
pub struct VfioDma<'h> {
    address: PciAddress,
    device: Arc<VfioPciDevice>,
    space: Arc<Mutex<IovaSpace>>,
    /// The memory; `None` only while dropping.
    memory: Option<MmapRaw>,
    iova: u64,
    len: usize,
    mapped_len: usize,
    _handoff: PhantomData<&'h HandOff>,
    /// Makes the buffer `!Sync` (see the type's docs); `Cell<()>` is `Send`, so the buffer stays
    /// `Send`.
    _not_sync: PhantomData<Cell<()>>,
}

impl VfioDma<'_> {
    /// Allocates `len` bytes (rounded up to `align`), locks them and maps them for the device.
    pub(super) fn alloc(
        address: PciAddress,
        device: Arc<VfioPciDevice>,
        space: Arc<Mutex<IovaSpace>>,
        align: usize,
        len: usize,
    ) -> Result<Self, PciError> {
        let fail = |reason: String| PciError::DmaAlloc { len, reason };
        if len == 0 {
            return Err(fail("a DMA buffer cannot be empty".into()));
        }
        let mapped_len = len.checked_next_multiple_of(align.max(1)).ok_or_else(|| fail("too large".into()))?;
        let memory: MmapRaw = MmapMut::map_anon(mapped_len).map_err(|e| fail(e.to_string()))?.into();
        memory.lock().map_err(|e| {
            if is_memlock_error(&e) {
                PciError::Memlock { len: mapped_len, limit: memlock_limit() }
            } else {
                fail(format!("mlock: {e}"))
            }
        })?;
        let iova = space.lock().unwrap_or_else(PoisonError::into_inner).reserve(mapped_len as u64).map_err(fail)?;
        // SAFETY: `memory` is a live, locked anonymous mapping of `mapped_len` bytes that the
        // `VfioDma` built below owns; its `Drop` removes this IOVA range from the IOMMU before the
        // memory is unmapped, and leaks the memory instead if the removal fails. `iova` and
        // `mapped_len` are multiples of the IOMMU page size and inside a valid range (IovaSpace).
        let mapped = unsafe { device.iommu().map(iova, mapped_len, memory.as_ptr(), Permissions::ReadWrite) };
        if let Err(source) = mapped {
            space.lock().unwrap_or_else(PoisonError::into_inner).release(iova);
            return Err(if is_memlock_error(&source) {
                PciError::Memlock { len: mapped_len, limit: memlock_limit() }
            } else {
                PciError::DmaMap { address, iova, len: mapped_len, source }
            });
        }
        Ok(Self {
            address,
            device,
            space,
            memory: Some(memory),
            iova,
            len,
            mapped_len,
            _handoff: PhantomData,
            _not_sync: PhantomData,
        })
    }

    /// The buffer's first byte, or `None` while dropping.
    fn base(&self) -> Option<NonNull<u8>> {
        NonNull::new(self.memory.as_ref()?.as_mut_ptr())
    }
}

impl DmaBuffer for VfioDma<'_> {
    fn iova(&self) -> u64 {
        self.iova
    }

    fn len(&self) -> usize {
        self.len
    }

    fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError> {
        check_dma_range(off, src.len(), self.len)?;
        if let Some(base) = self.base() {
            // SAFETY: off + src.len() <= self.len (checked above) <= the length of the live
            // mapping `self.memory`, which `self` owns.
            unsafe { copy_in(base, off, src) };
        }
        Ok(())
    }

    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        check_dma_range(off, dst.len(), self.len)?;
        if let Some(base) = self.base() {
            // SAFETY: as in `write_at`.
            unsafe { copy_out(base, off, dst) };
        }
        Ok(())
    }
}

impl Drop for VfioDma<'_> {
    fn drop(&mut self) {
        match self.device.iommu().unmap(self.iova, self.mapped_len) {
            Ok(()) => {
                self.space.lock().unwrap_or_else(PoisonError::into_inner).release(self.iova);
                drop(self.memory.take());
            }
            Err(err) => {
                // The device may still reach this memory: never give it back to the allocator.
                std::mem::forget(self.memory.take());
                eprintln!(
                    "ocetool: warning: cannot remove IOVA {:#x} ({} bytes) of {} from the IOMMU ({err}); its memory is \
                     kept until exit",
                    self.iova, self.mapped_len, self.address
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_locked_memory_limit_errors() {
        for errno in [libc::EAGAIN, libc::ENOMEM, libc::EPERM] {
            assert!(is_memlock_error(&std::io::Error::from_raw_os_error(errno)), "{errno}");
        }
        // pci-driver wraps the map ioctl's error in a message of its own.
        let wrapped = std::io::Error::other(format!(
            "Failed to set up IOMMU mapping ...: {}",
            std::io::Error::from_raw_os_error(libc::ENOMEM)
        ));
        assert!(is_memlock_error(&wrapped));
        assert!(!is_memlock_error(&std::io::Error::from_raw_os_error(libc::EINVAL)));
    }

    #[test]
    fn the_memlock_message_says_what_to_do() {
        let err = PciError::Memlock { len: 8192, limit: "65536 bytes".into() };
        assert_eq!(
            err.to_string(),
            "cannot lock 8192 bytes of DMA memory in RAM: RLIMIT_MEMLOCK is 65536 bytes; raise it (ulimit -l, or \
             LimitMEMLOCK= in a systemd unit) or run as root"
        );
        assert!(!memlock_limit().is_empty());
    }
}
