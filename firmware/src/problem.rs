//! Problems found in an image that do not stop parsing: what `fw inspect` reports beside the
//! hard errors of [`crate::ImageError`].

use std::fmt;

use serde::Serialize;

use crate::dir::ImageType;
use crate::optionrom::RomProblem;

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; flashing is unaffected.
    Info,
    /// Suspicious; flashing may still work.
    Warning,
    /// Flashing this image on a Skyhawk would fail or do harm.
    Error,
}

/// One problem, with the offsets or entry indices it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The directory carries the 2025 contiguous cookie, matched only by recent be2net
    /// (ufi-firmware.md §2.1).
    ContiguousCookie {
        /// Offset of the cookie.
        offset: usize,
    },
    /// More than one image header has `imageid == 1`; Linux walks the whole directory once per
    /// such header (ufi-firmware.md §1.6).
    SeveralFlashableHeaders {
        /// How many.
        count: u32,
    },
    /// The header's `file_len` differs from the file's length (not checked by the drivers).
    FileLenMismatch {
        /// `file_len`.
        stated: u32,
        /// The real length.
        actual: usize,
    },
    /// An entry's type is not in the table (ufi-firmware.md §2.4).
    UnknownType {
        /// Entry index.
        index: usize,
        /// The raw type.
        raw: u32,
    },
    /// An entry has no op-type on Skyhawk: the walk skips it (ufi-firmware.md §2.5, §2.8 step 2).
    NotFlashedOnSkyhawk {
        /// Entry index.
        index: usize,
        /// Its type.
        image_type: ImageType,
    },
    /// Entries with `optype` 0xFFFF ("old image"): the walk flashes them without the CRC check,
    /// so they are rewritten every time (ufi-firmware.md §2.8 step 4).
    OldImageEntries {
        /// How many.
        count: usize,
    },
    /// Two entries have the same type.
    DuplicateType {
        /// First entry index.
        first: usize,
        /// Second entry index.
        second: usize,
        /// The type.
        image_type: ImageType,
    },
    /// Two sections overlap.
    Overlap {
        /// First entry index.
        first: usize,
        /// Second entry index.
        second: usize,
    },
    /// No 0xA0 firmware entry: the image carries no firmware version.
    NoFirmwareSection,
    /// The header's version (`build` from byte 2) differs from the 0xA0 entry's `ver_data`, which
    /// is what the adapter will report once the image is flashed (design.md §6).
    VersionMismatch {
        /// From the file header.
        build: String,
        /// From the directory.
        firmware: String,
    },
    /// A section's trailer does not match ocetool's CRC model. The model is the emulator's
    /// assumption (design.md §6; the real algorithm is not public, ufi-firmware.md §8), so this is
    /// a warning, never a reason to refuse an image: the adapter itself checks each section when
    /// it is committed and answers 0x4D (FLASH_IMAGE_CRC_MISMATCH) on a bad one.
    CrcMismatch {
        /// Entry index.
        index: usize,
        /// The stored trailer.
        stored: u32,
        /// The CRC of the section body.
        computed: u32,
    },
    /// `build[0]` is not `'4'`: not a Skyhawk image.
    NotSkyhawk {
        /// `build[0]`.
        chip_char: u8,
    },
    /// Something is wrong inside an option-ROM section.
    OptionRom {
        /// Entry index.
        index: usize,
        /// What.
        problem: RomProblem,
    },
    /// The image cannot be flashed at all (the parser's hard error, as text).
    Unflashable {
        /// The error message.
        message: String,
    },
}

