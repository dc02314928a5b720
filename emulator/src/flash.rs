//! The emulated flash: `flash.bin` in the state directory, 16 MiB, memory-mapped, holding the
//! flash address space (design.md §6). The emulator finds its own firmware through the flash
//! directory on it, with `oce-firmware`'s directory parser and CRC model.

use std::path::{Path, PathBuf};

use oce_firmware::crc;
use oce_firmware::dir::{DirectoryLayout, FlashDirectory, FoundDirectory, ImageType, SectionEntry};
use oce_pci::mmap::SharedFileMap;

use crate::assumptions::FLASH_LEN;
use crate::error::{EmulatorError, io_err};
use crate::events::BootOutcome;

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

/// The flash file.
#[derive(Debug)]
pub(crate) struct Flash {
    map: SharedFileMap,
}

impl Flash {
    /// Maps an existing flash file, which must be exactly [`FLASH_LEN`] bytes.
    pub(crate) fn open(path: &Path) -> Result<Self, EmulatorError> {
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => EmulatorError::MissingFile { path: path.to_path_buf() },
            _ => io_err(path)(e),
        })?;
        if meta.len() != FLASH_LEN {
            return Err(EmulatorError::FlashSize { path: path.to_path_buf(), actual: meta.len(), expected: FLASH_LEN });
        }
        Ok(Self { map: SharedFileMap::open(path, FLASH_LEN)? })
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
        Self::open(path)
    }

    /// The whole flash, read-only.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.as_slice()
    }

    /// The flash directory: at `hint` if it still holds one there, else by scanning.
    pub(crate) fn directory(&self, hint: Option<u64>) -> Option<FoundDirectory> {
        let bytes = self.bytes();
        if let Some(offset) = hint.and_then(|h| usize::try_from(h).ok())
            && let Ok(directory) = FlashDirectory::parse_at(bytes, offset, DirectoryLayout::G3)
        {
            return Some(FoundDirectory { offset, directory });
        }
        FlashDirectory::find(bytes, 0).ok()
    }

    /// The bytes of `entry`'s section, if it lies inside the flash.
    fn section(&self, entry: &SectionEntry) -> Option<&[u8]> {
        let start = usize::try_from(entry.offset).ok()?;
        let end = usize::try_from(entry.end()).ok()?;
        self.bytes().get(start..end)
    }

    /// True when `entry`'s section is on flash and passes the CRC model.
    fn section_ok(&self, entry: &SectionEntry) -> bool {
        self.section(entry).and_then(crc::check_section).is_some_and(|c| c.is_ok())
    }

    /// The boot decision POST makes (design.md §6): the active firmware (0xA0) if its CRC is
    /// good, else the backup (0xB0), else POST fails.
    pub(crate) fn boot_check(&self, hint: Option<u64>) -> BootCheck {
        let Some(found) = self.directory(hint) else {
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

/// `flash.bin` → `flash.bin.tmp`.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}
