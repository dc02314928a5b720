//! Flashing firmware over the mailbox: what the adapter's flash holds, the plan, the write order
//! that keeps a bootable copy, the Skyhawk UFI walk and the progress observer (ufi-firmware.md
//! §2.8, §3).
//!
//! A `fw update` is three calls, so a caller can show the plan and ask before anything changes:
//!
//! 1. [`read_adapter`]: everything read from the adapter, read-only — chip (PCI IDs), ASIC
//!    revision, running and stored versions, the flash directory it boots from and its boot
//!    sections' CRC checks ([`OnFlash`]), and its REPORT of every region the image would write
//!    (the CRC diff);
//! 2. [`plan`]: a pure function of the image, that state and the [`Policy`] — compatibility,
//!    version policy, each entry's [`Action`], and the write order that keeps a bootable copy
//!    at every step ([`order`](self#the-write-order)), or a refusal;
//! 3. [`flash_ufi`]: carries the plan out, reporting to a [`FlashObserver`], ending in a
//!    [`FlashReport`].
//!
//! ```no_run
//! # fn demo<F: oce_pci::PciFunction>(mbox: &mut oce_mailbox::BootstrapMailbox<F>, file: &[u8])
//! # -> Result<(), oce_firmware::FlashError> {
//! use oce_firmware::UfiImage;
//! use oce_firmware::flash::{self, NoProgress, Policy};
//!
//! let image = UfiImage::parse(file)?;
//! let adapter = flash::read_adapter(mbox, &image)?;
//! let plan = flash::plan(&image, &adapter, Policy::default())?;
//! let report = flash::flash_ufi(mbox, &image, &plan, &mut NoProgress)?;
//! assert_eq!(report.reset_required, report.running != report.stored);
//! # Ok(()) }
//! ```
//!
//! # The write order
//!
//! be2net writes the sections in directory order. When the image lays its sections out where
//! the adapter's current directory keeps its boot sections, that order overwrites both boot
//! copies before the new directory is written, and a stop in between leaves an adapter that
//! fails POST. The plan instead orders the writes so that the old or the new firmware boots
//! after every prefix, or refuses (see `order.rs` for the exact rule).
//!
//! The image is borrowed throughout (typically a read-only memory map): each 32 KiB chunk is
//! copied once into the command buffer and once into DMA memory, nothing else.

mod error;
mod observer;
mod onflash;
mod order;
mod plan;
mod report;
mod skyhawk;
mod target;

#[cfg(test)]
mod tests;

use oce_mailbox::commands::{GetFwVersion, QueryFirmwareConfig};
use oce_mailbox::{BootstrapMailbox, MailboxError};
use oce_pci::{Chip, ConfigSpace, PciFunction, ids};

use crate::ufi::UfiImage;
use crate::walk::walk;

pub use error::FlashError;
pub use observer::{FlashObserver, NoProgress};
pub use onflash::{BOOT_TYPES, BootSection, BootState, Bootable, OnFlash, OnFlashDirectory, Region};
pub use order::Safety;
pub use plan::{Action, AdapterState, FlashPlan, PlannedSection, Policy, Reports, VersionChange, plan, version_change};
pub use report::{FlashMode, FlashReport, Outcome, SectionOutcome, SectionRef};
pub use skyhawk::CHUNK;

/// Refuses a chip ocetool does not flash: only Skyhawk (OCe14000) takes the UFI walk.
///
/// Lancer is refused: be2net downloads its `.grp` file as an object with WRITE_OBJECT
/// (`lancer_fw_download`, ufi-firmware.md §4), a path ocetool does not implement; ocetool drives
/// OCe14000 (Skyhawk) adapters only. BE3 is refused: be2net flashes it with a different walk over
/// a fixed flash map (`be_flash_BEx`, ufi-firmware.md §2.6–§2.7: table offsets, NC-SI version
/// gate, PHY gate), which ocetool does not implement; running the Skyhawk walk there would write
/// the wrong places. BE2 is refused as FreeBSD refuses it ("Flashing not supported for BE2 yet.",
/// §1.5).
pub fn check_chip(chip: Chip) -> Result<(), FlashError> {
    match chip {
        Chip::Skyhawk => Ok(()),
        Chip::Lancer => Err(FlashError::UnsupportedChip {
            chip,
            reason: "Lancer adapters are not supported; ocetool flashes OCe14000 (Skyhawk) adapters only",
        }),
        Chip::Be3 => Err(FlashError::UnsupportedChip {
            chip,
            reason: "BE3 firmware is flashed with be2net's fixed-flash-map walk, which ocetool does not implement",
        }),
        Chip::Be2 => Err(FlashError::UnsupportedChip {
            chip,
            reason: "BE2 flashing is refused, as FreeBSD refuses it (its g2 images use another walk)",
        }),
    }
}

