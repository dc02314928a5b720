//! The emulated flash: `flash.bin` in the state directory, 16 MiB, memory-mapped, holding the
//! flash address space (design.md §6). The emulator finds its own firmware through the flash
//! directory on it, with `oce-firmware`'s directory parser and CRC model.
//!
//! The directory's location is cached: a lookup re-parses the 2240 bytes at the cached offset
//! (cheap, and it notices a directory that was overwritten), a commit re-scans only the range it
//! wrote, and only POST or a lost directory scans the whole flash. WRITE_FLASHROM's staging is
//! in [`staging`].

mod staging;

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use oce_firmware::crc;
use oce_firmware::dir::{
    COOKIE_CONTIGUOUS, COOKIE_SPLIT, CookieForm, DirectoryLayout, FlashDirectory, FoundDirectory, ImageType, SCAN_STEP,
    SectionEntry,
};
use oce_pci::mmap::SharedFileMap;

pub(crate) use staging::{Chunk, Staging};

use crate::assumptions::FLASH_LEN;
use crate::error::{EmulatorError, io_err};
use crate::events::BootOutcome;
use crate::firmware::state::state_file_error;

/// What POST found on flash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BootCheck {
    /// Which section boots.
    pub(crate) outcome: BootOutcome,
    /// `ver_data` of the section that boots.
    pub(crate) version: Option<String>,
    /// Where the directory was found.
    pub(crate) directory_offset: Option<u64>,
}

/// What the flash is known to hold as its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DirectoryCache {
    /// Not looked for yet (or lost): the next lookup scans.
    Unknown,
    /// The first cookie on flash is at this offset.
    At(usize),
    /// A scan found no cookie, and nothing written since holds one.
    Absent,
}

/// The flash file: read through a shared map, written with positioned writes (which cost no
/// page fault per page, unlike stores into the map), and synced with fdatasync only under
/// [`FlashDurability::Synced`]. Both go through the same page cache, so the map sees every write
/// at once.
#[derive(Debug)]
pub(crate) struct Flash {
    map: SharedFileMap,
    file: File,
    path: PathBuf,
    directory: Cell<DirectoryCache>,
    pub(crate) durability: FlashDurability,
}

/// How far a committed section has gone before WRITE_FLASHROM FLASH answers success.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
///
/// The default is [`FlashDurability::PageCache`]: the emulated adapter's flash must survive
/// every ocetool process that ends, killed or not, and the page cache gives that; a crash of the
/// host OS is outside what the emulator models (the state JSON, which is small, is still
/// replaced with write, fsync, rename). Syncing each committed section would halve the flash
/// throughput on a disk-backed state directory for no property the model promises.
pub enum FlashDurability {
    /// Written to flash.bin and synced to disk (fdatasync): it also survives a crash of the host
    /// OS.
    Synced,
    /// Written to flash.bin (the OS page cache): it survives the process being killed, not a
    /// crash of the host OS.
    #[default]
    PageCache,
}

impl Flash {
    /// Maps an existing flash file, which must be a regular file (not reached through a symbolic
    /// link) of exactly [`FLASH_LEN`] bytes. `hint` is where the directory was last seen (checked
    /// at the first lookup).
    pub(crate) fn open(path: &Path, hint: Option<u64>) -> Result<Self, EmulatorError> {
        let file = oce_pci::trust::open_no_follow(path, OpenOptions::new().read(true).write(true))
            .map_err(|e| state_file_error(path, e))?;
        let len = file.metadata().map_err(io_err(path))?.len();
        if len != FLASH_LEN {
            return Err(EmulatorError::FlashSize { path: path.to_path_buf(), actual: len, expected: FLASH_LEN });
        }
        let cache = hint.and_then(|h| usize::try_from(h).ok()).map_or(DirectoryCache::Unknown, DirectoryCache::At);
        let map = SharedFileMap::map(&file, path, FLASH_LEN)?;
        Ok(Self {
            map,
            file,
            path: path.to_path_buf(),
            directory: Cell::new(cache),
            durability: FlashDurability::default(),
        })
    }

