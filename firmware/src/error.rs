//! Errors of the image layer: why a `.ufi` file cannot be read, parsed or built, why it does not
//! suit an adapter, and why the version policy refuses it. The flash layer's
//! [`FlashError`](crate::flash::FlashError) wraps these.

use oce_mailbox::WireError;
use oce_pci::PciError;

use crate::compat::Incompatibility;
use crate::dir::types::ImageType;

/// What can go wrong reading, checking or building a firmware image, or choosing to flash it.
///
/// Offsets are byte offsets in the file (or in the buffer the function was given) unless the
/// variant says otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// The image file could not be opened or mapped.
    #[error("cannot read the image file")]
    Io(#[from] PciError),
    /// The file is empty.
    #[error("the image file is empty")]
    Empty,
    /// A fixed-size structure runs past the end of the data.
    #[error("the image is truncated")]
    Truncated(#[from] WireError),
    /// The file header's `num_imgs` image headers do not fit in the file (ufi-firmware.md §1.1, §9).
    #[error("num_imgs {num_imgs} needs image headers up to byte {end}, but the file has {len} bytes")]
    ImageHeadersPastEnd {
        /// The `num_imgs` field.
        num_imgs: u32,
        /// Where the header table would end.
        end: u64,
        /// The file length.
        len: usize,
    },
    /// No image header has `imageid == 1`, so the drivers would flash nothing (ufi-firmware.md §1.6).
    #[error("none of the {num_imgs} image headers has imageid 1: nothing would be flashed")]
    NoFlashableImage {
        /// The `num_imgs` field.
        num_imgs: u32,
    },
    /// No flash-directory cookie at any 32-byte step from the payload base (ufi-firmware.md §2.2).
    #[error("no flash directory cookie found from byte {base} to the end of the file ({len} bytes)")]
    NoCookie {
        /// Where the scan started (the payload base P).
        base: usize,
        /// The length scanned.
        len: usize,
    },
    /// The cookie was found but the whole directory does not fit before the end of the data.
    #[error("flash directory at byte {offset} needs {needed} bytes, only {available} available")]
    DirectoryTruncated {
        /// Offset of the cookie.
        offset: usize,
        /// Size of the directory.
        needed: usize,
        /// Bytes from the cookie to the end of the data.
        available: usize,
    },
    /// The section header claims more entries than the directory holds (ufi-firmware.md §2.3, §9).
    #[error("flash directory at byte {offset} claims {num_images} entries, at most {max} exist")]
    TooManyEntries {
        /// Offset of the `num_images` field.
        offset: usize,
        /// The `num_images` field.
        num_images: u32,
        /// The number of entry slots (`MAX_FLASH_COMP`).
        max: usize,
    },
    /// The directory lists no sections: the drivers would flash nothing and report success.
    #[error("the flash directory at byte {offset} lists no sections")]
    EmptyDirectory {
        /// Offset of the cookie.
        offset: usize,
    },
    /// A section is smaller than its 4-byte CRC trailer (ufi-firmware.md §3.3, §9).
    #[error("section {index} (entry at byte {entry_offset}) has pad_size {pad_size}, below the 4-byte CRC trailer")]
    SectionTooSmall {
        /// Entry index in the directory.
        index: usize,
        /// Offset of the entry in the file.
        entry_offset: usize,
        /// The `pad_size` field.
        pad_size: u32,
    },
    /// A section runs past the end of the file (ufi-firmware.md §2.8 step 6, §9).
    #[error(
        "section {index} (entry at byte {entry_offset}) spans bytes {start}..{end}, past the end of the file ({len} bytes)"
    )]
    SectionPastEnd {
        /// Entry index in the directory.
        index: usize,
        /// Offset of the entry in the file.
        entry_offset: usize,
        /// File offset where the section starts (P + offset).
        start: u64,
        /// File offset where it ends.
        end: u64,
        /// The file length.
        len: usize,
    },
    /// The image does not suit the adapter (ufi-firmware.md §1.5, Linux rule).
    #[error("the image is not compatible with the adapter: {0}")]
    Incompatible(Incompatibility),
    /// A CRC trailer was asked of a region shorter than the trailer.
    #[error("a {len}-byte region cannot hold a 4-byte CRC trailer")]
    CrcRegionTooShort {
        /// The region's length.
        len: usize,
    },
    /// The builder was given a version string it cannot store.
    #[error("version {version:?} must be 1 to {max_len} printable ASCII characters")]
    InvalidVersion {
        /// The version given.
        version: String,
        /// The longest version that fits `build[2..]`.
        max_len: usize,
    },
    /// The builder was given a section layout it cannot build.
    #[error("cannot lay out section {image_type} at flash offset {offset:#x} with pad_size {pad_size:#x}: {reason}")]
    InvalidLayout {
        /// The section's type.
        image_type: ImageType,
        /// Its flash offset.
        offset: u32,
        /// Its size.
        pad_size: u32,
        /// What is wrong.
        reason: &'static str,
    },
    /// The image's firmware is older than the adapter's stored firmware.
    #[error("the image holds firmware {image}, older than the {stored} on flash")]
    Downgrade {
        /// The image's version.
        image: String,
        /// The adapter's stored version.
        stored: String,
    },
    /// The image's version and the adapter's cannot be ordered.
    #[error(
        "cannot tell whether the image's firmware {image:?} is older than the {stored:?} on flash (not dotted \
         versions)"
    )]
    VersionUnordered {
        /// The image's version.
        image: String,
        /// The adapter's stored version.
        stored: String,
    },
}

impl From<Incompatibility> for ImageError {
    fn from(i: Incompatibility) -> Self {
        Self::Incompatible(i)
    }
}
