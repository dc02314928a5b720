//! The flash directory (`flash_section_info`): cookie, section header and 32 section entries, how
//! the drivers find it, and the versions it carries (ufi-firmware.md §2).

mod entry;
pub(crate) mod types;

use oce_mailbox::wire::{Reader, Wire, Writer};

use crate::error::ImageError;

pub use entry::{DirectoryLayout, SectionEntry, SectionHeader};
pub use types::{ImageType, OpType};

/// Length of the cookie that opens the directory.
pub const COOKIE_LEN: usize = 32;

/// Number of entry slots in a directory.
#[doc(alias = "MAX_FLASH_COMP")]
pub const MAX_ENTRIES: usize = 32;

/// The step of the directory scan: the cookie sits at a multiple of 32 bytes from P
/// (ufi-firmware.md §2.2).
pub const SCAN_STEP: usize = 32;

/// The historical, canonical cookie: two 16-byte rows, `"*** SE FLAS"` + 5 NUL and
/// `"H DIRECTORY *** "` (ufi-firmware.md §2.1). Real images almost certainly carry this form.
#[doc(alias = "flash_cookie")]
pub const COOKIE_SPLIT: [u8; COOKIE_LEN] = *b"*** SE FLAS\0\0\0\0\0H DIRECTORY *** ";

/// The contiguous cookie of Linux since April 2025: `"*** SE FLASH DIRECTORY *** "` + 5 NUL
/// (ufi-firmware.md §2.1). Recognised, reported as non-standard.
pub const COOKIE_CONTIGUOUS: [u8; COOKIE_LEN] = *b"*** SE FLASH DIRECTORY *** \0\0\0\0\0";

/// Which of the two cookie byte forms a directory carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CookieForm {
    /// [`COOKIE_SPLIT`]: the canonical form, matched by FreeBSD and Linux before 2025.
    Split,
    /// [`COOKIE_CONTIGUOUS`]: matched only by be2net after the 2025 change.
    Contiguous,
}

impl CookieForm {
    /// The 32 cookie bytes.
    pub fn bytes(self) -> &'static [u8; COOKIE_LEN] {
        match self {
            Self::Split => &COOKIE_SPLIT,
            Self::Contiguous => &COOKIE_CONTIGUOUS,
        }
    }

    /// The form `bytes` starts with, if any.
    pub fn detect(bytes: &[u8]) -> Option<Self> {
        let head = bytes.get(..COOKIE_LEN)?;
        [Self::Split, Self::Contiguous].into_iter().find(|form| head == form.bytes())
    }

    /// True for the canonical split form.
    pub fn is_standard(self) -> bool {
        self == Self::Split
    }

    /// `"split"` or `"contiguous"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Split => "split",
            Self::Contiguous => "contiguous",
        }
    }
}

/// A decoded flash directory.
#[doc(alias = "flash_section_info")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlashDirectory {
    /// g3 (BE3, Skyhawk) or g2 (BE2).
    pub layout: DirectoryLayout,
    /// The cookie form it starts with.
    pub cookie: CookieForm,
    /// The section header.
    pub header: SectionHeader,
    /// The entry slots; a parsed directory has all [`MAX_ENTRIES`], a built one may have fewer
    /// (the rest encode as zeros).
    pub entries: Vec<SectionEntry>,
}

/// A directory found in a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundDirectory {
    /// Offset of the cookie in the buffer searched.
    pub offset: usize,
    /// The directory.
    pub directory: FlashDirectory,
}

impl FlashDirectory {
    /// Size of the g3 directory (`sizeof(struct flash_section_info)`).
    pub const LEN: usize = 2240;

    /// A g3 directory with the split cookie holding `entries`, `num_images` = their count.
    pub fn new(entries: Vec<SectionEntry>, id: &str) -> Self {
        let header = SectionHeader::new(entries.len() as u32, id);
        Self { layout: DirectoryLayout::G3, cookie: CookieForm::Split, header, entries }
    }

