//! DMA memory for the sysfs backend: one huge page, locked and physically contiguous by
//! construction, whose physical address comes from `/proc/self/pagemap`; buffers are carved out
//! of it first-fit and copied in and out with volatile accesses.
//!
//! Why a huge page rather than ordinary pages checked for a contiguous run: the bootstrap mailbox
//! needs 272 bytes and a non-embedded command one SGE of up to 60 KiB (MANAGE_FAT RETRIEVE; 32 KiB
//! flash chunks, the 23 KiB GET_FUNC_CONFIG buffer), so some buffers must be contiguous beyond a
//! 4 KiB page. Ordinary pages can be made resident with `mlock`, but `mlock` does not stop the
//! kernel from *migrating* them (compaction moves unevictable pages unless
//! `vm.compact_unevictable_allowed` is 0), so a physical address read from pagemap could go stale
//! while the adapter still uses it. A hugetlb page is never swapped, compacted or split, and is
//! contiguous over its whole size; the price is that the administrator must reserve one
//! (`vm.nr_hugepages`), which ocetool checks and says how to do. ixy.rs and DPDK make the same
//! choice.

use std::cell::Cell;
use std::fs::File;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use super::pagemap::{BASE_PAGE, PagemapError, physical_run};
use crate::backend::SysfsBlocker;
use crate::handoff::HandOff;
use crate::host;
use crate::sysfs::Roots;
use crate::vfio::iova::IovaSpace;
use crate::volatile_copy::{copy_in, copy_out};
use crate::{DmaBuffer, PciAddress, PciError, check_dma_range};

/// The huge page size when /proc/meminfo does not say: x86-64's default, 2 MiB.
const DEFAULT_HUGE_PAGE: u64 = 2 << 20;

/// One mapped, locked huge page and its physical address.
#[derive(Debug)]
pub(super) struct HugePage {
    base: NonNull<u8>,
    len: usize,
    phys: u64,
}

