//! Errors of the flash layer: the adapter could not be read, is not one ocetool flashes, or
//! refused or failed a step of the walk. An image problem found on the way is wrapped as is.

use oce_mailbox::{CompletionStatus, MailboxError};

use super::report::{SectionRef, list_sections};
use crate::error::ImageError;

/// What can go wrong planning or carrying out a flash.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FlashError {
    /// The image cannot be flashed as it is (parse, compatibility, version policy).
    #[error(transparent)]
    Image(#[from] ImageError),
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
    #[error("PCI function {} is not a OneConnect function ocetool knows", oce_pci::ids::pair_string(*.vendor, *.device))]
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
        list_sections(.flashed)
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
    /// No order of the writes keeps a bootable copy on flash at every step, or ocetool cannot
    /// tell; refused unless `force`.
    #[error(
        "no order of the writes keeps a bootable firmware on the adapter: {reason}; a stop, kill or power loss \
         part-way would leave an adapter that fails POST at its next reset"
    )]
    UnsafeOrder {
        /// Why.
        reason: String,
    },
    /// The adapter refuses offset mode, so each section goes where the directory on flash puts
    /// its op type, and this section's place in the image is another.
    #[error(
        "the adapter refuses offset mode, so section {section} would be written where the directory on flash puts \
         its op type ({}), not at {offset:#x} where the image puts it; this image's layout cannot be flashed here",
        .on_flash.map_or_else(|| "nowhere".to_owned(), |(o, s)| format!("{s:#x} bytes at {o:#x}"))
    )]
    LayoutNeedsOffsetMode {
        /// The section.
        section: SectionRef,
        /// Its place in the image.
        offset: u32,
        /// Its op type's region on flash (offset, size), if any.
        on_flash: Option<(u32, u32)>,
    },
    /// The observer asked to stop; the flash stopped between sections, or between the chunks of
    /// a section before its commit.
    #[error(
        "stopped on request after writing {}{} ({remaining} entries not written); every section is wholly old or \
         wholly new, and running the update again finishes it",
        list_sections(.flashed),
        .abandoned.map(|s| format!(" and before committing {s}, which stays as it was on flash")).unwrap_or_default()
    )]
    Stopped {
        /// Sections written before the stop.
        flashed: Vec<SectionRef>,
        /// Directory entries not yet written (that the walk would have written).
        remaining: usize,
        /// The section whose chunks were being staged when the stop came: never committed.
        abandoned: Option<SectionRef>,
    },
}
