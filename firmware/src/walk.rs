//! The Skyhawk flashing walk's view of an image: its sections in walk order, each with the
//! op-type the walk uses, for planning a flash (ufi-firmware.md §2.8).

use crate::crc::TRAILER_LEN;
use crate::dir::OpType;
use crate::ufi::{Section, UfiImage};

/// One entry as the walk sees it.
#[derive(Debug, Clone, Copy)]
pub struct WalkStep<'s> {
    /// The section.
    pub section: Section<'s>,
    /// The op-type for op-type mode (§2.8 step 1); `None`: the walk skips the entry (step 2).
    pub optype: Option<OpType>,
    /// `optype` is 0xFFFF: no CRC query before writing (step 4), and some failures are ignored.
    pub old_image: bool,
}

impl WalkStep<'_> {
    /// The walk skips this entry (no op-type on Skyhawk).
    pub fn is_skipped(&self) -> bool {
        self.optype.is_none()
    }

    /// The walk asks the adapter for the section's CRC before writing (§2.8 step 5).
    pub fn queries_crc(&self) -> bool {
        !self.is_skipped() && !self.old_image
    }

    /// Flash address of the section (offset mode).
    pub fn flash_offset(&self) -> u32 {
        self.section.entry.offset
    }

    /// Bytes to write (`pad_size`).
    pub fn size(&self) -> u32 {
        self.section.entry.pad_size
    }

    /// The `offset` of the READ_FLASHROM REPORT request (§3.4): `pad_size − 4` in op-type mode,
    /// `offset + pad_size − 4` in offset mode.
    pub fn crc_query_offset(&self, offset_mode: bool) -> u32 {
        let in_section = self.size().saturating_sub(TRAILER_LEN as u32);
        if offset_mode { self.flash_offset().saturating_add(in_section) } else { in_section }
    }

    /// The 4 bytes the walk compares with the adapter's REPORT.
    pub fn trailer(&self) -> [u8; TRAILER_LEN] {
        self.section.trailer()
    }
}

/// The entries of `image` in walk order (directory order, `num_images` of them).
pub fn walk<'s>(image: &'s UfiImage<'_>) -> impl Iterator<Item = WalkStep<'s>> + 's {
    image.sections().map(|section| WalkStep {
        section,
        optype: section.entry.effective_optype(),
        old_image: section.entry.is_old_image(),
    })
}
