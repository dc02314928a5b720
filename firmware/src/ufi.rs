//! [`UfiImage`]: the parser for untrusted `.ufi` files, with every bounds check of
//! ufi-firmware.md §9, borrowing the file's bytes (zero-copy, so it works on a memory map).

use std::path::Path;

use oce_pci::mmap::ReadOnlyMap;

use crate::compat::ImageTarget;
use crate::crc::{self, CrcCheck};
use crate::dir::{CookieForm, DirectoryLayout, FlashDirectory, ImageType, MAX_ENTRIES, SectionEntry};
use crate::error::ImageError;
use crate::header::{FileHeader, ImageHeader};
use crate::problem::Problem;

/// Maps `path` read-only, for [`UfiImage::parse`] on large files without reading them into memory.
pub fn map_file(path: &Path) -> Result<ReadOnlyMap, ImageError> {
    Ok(ReadOnlyMap::open(path)?)
}

/// A parsed image. Every section of [`UfiImage::sections`] lies inside the file.
#[derive(Debug, Clone)]
pub struct UfiImage<'a> {
    bytes: &'a [u8],
    header: FileHeader,
    payload_base: usize,
    directory_offset: usize,
    directory: FlashDirectory,
    problems: Vec<Problem>,
}

/// One section of a parsed image.
#[derive(Debug, Clone, Copy)]
pub struct Section<'s> {
    /// Entry index in the directory.
    pub index: usize,
    /// The entry.
    pub entry: &'s SectionEntry,
    /// Where the section starts in the file (P + `offset`).
    pub file_offset: usize,
    /// Its `pad_size` bytes, trailer included.
    pub data: &'s [u8],
}

impl Section<'_> {
    /// The 4-byte trailer as stored (what the drivers compare with the adapter's REPORT).
    pub fn trailer(&self) -> [u8; crc::TRAILER_LEN] {
        crc::stored_trailer(self.data).unwrap_or_default()
    }

    /// The trailer checked against the CRC model (one pass over the section).
    pub fn check_crc(&self) -> CrcCheck {
        crc::check_section(self.data).unwrap_or(CrcCheck { stored: 0, computed: 0 })
    }
}

impl<'a> UfiImage<'a> {
    /// Parses and checks `bytes`. Hard errors (the image cannot be flashed) are returned; softer
    /// findings are kept in [`UfiImage::problems`].
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ImageError> {
        let header = FileHeader::parse(bytes)?;
        let len = bytes.len();
        let base = header.payload_base();
        if base > len as u64 {
            return Err(ImageError::ImageHeadersPastEnd { num_imgs: header.num_imgs(), end: base, len });
        }
        let payload_base = base as usize;
        let mut problems = Vec::new();
        let layout = match header {
            FileHeader::G3(_) => {
                // The table ends at P <= len, so every header decodes.
                let flashable = crate::header::image_headers(bytes, &header)
                    .filter(|h| h.imageid == ImageHeader::FLASHABLE_ID)
                    .count() as u32;
                if flashable == 0 {
                    return Err(ImageError::NoFlashableImage { num_imgs: header.num_imgs() });
                }
                if flashable > 1 {
                    problems.push(Problem::SeveralFlashableHeaders { count: flashable });
                }
                DirectoryLayout::G3
            }
            FileHeader::G2(_) => DirectoryLayout::G2,
        };
        let found = FlashDirectory::find_with_layout(bytes, payload_base, layout)?;
        let (directory_offset, directory) = (found.offset, found.directory);
        if layout == DirectoryLayout::G3 && directory.header.num_images as usize > MAX_ENTRIES {
            return Err(ImageError::TooManyEntries {
                offset: directory_offset + crate::dir::COOKIE_LEN + 0x0C,
                num_images: directory.header.num_images,
                max: MAX_ENTRIES,
            });
        }
        if directory.entries_in_use().next().is_none() {
            return Err(ImageError::EmptyDirectory { offset: directory_offset });
        }
        let entries_offset = directory_offset + layout.entries_offset();
        for (index, entry) in directory.entries_in_use() {
            let entry_offset = entries_offset + index * SectionEntry::LEN;
            if (entry.pad_size as usize) < crc::TRAILER_LEN {
                return Err(ImageError::SectionTooSmall { index, entry_offset, pad_size: entry.pad_size });
            }
            let start = base + u64::from(entry.offset);
            let end = start + u64::from(entry.pad_size);
            if end > len as u64 {
                return Err(ImageError::SectionPastEnd { index, entry_offset, start, end, len });
            }
        }
        if directory.cookie == CookieForm::Contiguous {
            problems.push(Problem::ContiguousCookie { offset: directory_offset });
        }
        if header.file_len() as usize != len {
            problems.push(Problem::FileLenMismatch { stated: header.file_len(), actual: len });
        }
        directory_problems(&directory, &mut problems);
        if let Some(firmware) = directory.firmware_version().filter(|v| *v != header.version()) {
            problems.push(Problem::VersionMismatch { build: header.version(), firmware });
        }
        Ok(Self { bytes, header, payload_base, directory_offset, directory, problems })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The payload base P: entry offsets count from here.
    pub fn payload_base(&self) -> usize {
        self.payload_base
    }

    /// The image headers (g3 only; none for g2), decoded one by one from the file.
    pub fn image_headers(&self) -> impl Iterator<Item = ImageHeader> + '_ {
        crate::header::image_headers(self.bytes, &self.header)
    }