impl Problem {
    /// A stable snake_case name for JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ContiguousCookie { .. } => "contiguous_cookie",
            Self::SeveralFlashableHeaders { .. } => "several_flashable_headers",
            Self::FileLenMismatch { .. } => "file_len_mismatch",
            Self::UnknownType { .. } => "unknown_type",
            Self::NotFlashedOnSkyhawk { .. } => "not_flashed_on_skyhawk",
            Self::OldImageEntries { .. } => "old_image_entries",
            Self::DuplicateType { .. } => "duplicate_type",
            Self::Overlap { .. } => "overlap",
            Self::NoFirmwareSection => "no_firmware_section",
            Self::VersionMismatch { .. } => "version_mismatch",
            Self::CrcMismatch { .. } => "crc_mismatch",
            Self::NotSkyhawk { .. } => "not_skyhawk",
            Self::OptionRom { .. } => "option_rom",
            Self::Unflashable { .. } => "unflashable",
        }
    }

    /// How serious it is.
    pub fn severity(&self) -> Severity {
        match self {
            Self::NotSkyhawk { .. } | Self::Unflashable { .. } => Severity::Error,
            Self::CrcMismatch { .. }
            | Self::ContiguousCookie { .. }
            | Self::Overlap { .. }
            | Self::UnknownType { .. }
            | Self::DuplicateType { .. }
            | Self::NoFirmwareSection
            | Self::VersionMismatch { .. }
            | Self::OptionRom { .. } => Severity::Warning,
            Self::SeveralFlashableHeaders { .. }
            | Self::FileLenMismatch { .. }
            | Self::NotFlashedOnSkyhawk { .. }
            | Self::OldImageEntries { .. } => Severity::Info,
        }
    }

    /// The entry index it concerns, if one.
    pub fn section(&self) -> Option<usize> {
        match self {
            Self::UnknownType { index, .. }
            | Self::NotFlashedOnSkyhawk { index, .. }
            | Self::CrcMismatch { index, .. }
            | Self::OptionRom { index, .. } => Some(*index),
            Self::DuplicateType { second, .. } | Self::Overlap { second, .. } => Some(*second),
            _ => None,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ContiguousCookie { offset } => write!(
                f,
                "the flash directory at byte {offset} uses the contiguous 2025 cookie, which only be2net after \
                 April 2025 matches; FreeBSD and older Linux would not find it"
            ),
            Self::SeveralFlashableHeaders { count } => {
                write!(f, "{count} image headers have imageid 1; Linux walks the directory once for each")
            }
            Self::FileLenMismatch { stated, actual } => {
                write!(f, "the header's file_len is {stated} but the file has {actual} bytes")
            }
            Self::UnknownType { index, raw } => write!(f, "section {index} has unknown type {raw:#x}"),
            Self::NotFlashedOnSkyhawk { index, image_type } => {
                write!(f, "section {index} ({image_type}) has no Skyhawk op-type; the flashing walk skips it")
            }
            Self::OldImageEntries { count } => write!(
                f,
                "{count} entries have optype 0xFFFF (old image): they are flashed without the CRC check, every time"
            ),
            Self::DuplicateType { first, second, image_type } => {
                write!(f, "sections {first} and {second} both have type {image_type}")
            }
            Self::Overlap { first, second } => write!(f, "sections {first} and {second} overlap"),
            Self::NoFirmwareSection => write!(f, "no firmware (0xa0) section: the image carries no firmware version"),
            Self::VersionMismatch { build, firmware } => write!(
                f,
                "the header says version {build:?} but the firmware section carries {firmware:?}, which the \
                 adapter will report"
            ),
            Self::CrcMismatch { index, stored, computed } => write!(
                f,
                "section {index}: CRC trailer {stored:#010x} does not match ocetool's CRC model ({computed:#010x}, \
                 CRC-32 of the section); the emulated adapter refuses such a section, a real one checks with its own \
                 algorithm"
            ),
            Self::NotSkyhawk { chip_char } => {
                write!(f, "build[0] is {:?}, not '4': this is not a Skyhawk (OCe14000) image", char::from(*chip_char))
            }
            Self::OptionRom { index, problem } => write!(f, "section {index}: {problem}"),
            Self::Unflashable { message } => write!(f, "{message}"),
        }
    }
}
