//! The flash plan: everything decided before anything is written — compatibility, the version
//! policy, what the walk does with each directory entry (the CRC diff), and the order it writes
//! them in ([`super::order`]).

use std::cmp::Ordering;

use serde::Serialize;

use super::check_chip;
use super::error::FlashError;
use super::onflash::{BootState, OnFlash, Region};
use super::order::{self, Piece, Safety, WriteOrder};
use super::report::{FlashMode, SectionRef};
use crate::compat::{self, CompatReport};
use crate::crc::TRAILER_LEN;
use crate::dir::{CookieForm, ImageType, SCAN_STEP};
use crate::error::ImageError;
use crate::ufi::UfiImage;
use crate::version;
use crate::walk::{WalkStep, walk};

/// What the caller allows.
///
/// - `allow_downgrade`: flash an image whose firmware version is older than the adapter's stored
///   one, or whose order against it cannot be told (not dotted versions).
/// - `force`: write every section the walk can flash even when the adapter's CRC of the region
///   already equals the section's trailer (a full rewrite; without it such sections are skipped).
///   It also flashes when no write order keeps a bootable copy at every step
///   ([`Safety::Unsafe`]), in the order the plan found best. `force` relaxes nothing else: an
///   incompatible image is always refused, a downgrade still needs `allow_downgrade`, a layout
///   change without offset mode is refused, and sections without a Skyhawk op-type are still
///   skipped.
///
/// The same version needs neither: the walk then writes only sections whose CRC differs, which
/// for an image already on flash is none (`changed: false`), and for an earlier interrupted
/// flash of this image is exactly what is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Policy {
    /// Allow an older (or unordered) firmware version.
    pub allow_downgrade: bool,
    /// Rewrite sections whose CRC already matches, and flash in an unsafe order.
    pub force: bool,
}

/// What the plan needs to know about the adapter, read once and read-only by
/// [`super::read_adapter`] for one image: chip, revision and versions, the flash as it is
/// ([`OnFlash`]: the directory it boots from and its boot sections' checks), and the adapter's
/// REPORT for every section of the image (the CRC diff).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterState {
    /// The chip, from the PCI IDs.
    pub chip: oce_pci::Chip,
    /// QUERY_FIRMWARE_CONFIG `asic_revision`, low byte (ufi-firmware.md §1.5 rule 4).
    pub asic_rev: u8,
    /// GET_FW_VERSION: the running firmware.
    pub running: String,
    /// GET_FW_VERSION: the firmware on flash (empty when the adapter reports none).
    pub stored: String,
    /// The flash as read (directory, boot sections, mode).
    pub flash: OnFlash,
    /// The mode the CRC queries were answered in (offset unless the adapter refused it).
    pub mode: FlashMode,
    /// Per walk entry of the image the state was read for: the adapter's REPORT of the region
    /// the section would fill (`None`: not asked, as the walk does not ask for it).
    #[serde(skip)]
    pub reports: Reports,
    /// The image the reports are about: each walk entry's (index, type, offset, size).
    #[serde(skip)]
    pub read_for: Vec<(usize, u32, u32, u32)>,
}

impl AdapterState {
    /// True when the state was read for `image` (the same entries at the same places).
    pub fn read_for(&self, image: &UfiImage<'_>) -> bool {
        self.read_for.iter().copied().eq(walk(image).map(identity))
    }
}

/// The adapter's REPORT for each walk entry of an image (`None`: not asked).
pub type Reports = Vec<Option<[u8; TRAILER_LEN]>>;

/// How a walk entry is recognised: index, type, offset, size.
pub(crate) fn identity(step: WalkStep<'_>) -> (usize, u32, u32, u32) {
    (step.section.index, step.section.entry.image_type.raw(), step.flash_offset(), step.size())
}

/// The image's firmware version against the adapter's stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionChange {
    /// Newer.
    Upgrade,
    /// The same: only sections whose CRC differs are written.
    Same,
    /// Older (allowed by `allow_downgrade`).
    Downgrade,
    /// The adapter reports no stored version (nothing to downgrade from).
    NoneOnFlash,
    /// The two versions cannot be ordered (allowed by `allow_downgrade`).
    Unordered,
}

/// What the walk will do with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Written.
    Flash,
    /// The adapter already holds it: its REPORT of the region equals the section's trailer.
    SkipSame,
    /// The walk does not flash it.
    SkipUnsupported,
}

/// One entry of the plan, in directory order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedSection {
    /// The entry.
    #[serde(flatten)]
    pub section: SectionRef,
    /// The op-type used in op-type mode (`null`: none on Skyhawk).
    pub optype: Option<u32>,
    /// Flash offset (offset mode address).
    pub offset: u32,
    /// `pad_size`.
    pub bytes: u32,
    /// `optype` is 0xFFFF: written without a CRC query (ufi-firmware.md §2.8 step 4).
    pub old_image: bool,
    /// What the walk will do.
    pub action: Action,
    /// Why.
    pub reason: &'static str,
}