    /// Where the directory's cookie is in the file.
    pub fn directory_offset(&self) -> usize {
        self.directory_offset
    }

    /// The flash directory.
    pub fn directory(&self) -> &FlashDirectory {
        &self.directory
    }

    /// The sections in directory order (the order the flashing walk visits them).
    pub fn sections(&self) -> impl Iterator<Item = Section<'_>> + '_ {
        self.directory.entries_in_use().map(|(index, entry)| {
            let file_offset = self.payload_base + entry.offset as usize;
            // parse() checked file_offset + pad_size <= len for every entry in use.
            let data = self.bytes.get(file_offset..file_offset + entry.pad_size as usize).unwrap_or_default();
            Section { index, entry, file_offset, data }
        })
    }

    /// The first section of `image_type`.
    pub fn section(&self, image_type: ImageType) -> Option<Section<'_>> {
        self.sections().find(|s| s.entry.image_type == image_type)
    }

    /// The version string of the file header (`build` from byte 2).
    pub fn version(&self) -> String {
        self.header.version()
    }

    /// The firmware version the directory carries (`ver_data` of the 0xA0 entry), which the
    /// adapter reports as "on flash" once the image is flashed (design.md §6).
    pub fn firmware_version(&self) -> Option<String> {
        self.directory.firmware_version()
    }

    /// What the compatibility rules look at: `build[0]` and `asic_type_rev`. For a g2 file the
    /// byte at 0x60 is used, as Linux reads every file through the g3 header (ufi-firmware.md §1.3).
    pub fn target(&self) -> ImageTarget {
        let asic_type_rev = self.header.asic_type_rev().or_else(|| self.bytes.get(0x60).copied()).unwrap_or(0);
        ImageTarget { chip_char: self.header.chip_char(), asic_type_rev }
    }

    /// Problems found while parsing (not the CRCs: see [`crate::inspect`]).
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

/// Problems visible in the directory alone: unknown or unflashable types, old-image entries,
/// duplicate types, overlapping sections, no firmware section.
fn directory_problems(dir: &FlashDirectory, problems: &mut Vec<Problem>) {
    let used: Vec<(usize, &SectionEntry)> = dir.entries_in_use().collect();
    for &(index, e) in &used {
        if let ImageType::Unknown(raw) = e.image_type {
            problems.push(Problem::UnknownType { index, raw });
        }
        if e.effective_optype().is_none() {
            problems.push(Problem::NotFlashedOnSkyhawk { index, image_type: e.image_type });
        }
    }
    let old = used.iter().filter(|(_, e)| e.is_old_image()).count();
    if old > 0 {
        problems.push(Problem::OldImageEntries { count: old });
    }
    for (k, &(second, b)) in used.iter().enumerate() {
        for &(first, a) in &used[..k] {
            if a.image_type == b.image_type {
                problems.push(Problem::DuplicateType { first, second, image_type: a.image_type });
            }
            if u64::from(a.offset) < b.end() && u64::from(b.offset) < a.end() {
                problems.push(Problem::Overlap { first, second });
            }
        }
    }
    if dir.entry(ImageType::FirmwareIscsi).is_none() {
        problems.push(Problem::NoFirmwareSection);
    }
}

#[cfg(test)]
mod tests;
