//! The error type of the firmware crate: why an image cannot be parsed, built or flashed.

use oce_mailbox::{CompletionStatus, MailboxError, WireError};
use oce_pci::PciError;

use crate::compat::Incompatibility;
use crate::dir::ImageType;
use crate::flash::SectionRef;

/// What can go wrong reading, checking, building or flashing a firmware image.
///
/// Offsets are byte offsets in the file (or in the buffer the function was given) unless the
/// variant says otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FirmwareError {
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
    /// A read-only query of the adapter failed (before or after a flash).
    #[error("{during} failed")]
    Device {
        /// What ocetool was doing.
        during: &'static str,
        /// The mailbox's error.
        #[source]
        source: MailboxError,
    },
    /// The PCI IDs are not in ocetool's table of OneConnect functions.
    #[error("PCI function {vendor:#06x}:{device:#06x} is not a OneConnect function ocetool knows")]
    UnknownDevice {
        /// PCI vendor ID.
        vendor: u16,
        /// PCI device ID.
        device: u16,
    },
    /// ocetool does not flash this chip.
    #[error("cannot flash a {chip} adapter: {reason}")]
    UnsupportedChip {
        /// The chip.
        chip: oce_pci::Chip,
        /// Why.
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
    /// A section ends past what the 32-bit `offset` of the flash commands can address.
    #[error("section {section} ends at flash offset {end:#x}, past the 32-bit flash address space")]
    SectionPastAddressSpace {
        /// The section.
        section: SectionRef,
        /// Its end.
        end: u64,
    },
    /// A flash plan was used with another image than the one it was made from.
    #[error("the flash plan was made from another image")]
    PlanMismatch,
    /// The adapter could not report a section's CRC ("Could not get CRC", ufi-firmware.md §2.8).
    #[error("could not read the adapter's CRC of section {section}; nothing of it was written")]
    CrcQueryFailed {
        /// The section.
        section: SectionRef,
        /// The mailbox's error (with the statuses when the firmware answered).
        #[source]
        source: MailboxError,
    },
    /// The firmware refused the CRC query in op-type mode too: it cannot take this image's
    /// sections as addressed ("Flash incomplete", ufi-firmware.md §2.8 step 5).
    #[error(
        "flash incomplete: the adapter refused the CRC query for section {section} in op-type mode ({status}); \
         sections written: {}; reset the adapter and run the update again",
        crate::flash::list_sections(.flashed)
    )]
    FlashIncomplete {
        /// The section.
        section: SectionRef,
        /// The refusal.
        status: CompletionStatus,
        /// Sections written before it in this run.
        flashed: Vec<SectionRef>,
    },
    /// The firmware wants a digitally signed image and this section has no signature (0x57).
    #[error("the adapter rejected the image's digital signature: missing (section {section})")]
    SignatureMissing {
        /// The section.
        section: SectionRef,
    },
    /// The firmware found the section's digital signature invalid (0x56).
    #[error("the adapter rejected the image's digital signature: invalid (section {section})")]
    SignatureInvalid {
        /// The section.
        section: SectionRef,
    },
    /// The firmware checked the committed section against its CRC trailer and refused it (0x4D).
    #[error(
        "the adapter found section {section}'s CRC wrong after transfer; nothing of it was written (the image \
         is damaged)"
    )]
    CrcMismatch {
        /// The section.
        section: SectionRef,
    },
    /// The firmware refused a write of a section ("Flashing section type … failed").
    #[error("writing section {section} failed: {status}")]
    WriteRejected {
        /// The section.
        section: SectionRef,
        /// The firmware's statuses.
        status: CompletionStatus,
    },
    /// A write of a section did not complete (timeout, device gone, malformed completion).
    #[error("writing section {section} failed")]
    WriteFailed {
        /// The section.
        section: SectionRef,
        /// The mailbox's error.
        #[source]
        source: MailboxError,
    },
    /// The observer asked to stop; the flash stopped between sections.
    #[error(
        "stopped on request after writing {} ({remaining} entries not visited); every section is wholly old or \
         wholly new, and running the update again finishes it (sections already on flash are skipped)",
        crate::flash::list_sections(.flashed)
    )]
    Stopped {
        /// Sections written before the stop.
        flashed: Vec<SectionRef>,
        /// Directory entries not yet visited.
        remaining: usize,
    },
}