pub(crate) const REASON_NO_OPTYPE: &str =
    "no Skyhawk op-type for this section type (optype 0xffff and not in the type map); be2net skips it too";
pub(crate) const REASON_OLD_IMAGE: &str =
    "old-format entry (optype 0xffff): written without a CRC query, as be2net does";
pub(crate) const REASON_FORCE: &str = "force: written even if the adapter already holds it";
pub(crate) const REASON_SAME: &str = "the adapter's CRC of the region equals the section's trailer";
pub(crate) const REASON_DIFFERS: &str = "the adapter's CRC of the region differs from the section's trailer";
pub(crate) const REASON_BAD_BOOT: &str =
    "the trailer on flash matches, but the adapter's CRC of the boot section does not: it is damaged";

/// The plan for flashing one image on one adapter: everything decided before anything is
/// written, computed once by [`plan`] and carried out as it is by [`super::flash_ufi`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlashPlan {
    /// The adapter as read.
    pub adapter: AdapterState,
    /// The image's firmware version (`ver_data` of its 0xA0 entry, else the header's version).
    pub image_version: String,
    /// The image's version against the adapter's stored one.
    pub version_change: VersionChange,
    /// The policy the plan was made with.
    pub policy: Policy,
    /// Both drivers' compatibility rules (ocetool follows Linux; FreeBSD's view is reported).
    pub compatibility: CompatReport,
    /// Every directory entry in directory order.
    pub sections: Vec<PlannedSection>,
    /// How the walk addresses the flash.
    pub mode: FlashMode,
    /// The sections to write, in the order the walk writes them (positions in `sections`).
    pub order: Vec<usize>,
    /// Whether that order keeps a bootable copy at every step.
    pub safety: Safety,
}

impl FlashPlan {
    /// The entries that will be written, in write order.
    pub fn candidates(&self) -> impl Iterator<Item = &PlannedSection> + '_ {
        self.order.iter().map(|&i| &self.sections[i])
    }

    /// Bytes the walk writes.
    pub fn max_bytes(&self) -> u64 {
        self.candidates().map(|s| u64::from(s.bytes)).sum()
    }

    /// True when the plan was made from `image`: the same entries at the same places.
    pub fn matches(&self, image: &UfiImage<'_>) -> bool {
        self.sections
            .iter()
            .map(|p| (p.section.index, p.section.image_type.raw(), p.offset, p.bytes))
            .eq(walk(image).map(identity))
    }
}

/// The plan for `image` on `adapter` under `policy`, computed without touching the device.
///
/// Refused (in this order): an image the Linux compatibility rule rejects (always; nothing
/// relaxes it), a chip ocetool cannot flash ([`check_chip`]), an adapter state read for another
/// image, a section that ends past the 32-bit flash address space, without `allow_downgrade` an
/// older or unordered firmware version, in op-type mode a layout other than the one on flash
/// (each section would land where the directory on flash puts its op type), and without `force`
/// a write order that cannot keep a bootable copy ([`Safety::Unsafe`]).
pub fn plan(image: &UfiImage<'_>, adapter: &AdapterState, policy: Policy) -> Result<FlashPlan, FlashError> {
    let target = image.target();
    let compat_adapter = compat::Adapter { chip: adapter.chip, asic_rev: adapter.asic_rev };
    compat::check_linux(target, compat_adapter).map_err(ImageError::from)?;
    check_chip(adapter.chip)?;
    if !adapter.read_for(image) {
        return Err(FlashError::PlanMismatch);
    }
    let steps: Vec<WalkStep<'_>> = walk(image).collect();
    let sections = steps
        .iter()
        .zip(&adapter.reports)
        .map(|(step, report)| planned(step, policy, *report, &adapter.flash))
        .collect::<Result<Vec<_>, _>>()?;
    let image_version = image.firmware_version().unwrap_or_else(|| image.version());
    let version_change = version_change(&image_version, &adapter.stored);
    if !policy.allow_downgrade {
        match version_change {
            VersionChange::Downgrade => {
                return Err(ImageError::Downgrade { image: image_version, stored: adapter.stored.clone() }.into());
            }
            VersionChange::Unordered => {
                return Err(
                    ImageError::VersionUnordered { image: image_version, stored: adapter.stored.clone() }.into()
                );
            }
            VersionChange::Upgrade | VersionChange::Same | VersionChange::NoneOnFlash => {}
        }
    }
    if adapter.mode == FlashMode::OpType {
        check_op_type_layout(&sections, &adapter.flash)?;
    }
    let pieces = pieces(&steps, &sections, &adapter.flash);
    let new_dir = (image.directory_offset() as u64).checked_sub(image.payload_base() as u64).map(|a| a as u32);
    let WriteOrder { order, safety } = order::order(&adapter.flash, &pieces, new_dir);
    if let (Safety::Unsafe { reason }, false) = (&safety, policy.force) {
        return Err(FlashError::UnsafeOrder { reason: reason.clone() });
    }
    Ok(FlashPlan {
        adapter: adapter.clone(),
        image_version,
        version_change,
        policy,
        compatibility: compat::assess(target, compat_adapter),
        sections,
        mode: adapter.mode,
        order,
        safety,
    })
}