/// Config-space offset of the vendor and device IDs (PCI header).
const CFG_ID: u16 = 0x00;

/// The chip of the mailbox's function, from its PCI IDs (`oce_pci::ids`).
pub fn read_chip<F: PciFunction>(mbox: &BootstrapMailbox<F>) -> Result<Chip, FlashError> {
    let word = mbox
        .function()
        .config()
        .read32(CFG_ID)
        .map_err(|e| FlashError::Device { during: "reading the PCI IDs", source: MailboxError::Pci(e) })?;
    let (vendor, device) = (word as u16, (word >> 16) as u16);
    ids::identify(vendor, device).map(|k| k.chip).ok_or(FlashError::UnknownDevice { vendor, device })
}

/// Everything [`plan`] needs from the adapter for `image`, read-only: chip, ASIC revision
/// (QUERY_FIRMWARE_CONFIG), versions (GET_FW_VERSION), the flash directory the adapter boots
/// from with its boot sections' checks (looked for where the image puts its own), and the
/// adapter's REPORT of every region the image would write. A chip ocetool does not flash is
/// refused before any flash query.
pub fn read_adapter<F: PciFunction>(
    mbox: &mut BootstrapMailbox<F>,
    image: &UfiImage<'_>,
) -> Result<AdapterState, FlashError> {
    let chip = read_chip(mbox)?;
    check_chip(chip)?;
    let config = mbox
        .execute(&QueryFirmwareConfig)
        .map_err(|source| FlashError::Device { during: "QUERY_FIRMWARE_CONFIG", source })?;
    let versions =
        mbox.execute(&GetFwVersion).map_err(|source| FlashError::Device { during: "GET_FW_VERSION", source })?;
    let (flash, mode, reports) = survey(mbox, image)?;
    Ok(AdapterState {
        chip,
        asic_rev: config.asic_rev(),
        running: versions.running,
        stored: versions.on_flash,
        flash,
        mode,
        reports,
        read_for: walk(image).map(plan::identity).collect(),
    })
}

/// The flash half of [`read_adapter`], over any [`target::FlashTarget`].
pub(crate) fn survey<T: target::FlashTarget + ?Sized>(
    dev: &mut T,
    image: &UfiImage<'_>,
) -> Result<(OnFlash, FlashMode, plan::Reports), FlashError> {
    let at = image.directory_offset().checked_sub(image.payload_base()).and_then(|a| u32::try_from(a).ok());
    let flash = onflash::read_on_flash(dev, at.unwrap_or(0))
        .map_err(|source| FlashError::Device { during: "reading the flash directory", source })?;
    let (mode, reports) = skyhawk::survey(dev, image, &flash)?;
    Ok((flash, mode, reports))
}

/// The flash as the adapter holds it, without an image: the directory at flash address 0 (where
/// ocetool's images and the emulator put it; real firmware's place is unknown, ufi-firmware.md
/// §8) and its boot sections' checks. Read-only; what `fw verify`, `doctor` and `reset` check.
pub fn read_flash<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<OnFlash, FlashError> {
    onflash::read_on_flash(mbox, 0)
        .map_err(|source| FlashError::Device { during: "reading the flash directory", source })
}

/// Carries out `plan` (which must have been made from `image`): the sections it writes, in its
/// write order, then reads the versions. See [`FlashObserver`] for progress and stopping.
pub fn flash_ufi<F: PciFunction, O: FlashObserver + ?Sized>(
    mbox: &mut BootstrapMailbox<F>,
    image: &UfiImage<'_>,
    plan: &FlashPlan,
    observer: &mut O,
) -> Result<FlashReport, FlashError> {
    skyhawk::run(mbox, image, plan, observer)
}
