//! Memory-mapped files behind safe interfaces: read-only maps of firmware images, and the shared
//! writable map that backs the emulator's flash.
//!
//! Mapping a file is `unsafe` in Rust because another process could change the file while a slice
//! of it is alive. ocetool's invariants, stated once here:
//!
//! - a [`ReadOnlyMap`] is of a file ocetool never writes; the bytes are treated as untrusted input
//!   by every parser, so a concurrent change can produce wrong results but no memory unsafety
//!   beyond what any program mapping a file accepts (the same contract as `ripgrep`, `git`);
//! - a [`SharedFileMap`] is of the emulator's `flash.bin`, which only ocetool writes, and only while
//!   holding the per-device lock (design.md §4), so no two processes write it at once.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::{PciError, check_dma_range};

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PciError + '_ {
    move |source| PciError::Io { path: path.to_path_buf(), source }
}

/// Opens `path` read-only and checks that it is a regular file before anything reads it.
///
/// The open is non-blocking (`O_NONBLOCK`), so a named pipe with no writer never hangs the caller
/// in `open(2)`; the file type comes from the open descriptor (`fstat`), so what is checked is
/// what is read. A directory, FIFO, device node or socket is [`PciError::NotAFile`], naming what it
/// is. `O_NONBLOCK` has no effect on reads of a regular file.
pub fn open_regular(path: &Path) -> Result<File, PciError> {
    open_regular_with(path, OpenOptions::new().read(true), 0)
}

/// [`open_regular`] with the caller's options and extra `open(2)` flags (e.g. read-write, create
/// and `O_NOFOLLOW` for a lock file in a world-writable directory).
pub fn open_regular_with(path: &Path, options: &mut OpenOptions, flags: libc::c_int) -> Result<File, PciError> {
    let file = options.custom_flags(libc::O_NONBLOCK | flags).open(path).map_err(io_err(path))?;
    let file_type = file.metadata().map_err(io_err(path))?.file_type();
    let kind = if file_type.is_file() {
        return Ok(file);
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a named pipe (FIFO)"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(PciError::NotAFile { path: path.to_path_buf(), kind })
}

/// A read-only map of a whole file. An empty file maps to an empty slice.
#[derive(Debug)]
pub struct ReadOnlyMap {
    map: Option<memmap2::Mmap>,
    path: PathBuf,
}

impl ReadOnlyMap {
    /// Maps `path` read-only; anything but a regular file is refused ([`open_regular`]).
    pub fn open(path: &Path) -> Result<Self, PciError> {
        let file = open_regular(path)?;
        let len = file.metadata().map_err(io_err(path))?.len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: the file is opened read-only and ocetool never writes it; see the module
            // docs for the contract on concurrent modification by other processes.
            Some(unsafe { memmap2::Mmap::map(&file) }.map_err(io_err(path))?)
        };
        Ok(Self { map, path: path.to_path_buf() })
    }

    /// The file's bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// The path that was mapped.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A shared, writable map of a fixed-size file (the emulator's flash).
#[derive(Debug)]
pub struct SharedFileMap {
    map: memmap2::MmapMut,
    path: PathBuf,
}

impl SharedFileMap {
    /// Opens `path`, which must be a regular file (not reached through a symbolic link at its
    /// last component: [`crate::trust::open_no_follow`]) exactly `len` bytes long, and maps it
    /// shared.
    pub fn open(path: &Path, len: u64) -> Result<Self, PciError> {
        let file = crate::trust::open_no_follow(path, OpenOptions::new().read(true).write(true))?;
        Self::map(&file, path, len)
    }

    /// Maps `file`, open read-write at `path` and exactly `len` bytes long, shared.
    pub fn map(file: &File, path: &Path, len: u64) -> Result<Self, PciError> {
        let actual = file.metadata().map_err(io_err(path))?.len();
        if actual != len || len == 0 {
            return Err(PciError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("file is {actual} bytes, expected {len}"),
                ),
            });
        }
        // SAFETY: only ocetool writes this file, and only while it holds the device lock (module
        // docs); the map lives as long as `self`, and every access below is bounds-checked.
        let map = unsafe { memmap2::MmapMut::map_mut(file) }.map_err(io_err(path))?;
        Ok(Self { map, path: path.to_path_buf() })
    }

    /// Creates `path` as `len` zero bytes and maps it. Whatever is at `path` already — a file, or
    /// a symbolic link to anywhere — makes it fail (`O_CREAT | O_EXCL | O_NOFOLLOW`).
    pub fn create(path: &Path, len: u64) -> Result<Self, PciError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(io_err(path))?;
        file.set_len(len).map_err(io_err(path))?;
        Self::map(&file, path, len)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True for an empty map (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The whole map, read-only.
    pub fn as_slice(&self) -> &[u8] {
        &self.map
    }

    /// Copies `len` bytes at `off` out of the map.
    pub fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        check_dma_range(off, dst.len(), self.map.len())?;
        dst.copy_from_slice(&self.map[off..off + dst.len()]);
        Ok(())
    }

    /// Copies `src` into the map at `off`.
    pub fn write_at(&mut self, off: usize, src: &[u8]) -> Result<(), PciError> {
        check_dma_range(off, src.len(), self.map.len())?;
        self.map[off..off + src.len()].copy_from_slice(src);
        Ok(())
    }

    /// Writes dirty pages of `off..off + len` back to the file and waits for the disk.
    pub fn flush_range(&self, off: usize, len: usize) -> Result<(), PciError> {
        check_dma_range(off, len, self.map.len())?;
        self.map.flush_range(off, len).map_err(io_err(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        // A FIFO with no writer: refused at once instead of blocking in open(2).
        let err = open_regular(&fifo).unwrap_err();
        assert!(matches!(err, PciError::NotAFile { kind: "a named pipe (FIFO)", .. }), "{err}");
        assert!(err.to_string().ends_with("is a named pipe (FIFO), not a regular file"), "{err}");
        let err = ReadOnlyMap::open(dir.path()).unwrap_err();
        assert!(matches!(err, PciError::NotAFile { kind: "a directory", .. }), "{err}");
        let err = ReadOnlyMap::open(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(err, PciError::NotAFile { kind: "a character device", .. }), "{err}");
        let file = dir.path().join("f");
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(ReadOnlyMap::open(&file).unwrap().as_slice(), b"abc");
    }

    #[test]
    fn read_only_map_of_empty_and_small_files() {
        let dir = std::env::temp_dir().join(format!("oce-pci-mmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert_eq!(ReadOnlyMap::open(&empty).unwrap().as_slice(), b"");
        let small = dir.join("small");
        std::fs::write(&small, b"hello").unwrap();
        assert_eq!(ReadOnlyMap::open(&small).unwrap().as_slice(), b"hello");
        assert!(matches!(ReadOnlyMap::open(&dir.join("missing")), Err(PciError::Io { .. })));

        let flash = dir.join("flash");
        let mut map = SharedFileMap::create(&flash, 4096).unwrap();
        map.write_at(4090, b"abcdef").unwrap();
        assert!(map.write_at(4091, b"abcdef").is_err());
        map.flush_range(0, 4096).unwrap();
        drop(map);
        assert_eq!(&std::fs::read(&flash).unwrap()[4090..], b"abcdef");
        assert!(SharedFileMap::open(&flash, 8192).is_err());
        assert!(SharedFileMap::create(&flash, 4096).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