/// Orders the image's version against the stored one.
pub fn version_change(image: &str, stored: &str) -> VersionChange {
    if stored.trim().is_empty() {
        return VersionChange::NoneOnFlash;
    }
    match version::compare(image, stored) {
        Some(Ordering::Greater) => VersionChange::Upgrade,
        Some(Ordering::Equal) => VersionChange::Same,
        Some(Ordering::Less) => VersionChange::Downgrade,
        None => VersionChange::Unordered,
    }
}

/// The first flash address past the 32-bit space the commands' `offset` fields can name.
const ADDRESS_SPACE_END: u64 = 1 << 32;

/// One entry's action from the adapter's REPORT of its region (`None`: not asked).
pub(crate) fn planned(
    step: &WalkStep<'_>,
    policy: Policy,
    report: Option<[u8; TRAILER_LEN]>,
    flash: &OnFlash,
) -> Result<PlannedSection, FlashError> {
    let section = SectionRef { index: step.section.index, image_type: step.section.entry.image_type };
    let end = step.section.entry.end();
    if end > ADDRESS_SPACE_END {
        return Err(FlashError::SectionPastAddressSpace { section, end });
    }
    let damaged_boot = flash.directory.as_ref().is_some_and(|d| {
        d.boot.iter().any(|b| {
            b.state == BootState::Bad
                && b.region.section.image_type == section.image_type
                && (b.region.offset, b.region.bytes) == (step.flash_offset(), step.size())
        })
    });
    let (action, reason) = if step.is_skipped() {
        (Action::SkipUnsupported, REASON_NO_OPTYPE)
    } else if step.old_image {
        (Action::Flash, REASON_OLD_IMAGE)
    } else if policy.force {
        (Action::Flash, REASON_FORCE)
    } else if report != Some(step.trailer()) {
        (Action::Flash, REASON_DIFFERS)
    } else if damaged_boot {
        (Action::Flash, REASON_BAD_BOOT)
    } else {
        (Action::SkipSame, REASON_SAME)
    };
    Ok(PlannedSection {
        section,
        optype: step.optype.map(|o| o.raw()),
        offset: step.flash_offset(),
        bytes: step.size(),
        old_image: step.old_image,
        action,
        reason,
    })
}

/// In op-type mode the adapter writes each section at the start of its op type's region in the
/// directory on flash: every section to write must have exactly that place.
fn check_op_type_layout(sections: &[PlannedSection], flash: &OnFlash) -> Result<(), FlashError> {
    let Some(dir) = &flash.directory else { return Ok(()) };
    for s in sections.iter().filter(|s| s.action == Action::Flash) {
        let on_flash = dir
            .directory
            .entries_in_use()
            .map(|(_, e)| e)
            .find(|e| e.effective_optype().map(|o| o.raw()) == s.optype && s.optype.is_some());
        let same = on_flash.is_some_and(|e| (e.offset, e.pad_size) == (s.offset, s.bytes));
        if !same {
            return Err(FlashError::LayoutNeedsOffsetMode {
                section: s.section,
                offset: s.offset,
                on_flash: on_flash.map(|e| (e.offset, e.pad_size)),
            });
        }
    }
    Ok(())
}

/// The image's sections as the order sees them: those to write, those already on flash, and
/// whether one holds a cookie below the directory on flash.
fn pieces(steps: &[WalkStep<'_>], sections: &[PlannedSection], flash: &OnFlash) -> Vec<Piece> {
    let old_dir = flash.directory.as_ref().and_then(|d| d.address).unwrap_or(0);
    steps
        .iter()
        .zip(sections)
        .enumerate()
        .filter(|(_, (_, p))| p.action != Action::SkipUnsupported)
        .map(|(pos, (step, p))| Piece {
            pos,
            region: Region { section: p.section, offset: p.offset, bytes: p.bytes },
            write: p.action == Action::Flash,
            preempts: p.section.image_type != ImageType::UfiDir && holds_cookie_below(step, old_dir),
        })
        .collect()
}

/// True when the section's bytes hold a cookie at a 32-byte step of flash below `limit`.
fn holds_cookie_below(step: &WalkStep<'_>, limit: u32) -> bool {
    let start = step.flash_offset();
    if start >= limit {
        return false;
    }
    let first = (SCAN_STEP as u32 - start % SCAN_STEP as u32) % SCAN_STEP as u32;
    let data = step.section.data;
    (first as usize..data.len())
        .step_by(SCAN_STEP)
        .take_while(|&i| start as u64 + (i as u64) < u64::from(limit))
        .any(|i| CookieForm::detect(&data[i..]).is_some())
}
