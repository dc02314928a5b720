//! Section layouts for synthetic images: which sections, where in the flash address space, how
//! large, and the two presets.

use crate::crc::TRAILER_LEN;
use crate::dir::{FlashDirectory, ImageType, MAX_ENTRIES, SCAN_STEP};
use crate::error::ImageError;

use super::rom;

/// Size of the flash address space the emulator models (design.md §6: 16 MiB `flash.bin`).
pub const FLASH_SIZE: u32 = 16 << 20;

/// One section of a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionSpec {
    /// Its type.
    pub image_type: ImageType,
    /// Flash offset (= offset from P in the file).
    pub offset: u32,
    /// Size, CRC trailer included.
    pub pad_size: u32,
}

impl SectionSpec {
    /// A section of `image_type` at `offset` with `pad_size` bytes.
    pub const fn new(image_type: ImageType, offset: u32, pad_size: u32) -> Self {
        Self { image_type, offset, pad_size }
    }

    /// End offset (exclusive).
    pub fn end(&self) -> u64 {
        u64::from(self.offset) + u64::from(self.pad_size)
    }
}

/// The sections of an image, in directory-entry order (the order the flashing walk visits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The sections; exactly one must be the [`ImageType::UfiDir`] section holding the directory.
    pub sections: Vec<SectionSpec>,
}

const KIB: u32 = 1 << 10;
const MIB: u32 = 1 << 20;

impl Layout {
    /// The small preset, 1.375 MiB of payload for fast tests. Flash map: directory 0x0 (4 KiB),
    /// boot code 0x10000 (128 KiB), firmware 0x40000 (512 KiB), backup firmware 0xC0000
    /// (512 KiB), PXE ROM 0x140000 (64 KiB), NC-SI 0x150000 (64 KiB).
    pub fn small() -> Self {
        Self::default_six([
            (0, 4 * KIB),
            (64 * KIB, 128 * KIB),
            (256 * KIB, 512 * KIB),
            (768 * KIB, 512 * KIB),
            (1280 * KIB, 64 * KIB),
            (1344 * KIB, 64 * KIB),
        ])
    }

    /// The full preset, whose sections fill the 16 MiB flash exactly (for benchmarks):
    /// directory 0x0 (64 KiB), boot code 0x10000 (960 KiB), firmware 0x100000 (5 MiB), backup
    /// firmware 0x600000 (5 MiB), PXE ROM 0xB00000 (1 MiB), NC-SI 0xC00000 (4 MiB).
    pub fn full() -> Self {
        Self::default_six([
            (0, 64 * KIB),
            (64 * KIB, 960 * KIB),
            (MIB, 5 * MIB),
            (6 * MIB, 5 * MIB),
            (11 * MIB, MIB),
            (12 * MIB, 4 * MIB),
        ])
    }

    /// The six default sections from their `(offset, pad_size)` in flash order — directory, boot
    /// code, firmware, backup, PXE, NC-SI — listed as entries in the order firmware, backup, boot
    /// code, PXE, NC-SI and the directory last, so a walk in entry order writes the directory
    /// (which carries the version) after the sections it describes.
    fn default_six(map: [(u32, u32); 6]) -> Self {
        let [dir, boot, fw, backup, pxe, ncsi] = map;
        let entries = [
            (ImageType::FirmwareIscsi, fw),
            (ImageType::FirmwareBackupIscsi, backup),
            (ImageType::BootCode, boot),
            (ImageType::OptionRomPxe, pxe),
            (ImageType::Ncsi, ncsi),
            (ImageType::UfiDir, dir),
        ];
        Self { sections: entries.into_iter().map(|(ty, (offset, size))| SectionSpec::new(ty, offset, size)).collect() }
    }

    /// The payload length: the end of the last section.
    pub fn payload_len(&self) -> usize {
        self.sections.iter().map(SectionSpec::end).max().unwrap_or(0) as usize
    }

    /// The directory section.
    pub fn directory(&self) -> Option<&SectionSpec> {
        self.sections.iter().find(|s| s.image_type == ImageType::UfiDir)
    }

    /// Checks that the builder can lay these sections out.
    pub fn validate(&self) -> Result<(), ImageError> {
        let bad = |s: &SectionSpec, reason| ImageError::InvalidLayout {
            image_type: s.image_type,
            offset: s.offset,
            pad_size: s.pad_size,
            reason,
        };
        if self.sections.len() > MAX_ENTRIES {
            return Err(ImageError::TooManyEntries {
                offset: 0,
                num_images: self.sections.len() as u32,
                max: MAX_ENTRIES,
            });
        }
        if self.sections.iter().filter(|s| s.image_type == ImageType::UfiDir).count() != 1 {
            return Err(ImageError::InvalidLayout {
                image_type: ImageType::UfiDir,
                offset: 0,
                pad_size: 0,
                reason: "the layout needs exactly one flash-directory (0xD2) section",
            });
        }
        for (i, s) in self.sections.iter().enumerate() {
            let min = match s.image_type {
                ImageType::UfiDir => FlashDirectory::LEN + TRAILER_LEN,
                t if t.is_option_rom() => rom::option_rom_len() + TRAILER_LEN,
                _ => TRAILER_LEN,
            };
            if (s.pad_size as usize) < min {
                return Err(bad(s, "pad_size too small for the section's content and CRC trailer"));
            }
            if s.image_type == ImageType::UfiDir && !(s.offset as usize).is_multiple_of(SCAN_STEP) {
                return Err(bad(s, "the directory must start at a multiple of 32 bytes"));
            }
            if s.end() > u64::from(FLASH_SIZE) {
                return Err(bad(s, "the section ends past the 16 MiB flash"));
            }
            if self.sections[..i].iter().any(|o| u64::from(s.offset) < o.end() && u64::from(o.offset) < s.end()) {
                return Err(bad(s, "the section overlaps an earlier one"));
            }
        }
        Ok(())
    }
}
