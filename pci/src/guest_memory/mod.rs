//! Guest memory shared by a vfio-user client (QEMU's `DMA_MAP` with a file descriptor): a
//! `MAP_SHARED` mapping of the client's file at the offset it names, reached only through
//! bounds-checked volatile copies, so the emulated device reads and writes a guest's RAM the way
//! a bus-master reads and writes a host's.
//!
//! The trust model is the one of vfio-user itself (QEMU's `docs/interop/vfio-user.rst`, "Client
//! memory access"): the client is the VMM that owns the guest and chose to share the file. The
//! mapping is checked against the file's size when it is made; a file that shrinks afterwards
//! would make an access through the mapping fault (SIGBUS). So the server does not map a client's
//! file with [`GuestMapping`] directly but through [`GuestRegion`], which maps only files sealed
//! against shrinking and copies through any other file with `pread` / `pwrite`
//! ([`region`]'s docs). [`GuestMapping`] alone is for memory this process's own side keeps (the
//! test client's DMA buffers).
//!
//! # One thread at a time
//!
//! A [`GuestMapping`] is `Send` but **not `Sync`**, for the reason [`crate::VfioDma`] is not:
//! its copies are plain volatile word and byte accesses through `&self`, and two threads of this
//! process copying into (or one into, one out of) the same bytes at once would be a data race.
//! The owner shares it between threads behind a lock (the vfio-user server keeps its mappings in
//! one `Mutex`), so at most one thread of the server touches guest memory at any moment. The
//! guest itself writes the same memory concurrently, from another process (the VMM's vCPUs): that
//! is the bus-master situation of every device, outside this process's memory model, and why
//! every access is volatile and no reference into the memory is ever made. Atomic views would
//! not buy more: the guest's accesses are not atomic with ours either, and atomics of mixed sizes
//! on the same bytes (a word copy here, a byte copy there) are themselves not allowed to race.
//!
//! ```compile_fail
//! fn shared_between_threads<T: Sync>() {}
//! shared_between_threads::<oce_pci::guest_memory::GuestMapping>();
//! ```
//!
//! ```
//! fn moved_to_a_thread<T: Send>() {}
//! moved_to_a_thread::<oce_pci::guest_memory::GuestMapping>();
//! ```

use std::cell::Cell;
use std::fs::File;
use std::marker::PhantomData;
use std::ptr::NonNull;

use memmap2::{MmapOptions, MmapRaw};

pub mod region;
pub use region::{Access, GuestRegion};

use crate::volatile_copy::{copy_in, copy_out};
use crate::{PciError, check_dma_range};

/// One shared mapping of guest memory: `Send`, not `Sync` (see the module docs).
#[derive(Debug)]
pub struct GuestMapping {
    map: MmapRaw,
    writable: bool,
    /// Makes the mapping `!Sync`; `Cell<()>` is `Send`, so the mapping stays `Send`.
    _not_sync: PhantomData<Cell<()>>,
}

impl GuestMapping {
    /// Maps `len` bytes of `file` at `offset`, read-only unless `writable`.
    ///
    /// Refuses a file that is not a regular file (a memfd is one) or that is shorter than
    /// `offset + len`: an access past its end would fault.
    pub fn map(file: &File, offset: u64, len: u64, writable: bool) -> Result<Self, PciError> {
        let fail = |reason: String| PciError::GuestMap { offset, len, reason };
        let meta = file.metadata().map_err(|e| fail(format!("fstat: {e}")))?;
        if !meta.file_type().is_file() {
            return Err(fail("not a regular file (a memfd or a file on a memory file system is)".into()));
        }
        let end = offset.checked_add(len).ok_or_else(|| fail("offset + length overflows".into()))?;
        if len == 0 || end > meta.len() {
            return Err(fail(format!("the file is {:#x} bytes", meta.len())));
        }
        let size = usize::try_from(len).map_err(|_| fail("too large for this machine".into()))?;
        let mut options = MmapOptions::new();
        options.offset(offset).len(size);
        let map = if writable { options.map_raw(file) } else { options.map_raw_read_only(file) }
            .map_err(|e| fail(format!("mmap: {e}")))?;
        Ok(Self { map, writable, _not_sync: PhantomData })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True for an empty mapping (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// True when the client shared the memory writable.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    fn base(&self) -> Option<NonNull<u8>> {
        NonNull::new(self.map.as_mut_ptr())
    }

    /// Copies `dst.len()` bytes at `off` out of guest memory.
    pub fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        check_dma_range(off, dst.len(), self.map.len())?;
        if let Some(base) = self.base() {
            // SAFETY: off + dst.len() <= the length of `self.map` (checked above), a live mapping
            // owned by `self`, readable (read-only or read-write), of a file at least that long
            // (checked in `map`). No other thread of this process copies through this mapping
            // now: it is `!Sync`, so `&self` is not shared between threads.
            unsafe { copy_out(base, off, dst) };
        }
        Ok(())
    }

    /// Copies `src` into guest memory at `off`.
    pub fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError> {
        if !self.writable {
            return Err(PciError::GuestReadOnly);
        }
        check_dma_range(off, src.len(), self.map.len())?;
        if let Some(base) = self.base() {
            // SAFETY: as in `read_at` (bounds, liveness, one thread at a time); the mapping is
            // writable (checked above: it was made with `map_raw`, PROT_READ | PROT_WRITE,
            // MAP_SHARED).
            unsafe { copy_in(base, off, src) };
        }
        Ok(())
    }
}

// SAFETY: the mapping is plain shared memory reached only through volatile copies; nothing in
// `GuestMapping` is tied to the creating thread, so it may move to another one. It is not `Sync`
// (the `_not_sync` marker): copies from two threads at once would race (module docs).
unsafe impl Send for GuestMapping {}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file_of(len: usize) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![0u8; len]).unwrap();
        f
    }

    #[test]
    fn copies_both_ways_at_an_unaligned_file_offset() {
        let f = file_of(3 * 4096);
        let a = GuestMapping::map(&f, 4096 + 12, 100, true).unwrap();
        let b = GuestMapping::map(&f, 4096, 4096, false).unwrap();
        a.write_at(1, b"guest memory!").unwrap();
        let mut out = [0u8; 13];
        b.read_at(13, &mut out).unwrap();
        assert_eq!(&out, b"guest memory!");
        assert!(matches!(b.write_at(0, b"x"), Err(PciError::GuestReadOnly)));
        assert!(matches!(a.read_at(90, &mut out), Err(PciError::DmaOutOfBounds { .. })));
    }

    #[test]
    fn refuses_ranges_past_the_end_of_the_file_and_non_files() {
        let f = file_of(8192);
        assert!(GuestMapping::map(&f, 4096, 8192, true).is_err());
        assert!(GuestMapping::map(&f, u64::MAX - 1, 4, true).is_err());
        assert!(GuestMapping::map(&f, 0, 0, true).is_err());
        let dir = File::open(std::env::temp_dir()).unwrap();
        assert!(matches!(GuestMapping::map(&dir, 0, 4096, false), Err(PciError::GuestMap { .. })));
    }
}