    /// Encodes the directory (`layout.size()` bytes).
    pub fn encode(&self) -> Result<Vec<u8>, ImageError> {
        let mut out = vec![0u8; self.layout.size()];
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Encodes the directory into the start of `out`, which must hold `layout.size()` bytes.
    pub fn encode_into(&self, out: &mut [u8]) -> Result<(), ImageError> {
        if self.entries.len() > MAX_ENTRIES {
            return Err(ImageError::TooManyEntries {
                offset: COOKIE_LEN + 0x0C,
                num_images: self.entries.len() as u32,
                max: MAX_ENTRIES,
            });
        }
        let mut w = Writer::new(out);
        w.bytes("cookie", self.cookie.bytes())?;
        self.header.encode(&mut w, self.layout)?;
        for slot in 0..MAX_ENTRIES {
            match self.entries.get(slot) {
                Some(entry) => entry.encode(&mut w)?,
                None => w.zeros("fsec_entry", SectionEntry::LEN)?,
            }
        }
        Ok(())
    }

    /// Decodes the directory whose cookie is at `offset` in `bytes`. The cookie must be one of
    /// the two forms and the whole directory must fit.
    pub fn parse_at(bytes: &[u8], offset: usize, layout: DirectoryLayout) -> Result<Self, ImageError> {
        let available = bytes.len().saturating_sub(offset);
        if available < layout.size() {
            return Err(ImageError::DirectoryTruncated { offset, needed: layout.size(), available });
        }
        let cookie =
            CookieForm::detect(&bytes[offset..]).ok_or(ImageError::NoCookie { base: offset, len: bytes.len() })?;
        let mut r = Reader::at(bytes, offset + COOKIE_LEN);
        let header = SectionHeader::decode(&mut r, layout)?;
        let entries = (0..MAX_ENTRIES).map(|_| SectionEntry::decode(&mut r)).collect::<Result<Vec<_>, _>>()?;
        Ok(Self { layout, cookie, header, entries })
    }

    /// Finds a g3 directory the way the drivers do: from `base`, in 32-byte steps, the first
    /// position holding either cookie form wins (ufi-firmware.md §2.2). Unlike the drivers, the
    /// whole directory must lie inside `bytes`.
    #[doc(alias = "get_fsec_info")]
    pub fn find(bytes: &[u8], base: usize) -> Result<FoundDirectory, ImageError> {
        Self::find_with_layout(bytes, base, DirectoryLayout::G3)
    }

    /// [`FlashDirectory::find`] for either layout.
    pub fn find_with_layout(bytes: &[u8], base: usize, layout: DirectoryLayout) -> Result<FoundDirectory, ImageError> {
        let offset = Self::scan(bytes, base).ok_or(ImageError::NoCookie { base, len: bytes.len() })?;
        Ok(FoundDirectory { offset, directory: Self::parse_at(bytes, offset, layout)? })
    }

    /// The offset of the first cookie at `base + 32·k` inside `bytes`.
    pub fn scan(bytes: &[u8], base: usize) -> Option<usize> {
        let tail = bytes.get(base..)?;
        tail.chunks_exact(SCAN_STEP).position(|chunk| CookieForm::detect(chunk).is_some()).map(|k| base + k * SCAN_STEP)
    }

    /// The slots the flashing walk visits, with their indices: g3 — the first `num_images` (at
    /// most 32); g2 — every slot whose type is neither 0 nor 0xFFFFFFFF (the BE2 walk looks up
    /// types in all 32 slots; which slots count as empty is an inference).
    pub fn entries_in_use(&self) -> impl Iterator<Item = (usize, &SectionEntry)> + '_ {
        let count = match self.layout {
            DirectoryLayout::G3 => (self.header.num_images as usize).min(MAX_ENTRIES),
            DirectoryLayout::G2 => MAX_ENTRIES,
        };
        let g2 = self.layout == DirectoryLayout::G2;
        self.entries
            .iter()
            .take(count)
            .enumerate()
            .filter(move |(_, e)| !g2 || !matches!(e.image_type.raw(), 0 | 0xFFFF_FFFF))
    }

    /// The first entry in use of `image_type`.
    pub fn entry(&self, image_type: ImageType) -> Option<&SectionEntry> {
        self.entries_in_use().map(|(_, e)| e).find(|e| e.image_type == image_type)
    }

    /// "The firmware version": `ver_data` of the 0xA0 entry (design.md §6).
    pub fn firmware_version(&self) -> Option<String> {
        self.entry(ImageType::FirmwareIscsi).map(SectionEntry::version)
    }
}

#[cfg(test)]
mod tests;
