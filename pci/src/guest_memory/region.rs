//! One region of the memory a vfio-user client shares by file descriptor, reached so that no
//! client can fault this process: mapped when the file can never shrink, copied through the file
//! otherwise.
//!
//! A `MAP_SHARED` mapping of a file raises SIGBUS on any access past the file's end, and the
//! client keeps the file: it can `ftruncate` it after the size was checked at DMA_MAP time. A
//! shared memory file sealed with `F_SEAL_SHRINK` (`fcntl(2)`, "File Seals") cannot be shrunk by
//! anyone, so a mapping of it checked once stays whole: that is QEMU's
//! `memory-backend-memfd` (its `seal` property is on by default: `F_SEAL_GROW | F_SEAL_SHRINK |
//! F_SEAL_SEAL`, QEMU `backends/hostmem-memfd.c`), the common case, at memory speed. Any other
//! file (an unsealed memfd, a file on tmpfs or a disk) is read with `pread(2)` and written with
//! `pwrite(2)` at the region's offset: a file that shrank reads short, which is a
//! [`PciError::GuestShrunk`] error, never a signal.
//!
//! What remains: a sealed memfd on hugetlbfs whose client punches a hole and leaves no free huge
//! page to fault back in raises SIGBUS on the next access (hugetlbfs has no `write(2)` to copy
//! through instead); the shrink seal holds, the page pool does not.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use super::GuestMapping;
use crate::{PciError, check_dma_range};

/// How a [`GuestRegion`] reaches the client's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A shared mapping of a file sealed against shrinking.
    Mapped,
    /// `pread` / `pwrite` on the file, which may shrink.
    FileIo,
}

#[derive(Debug)]
enum Backing {
    Mapped(GuestMapping),
    File { file: File, offset: u64 },
}

/// `len` bytes of a client's file at `offset`: `Send`, not `Sync` (as [`GuestMapping`]).
#[derive(Debug)]
pub struct GuestRegion {
    backing: Backing,
    len: u64,
    writable: bool,
}

/// True when `file` carries `F_SEAL_SHRINK`. A file that cannot be sealed (not a memfd) answers
/// `EINVAL`, which is "no seal".
fn sealed_against_shrinking(file: &File) -> bool {
    // SAFETY: F_GET_SEALS takes no argument and reads only the descriptor's seals; the descriptor
    // is open for the whole call (borrowed from `file`).
    let seals = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GET_SEALS) };
    seals >= 0 && seals & libc::F_SEAL_SHRINK != 0
}

impl GuestRegion {
    /// Opens `len` bytes of `file` at `offset`, read-only unless `writable`: mapped if the file
    /// is sealed against shrinking, else reached by file I/O (module docs). Refuses what
    /// [`GuestMapping::map`] refuses (not a regular file, shorter than `offset + len`).
    pub fn open(file: &File, offset: u64, len: u64, writable: bool) -> Result<Self, PciError> {
        if sealed_against_shrinking(file) {
            let map = GuestMapping::map(file, offset, len, writable)?;
            return Ok(Self { backing: Backing::Mapped(map), len, writable });
        }
        let fail = |reason: String| PciError::GuestMap { offset, len, reason };
        let meta = file.metadata().map_err(|e| fail(format!("fstat: {e}")))?;
        if !meta.file_type().is_file() {
            return Err(fail("not a regular file (a memfd or a file on a memory file system is)".into()));
        }
        let end = offset.checked_add(len).ok_or_else(|| fail("offset + length overflows".into()))?;
        if len == 0 || end > meta.len() {
            return Err(fail(format!("the file is {:#x} bytes", meta.len())));
        }
        usize::try_from(len).map_err(|_| fail("too large for this machine".into()))?;
        let own = file.try_clone().map_err(|e| fail(format!("dup: {e}")))?;
        Ok(Self { backing: Backing::File { file: own, offset }, len, writable })
    }