impl HugePage {
    /// Maps one huge page of the default size, locks it, and finds its physical address.
    pub(super) fn map(address: PciAddress, roots: &Roots) -> Result<Self, PciError> {
        let pool = host::huge_pages(roots).ok().flatten();
        let size = pool.map_or(DEFAULT_HUGE_PAGE, |p| p.size);
        let len =
            usize::try_from(size).map_err(|_| PciError::DmaAlloc { len: 0, reason: "huge page too large".into() })?;
        let flags = libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | libc::MAP_POPULATE;
        // SAFETY: an anonymous mapping at an address of the kernel's choosing: it aliases nothing
        // in this process. The result is checked before use.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0) };
        if ptr == libc::MAP_FAILED {
            let err = std::io::Error::last_os_error();
            let blocker = match (err.raw_os_error(), pool) {
                (Some(libc::ENOMEM), Some(p)) => SysfsBlocker::NoFreeHugePage { size: p.size, total: p.total },
                (Some(libc::ENOMEM), None) => SysfsBlocker::NoFreeHugePage { size, total: 0 },
                (Some(libc::EINVAL), None) => SysfsBlocker::NoHugePageSupport,
                _ => return Err(PciError::DmaAlloc { len, reason: format!("mmap of a huge page: {err}") }),
            };
            return Err(PciError::SysfsBackend { address, blocker });
        }
        let base = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| PciError::DmaAlloc { len, reason: "mmap returned a null mapping".into() })?;
        // From here on, `page` owns the mapping and unmaps it on every return path.
        let mut page = Self { base, len, phys: 0 };
        // SAFETY: `base .. base + len` is the mapping made above, owned by `page`.
        if unsafe { libc::mlock(page.base.as_ptr().cast(), len) } != 0 {
            let err = std::io::Error::last_os_error();
            return Err(PciError::DmaAlloc { len, reason: format!("mlock of the huge page: {err}") });
        }
        let path = roots.proc.join("self/pagemap");
        let pagemap = File::open(&path).map_err(|source| PciError::Io { path: path.clone(), source })?;
        page.phys = physical_run(&pagemap, base.as_ptr() as u64, size).map_err(|e| match e {
            PagemapError::Hidden => PciError::SysfsBackend { address, blocker: SysfsBlocker::AddressesHidden },
            PagemapError::Io(source) => PciError::Io { path, source },
            PagemapError::NotPresent { vaddr } => {
                PciError::DmaAlloc { len, reason: format!("the huge page is not resident at {vaddr:#x}") }
            }
            PagemapError::NotContiguous { at } => PciError::DmaAlloc {
                len,
                reason: format!("the huge page is not physically contiguous (breaks at {at:#x})"),
            },
        })?;
        Ok(page)
    }

    /// Its physical (bus) address.
    pub(super) fn phys(&self) -> u64 {
        self.phys
    }

    /// Its length in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for HugePage {
    fn drop(&mut self) {
        // SAFETY: `base .. base + len` is the mapping `map` made and `self` owns; nothing refers
        // to it any more (every buffer holds an `Arc` of this page, so they are all gone). A
        // failed munmap leaves the mapping in place, which is harmless.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

// SAFETY: the page is plain memory reached only through volatile copies of `SysfsDma`, each from
// the one thread that holds that buffer; nothing in it is tied to the creating thread.
unsafe impl Send for HugePage {}
// SAFETY: as above; buffers never overlap (the arena hands out disjoint ranges), so two threads
// with two buffers never touch the same bytes.
unsafe impl Sync for HugePage {}

/// The huge page and the free space in it, shared by a function's buffers.
#[derive(Debug, Clone)]
pub(super) struct DmaArena {
    page: Arc<HugePage>,
    space: Arc<Mutex<IovaSpace>>,
}

impl DmaArena {
    /// An arena over `page`, handing out page-aligned ranges.
    pub(super) fn new(page: HugePage) -> Self {
        let range = page.phys()..page.phys() + page.len() as u64;
        let space = IovaSpace::new(std::slice::from_ref(&range), BASE_PAGE, u32::MAX);
        Self { page: Arc::new(page), space: Arc::new(Mutex::new(space)) }
    }

    /// The bus address of the huge page.
    #[cfg(test)]
    pub(super) fn base(&self) -> u64 {
        self.page.phys()
    }

    /// A zeroed buffer of `len` bytes.
    pub(super) fn alloc<'h>(&self, len: usize) -> Result<SysfsDma<'h>, PciError> {
        if len == 0 {
            return Err(PciError::DmaAlloc { len, reason: "a DMA buffer cannot be empty".into() });
        }
        let rounded = (len as u64).next_multiple_of(BASE_PAGE);
        let bus = self.space.lock().unwrap_or_else(PoisonError::into_inner).reserve(rounded).map_err(|_| {
            PciError::DmaAlloc {
                len,
                reason: format!("the {}-byte huge page that holds ocetool's DMA memory is full", self.page.len()),
            }
        })?;
        let buffer = SysfsDma {
            arena: self.clone(),
            bus,
            off: (bus - self.page.phys()) as usize,
            len,
            _handoff: PhantomData,
            _not_sync: PhantomData,
        };
        // A range given back by an earlier buffer still holds its bytes.
        buffer.zero(0, len)?;
        Ok(buffer)
    }
}

/// A DMA buffer of a [`SysfsFunction`](super::SysfsFunction): a range of its huge page.
///
/// **Not `Sync`**, for the reason [`crate::VfioDma`] gives: its copies are plain volatile accesses.
#[derive(Debug)]
pub struct SysfsDma<'h> {
    arena: DmaArena,
    /// The bus (physical) address of byte 0.
    bus: u64,
    /// Offset of byte 0 in the huge page.
    off: usize,
    len: usize,
    _handoff: PhantomData<&'h HandOff>,
    _not_sync: PhantomData<Cell<()>>,
}

impl DmaBuffer for SysfsDma<'_> {
    fn iova(&self) -> u64 {
        self.bus
    }

    fn len(&self) -> usize {
        self.len
    }

    fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError> {
        check_dma_range(off, src.len(), self.len)?;
        // SAFETY: self.off + off + src.len() <= self.off + self.len, which lies inside the huge
        // page (the arena reserved self.off .. self.off + len in it); `self.arena` keeps the page
        // mapped for as long as this buffer lives.
        unsafe { copy_in(self.arena.page.base, self.off + off, src) };
        Ok(())
    }

    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        check_dma_range(off, dst.len(), self.len)?;
        // SAFETY: as in `write_at`.
        unsafe { copy_out(self.arena.page.base, self.off + off, dst) };
        Ok(())
    }
}

impl Drop for SysfsDma<'_> {
    fn drop(&mut self) {
        self.arena.space.lock().unwrap_or_else(PoisonError::into_inner).release(self.bus);
    }
}