    /// Writes a new flash file at `path` holding `contents` at offset 0 (the rest erased to
    /// 0xFF, as NOR flash reads), through a temporary file renamed into place.
    pub(crate) fn create(path: &Path, contents: &[u8]) -> Result<Self, EmulatorError> {
        let tmp = temp_path(path);
        // A temp file left by a killed `create` is ours to replace.
        match std::fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&tmp)(e)),
        }
        let mut map = SharedFileMap::create(&tmp, FLASH_LEN)?;
        if contents.len() as u64 > FLASH_LEN {
            return Err(EmulatorError::FlashSize { path: tmp, actual: contents.len() as u64, expected: FLASH_LEN });
        }
        map.write_at(0, contents)?;
        let erased = vec![0xFF; map.len() - contents.len()];
        map.write_at(contents.len(), &erased)?;
        map.flush_range(0, map.len())?;
        drop(map);
        std::fs::rename(&tmp, path).map_err(io_err(path))?;
        Self::open(path, None)
    }

    /// The whole flash, read-only.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.as_slice()
    }

    /// `len` bytes at flash address `offset`, if they lie inside the flash.
    pub(crate) fn read(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let start = usize::try_from(offset).ok()?;
        self.bytes().get(start..start.checked_add(len)?)
    }

    /// Writes `data` at flash address `offset` and, as [`FlashDurability`] says, syncs it before
    /// returning; then updates the directory cache from the written range only.
    pub(crate) fn write(&mut self, offset: usize, data: &[u8]) -> Result<(), EmulatorError> {
        if offset.checked_add(data.len()).is_none_or(|end| end > self.map.len()) {
            let actual = offset as u64 + data.len() as u64;
            return Err(EmulatorError::FlashSize { path: self.path.clone(), actual, expected: FLASH_LEN });
        }
        self.file.seek(SeekFrom::Start(offset as u64)).map_err(io_err(&self.path))?;
        self.file.write_all(data).map_err(io_err(&self.path))?;
        if self.durability == FlashDurability::Synced {
            // Only committed sections are ever written, and each is synced before the next: the
            // range just written is the only dirty one, so syncing the file flushes just it.
            self.file.sync_data().map_err(io_err(&self.path))?;
        }
        self.note_written(offset, data.len());
        Ok(())
    }

    /// Keeps the directory cache true after `start..start + len` changed, scanning that range
    /// only (and the old directory, when the range cuts into it), and only when a cookie there
    /// could come first.
    fn note_written(&self, start: usize, len: usize) {
        let end = start.saturating_add(len);
        let overlaps = |at: usize| start < at + FlashDirectory::LEN && at < end;
        let scan = |from: usize| scan_cookie(self.bytes(), from, end);
        let next = match self.directory.get() {
            // Nothing before the old first cookie held one, so the first cookie from the range
            // (or the old directory) on comes first; none there: it is further on, or gone.
            DirectoryCache::At(at) if overlaps(at) => {
                scan(at.min(start)).map_or(DirectoryCache::Unknown, DirectoryCache::At)
            }
            DirectoryCache::At(at) if start < at => DirectoryCache::At(scan(start).filter(|&f| f < at).unwrap_or(at)),
            // A range after the directory cannot hold the first cookie.
            DirectoryCache::At(at) => DirectoryCache::At(at),
            DirectoryCache::Absent => scan(start).map_or(DirectoryCache::Absent, DirectoryCache::At),
            DirectoryCache::Unknown => DirectoryCache::Unknown,
        };
        self.directory.set(next);
    }

    /// The flash directory: the first cookie on flash, as the drivers find it in a file
    /// (ufi-firmware.md §2.2), from the cache when it still holds there.
    pub(crate) fn directory(&self) -> Option<FoundDirectory> {
        match self.directory.get() {
            DirectoryCache::At(offset) => {
                if let Ok(directory) = FlashDirectory::parse_at(self.bytes(), offset, DirectoryLayout::G3) {
                    return Some(FoundDirectory { offset, directory });
                }
            }
            DirectoryCache::Absent => return None,
            DirectoryCache::Unknown => {}
        }
        let found = FlashDirectory::find(self.bytes(), 0).ok();
        self.directory.set(found.as_ref().map_or(DirectoryCache::Absent, |f| DirectoryCache::At(f.offset)));
        found
    }

    /// The region (flash address, size) the directory on flash gives op type `op_type`: the
    /// first entry in use whose op-type (explicit, or from the type map for an old image) is it.
    pub(crate) fn region(&self, op_type: u32) -> Option<(u64, u64)> {
        let found = self.directory()?;
        let entry = found
            .directory
            .entries_in_use()
            .map(|(_, e)| e)
            .find(|e| e.effective_optype().is_some_and(|o| o.raw() == op_type))?;
        Some((u64::from(entry.offset), u64::from(entry.pad_size)))
    }

    /// The bytes of `entry`'s section, if it lies inside the flash.
    fn section(&self, entry: &SectionEntry) -> Option<&[u8]> {
        self.read(u64::from(entry.offset), usize::try_from(entry.pad_size).ok()?)
    }

    /// True when `entry`'s section is on flash and passes the CRC model.
    fn section_ok(&self, entry: &SectionEntry) -> bool {
        self.section(entry).and_then(crc::check_section).is_some_and(|c| c.is_ok())
    }

    /// The boot decision POST makes (design.md §6): the active firmware (0xA0) if its CRC is
    /// good, else the backup (0xB0), else POST fails. POST looks for the directory afresh.
    pub(crate) fn boot_check(&self) -> BootCheck {
        self.directory.set(DirectoryCache::Unknown);
        let Some(found) = self.directory() else {
            return BootCheck { outcome: BootOutcome::Failed, version: None, directory_offset: None };
        };
        let dir = &found.directory;
        let directory_offset = Some(found.offset as u64);
        for (image, outcome) in
            [(ImageType::FirmwareIscsi, BootOutcome::Primary), (ImageType::FirmwareBackupIscsi, BootOutcome::Backup)]
        {
            if let Some(entry) = dir.entry(image).filter(|e| self.section_ok(e)) {
                return BootCheck { outcome, version: Some(entry.version()), directory_offset };
            }
        }
        BootCheck { outcome: BootOutcome::Failed, version: None, directory_offset }
    }
}

/// The first cookie (either form) at a multiple of [`SCAN_STEP`] in `from..end` of `bytes` (a
/// cookie may run past `end`): the drivers' scan (ufi-firmware.md §2.2) over a range, looking at
/// one byte per step before comparing a whole cookie.
fn scan_cookie(bytes: &[u8], from: usize, end: usize) -> Option<usize> {
    let first = COOKIE_SPLIT[0];
    debug_assert_eq!(first, COOKIE_CONTIGUOUS[0]);
    let end = end.min(bytes.len());
    (from - from % SCAN_STEP..end)
        .step_by(SCAN_STEP)
        .find(|&at| bytes[at] == first && CookieForm::detect(&bytes[at..]).is_some())
}

/// `flash.bin` → `flash.bin.tmp`.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}
