//! The flash plan: everything decided before anything is written — compatibility, the version
//! policy, and what the walk will do with each directory entry.

use std::cmp::Ordering;

use serde::Serialize;

use super::check_chip;
use super::error::FlashError;
use super::report::SectionRef;
use crate::compat::{self, CompatReport};
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
///   The CRC query is still sent: it is also how the walk learns whether the firmware takes
///   offset mode (ufi-firmware.md §2.8 step 5). `force` relaxes nothing else: an incompatible
///   image is always refused, a downgrade still needs `allow_downgrade`, and sections without a
///   Skyhawk op-type are still skipped.
///
/// The same version needs neither: the walk then writes only sections whose CRC differs, which
/// for an image already on flash is none (`changed: false`), and for an earlier interrupted
/// flash of this image is exactly what is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Policy {
    /// Allow an older (or unordered) firmware version.
    pub allow_downgrade: bool,
    /// Rewrite sections whose CRC already matches.
    pub force: bool,
}

/// What the plan needs to know about the adapter (all read-only queries; see
/// [`super::read_adapter`]).
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
    /// Written whatever the adapter holds.
    Flash,
    /// Written unless the adapter's CRC equals the section's trailer (decided by the REPORT
    /// query the walk sends first, or by [`super::check_crcs`] for a dry run).
    FlashIfChanged,
    /// The adapter already holds it (known only after the REPORT query).
    SkipSame,
    /// The walk does not flash it.
    SkipUnsupported,
}

/// One entry of the plan, in walk order.
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
pub(crate) const REASON_IF_CHANGED: &str = "written unless the adapter's CRC already matches the section's trailer";
pub(crate) const REASON_SAME: &str = "the adapter's CRC of the region equals the section's trailer";
pub(crate) const REASON_DIFFERS: &str = "the adapter's CRC of the region differs from the section's trailer";

/// The plan for flashing one image on one adapter.
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
    /// Every directory entry in walk order.
    pub sections: Vec<PlannedSection>,
}

impl FlashPlan {
    /// The entries that may be written (`Flash` or `FlashIfChanged`).
    pub fn candidates(&self) -> impl Iterator<Item = &PlannedSection> + '_ {
        self.sections.iter().filter(|s| matches!(s.action, Action::Flash | Action::FlashIfChanged))
    }

    /// Bytes the walk writes at most.
    pub fn max_bytes(&self) -> u64 {
        self.candidates().map(|s| u64::from(s.bytes)).sum()
    }

    /// True when the plan was made from `image`: the same entries at the same places.
    pub fn matches(&self, image: &UfiImage<'_>) -> bool {
        let mut steps = walk(image);
        self.sections.iter().all(|p| {
            steps.next().is_some_and(|s| {
                s.section.index == p.section.index
                    && s.section.entry.image_type == p.section.image_type
                    && s.flash_offset() == p.offset
                    && s.size() == p.bytes
            })
        }) && steps.next().is_none()
    }
}

/// The plan for `image` on `adapter` under `policy`, computed without touching the device.
///
/// Refused (in this order): an image the Linux compatibility rule rejects (always; nothing
/// relaxes it), a chip ocetool cannot flash ([`check_chip`]), a section that ends
/// past the 32-bit flash address space, and without `allow_downgrade` an older or unordered
/// firmware version.
pub fn plan(image: &UfiImage<'_>, adapter: &AdapterState, policy: Policy) -> Result<FlashPlan, FlashError> {
    let target = image.target();
    let compat_adapter = compat::Adapter { chip: adapter.chip, asic_rev: adapter.asic_rev };
    compat::check_linux(target, compat_adapter).map_err(ImageError::from)?;
    check_chip(adapter.chip)?;
    let sections = walk(image).map(|step| planned(&step, policy)).collect::<Result<Vec<_>, _>>()?;
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
    Ok(FlashPlan {
        adapter: adapter.clone(),
        image_version,
        version_change,
        policy,
        compatibility: compat::assess(target, compat_adapter),
        sections,
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

pub(crate) fn planned(step: &WalkStep<'_>, policy: Policy) -> Result<PlannedSection, FlashError> {
    let section = SectionRef { index: step.section.index, image_type: step.section.entry.image_type };
    let end = step.section.entry.end();
    if end > ADDRESS_SPACE_END {
        return Err(FlashError::SectionPastAddressSpace { section, end });
    }
    let (action, reason) = if step.is_skipped() {
        (Action::SkipUnsupported, REASON_NO_OPTYPE)
    } else if step.old_image {
        (Action::Flash, REASON_OLD_IMAGE)
    } else if policy.force {
        (Action::Flash, REASON_FORCE)
    } else {
        (Action::FlashIfChanged, REASON_IF_CHANGED)
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