    /// How the memory is reached.
    pub fn access(&self) -> Access {
        match self.backing {
            Backing::Mapped(_) => Access::Mapped,
            Backing::File { .. } => Access::FileIo,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty region (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when the client shared the memory writable.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    fn range(&self, off: usize, n: usize) -> Result<(), PciError> {
        check_dma_range(off, n, usize::try_from(self.len).unwrap_or(usize::MAX))
    }

    fn shrunk(file: &File, at: u64, len: usize) -> PciError {
        let size = file.metadata().map_or(0, |m| m.len());
        PciError::GuestShrunk { at, len, size }
    }

    /// Copies `dst.len()` bytes at `off` out of the client's memory.
    pub fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        self.range(off, dst.len())?;
        match &self.backing {
            Backing::Mapped(m) => m.read_at(off, dst),
            Backing::File { file, offset } => {
                let at = offset + off as u64;
                file.read_exact_at(dst, at).map_err(|e| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => Self::shrunk(file, at, dst.len()),
                    _ => PciError::GuestIo { at, len: dst.len(), source: e },
                })
            }
        }
    }

    /// Copies `src` into the client's memory at `off`. A file that shrank below the bytes is
    /// not written (and so not grown back).
    pub fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError> {
        if !self.writable {
            return Err(PciError::GuestReadOnly);
        }
        self.range(off, src.len())?;
        match &self.backing {
            Backing::Mapped(m) => m.write_at(off, src),
            Backing::File { file, offset } => {
                let at = offset + off as u64;
                let size = file.metadata().map_err(|e| PciError::GuestIo { at, len: src.len(), source: e })?.len();
                if at + src.len() as u64 > size {
                    return Err(PciError::GuestShrunk { at, len: src.len(), size });
                }
                file.write_all_at(src, at).map_err(|e| PciError::GuestIo { at, len: src.len(), source: e })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::OwnedFd;

    use super::*;

    fn memfd(len: u64, seal: bool) -> File {
        let name = c"guest-region-test";
        let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
        // SAFETY: memfd_create with a NUL-terminated name; a non-negative return is a new
        // descriptor this test owns.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
        assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        let file = File::from(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        file.set_len(len).unwrap();
        if seal {
            // SAFETY: F_ADD_SEALS with an int argument on a descriptor this test owns.
            let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) };
            assert_eq!(rc, 0);
        }
        file
    }

    #[test]
    fn a_sealed_memfd_is_mapped_and_cannot_shrink() {
        let f = memfd(8192, true);
        let r = GuestRegion::open(&f, 4096, 4096, true).unwrap();
        assert_eq!(r.access(), Access::Mapped);
        r.write_at(8, b"sealed").unwrap();
        assert!(f.set_len(0).is_err(), "the shrink seal refuses ftruncate");
        let mut out = [0u8; 6];
        r.read_at(8, &mut out).unwrap();
        assert_eq!(&out, b"sealed");
    }

    #[test]
    fn an_unsealed_memfd_that_shrinks_reads_as_an_error_not_a_signal() {
        let f = memfd(3 * 4096, false);
        let r = GuestRegion::open(&f, 4096, 8192, true).unwrap();
        assert_eq!(r.access(), Access::FileIo);
        r.write_at(4090, b"across a page").unwrap();
        let mut out = [0u8; 13];
        r.read_at(4090, &mut out).unwrap();
        assert_eq!(&out, b"across a page");
        // The client truncates its file under the region.
        f.set_len(4096 + 100).unwrap();
        let err = r.read_at(4090, &mut out).unwrap_err();
        assert!(matches!(err, PciError::GuestShrunk { at: 8186, len: 13, size: 4196 }), "{err:?}");
        let err = r.write_at(4090, b"x").unwrap_err();
        assert!(matches!(err, PciError::GuestShrunk { .. }), "{err:?}");
        assert_eq!(f.metadata().unwrap().len(), 4196, "a refused write does not grow the file back");
        // Bytes still inside the file are reached.
        r.read_at(0, &mut out).unwrap();
        assert!(matches!(r.read_at(8190, &mut out), Err(PciError::DmaOutOfBounds { .. })));
    }

    #[test]
    fn regions_past_the_end_and_non_files_are_refused_on_both_paths() {
        for seal in [true, false] {
            let f = memfd(8192, seal);
            assert!(GuestRegion::open(&f, 4096, 8192, true).is_err());
            assert!(GuestRegion::open(&f, 0, 0, true).is_err());
            let ro = GuestRegion::open(&f, 0, 4096, false).unwrap();
            assert!(matches!(ro.write_at(0, b"x"), Err(PciError::GuestReadOnly)));
        }
        let dir = File::open(std::env::temp_dir()).unwrap();
        assert!(matches!(GuestRegion::open(&dir, 0, 4096, false), Err(PciError::GuestMap { .. })));
    }
}
